"""Run the pinned-number tests under every OpenBLAS kernel family this CPU can execute.

OpenBLAS chooses its kernels from the CPU it runs on, and ``OPENBLAS_CORETYPE`` overrides that
choice, so one machine can check that ``tests/test_pinned.py`` passes whatever kernel a user's
machine would pick (the pins were written under the Haswell/Zen kernels). A developer's check, not
part of CI: the CI machines set OPENBLAS_CORETYPE themselves where an old build misbehaves.

    python bench/blas_kernels.py            # every family below
    python bench/blas_kernels.py Haswell    # one
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ("Prescott", "Nehalem", "Sandybridge", "Haswell", "SkylakeX", "Zen")


def run(kernel: str) -> bool:
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel}
    env.pop("OPENBLAS_L2_SIZE", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_pinned.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    print(f"{kernel:12s} {'ok ' if done.returncode == 0 else 'FAILED'} {last}")
    return done.returncode == 0


if __name__ == "__main__":
    results = [run(k) for k in (sys.argv[1:] or KERNELS)]
    sys.exit(0 if all(results) else 1)
