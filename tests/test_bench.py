"""The benchmark scripts (bench/): each still imports (a script whose helper moved fails here, not the
next time someone measures), and the CPU accounting that
bench_app reports counts what it says."""

import importlib
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from bench.cpu import spent, usage

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in {"__init__", "reference_app"})  # a Streamlit page


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_benchmark_script_imports(name):
    module = importlib.import_module(f"bench.{name}")
    assert module.__doc__, f"bench/{name}.py says what it measures in its docstring"


@pytest.mark.serial  # a share of a core: on two processes the other test's load can take most of it
def test_cpu_usage_counts_a_busy_child_as_the_servers_worker():
    """A "server" that only waits, with one child that spins: the child's CPU over a second (up to a second)
    is counted as the workers', nearly none as the server's or the browser's (a Chromium that earlier
    browser tests of this process started may idle meanwhile)."""
    spin = "import time\nend = time.time() + 30\nwhile time.time() < end: pass"
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {spin!r}])"
    server = subprocess.Popen([sys.executable, "-c", parent])
    try:
        time.sleep(1.0)  # both processes started and the child spinning
        before = usage(server.pid)
        time.sleep(1.0)
        used = spent(before, usage(server.pid))
    finally:
        for child in psutil.Process(server.pid).children(recursive=True):
            child.kill()
        server.kill()
        server.wait()
    # at most the second of one core; at least a share of it when other tests keep both cores busy
    assert 0.25 <= used["workers"] <= 1.5, used
    assert used["server"] < 0.2 and used["browser"] < 0.2, used
