"""The work no implementation of a private interval can skip, against one scikit-learn fit, in CPU time.

An interval of Wang, Kifer and Lee releases H and Sigma at the exact minimiser (Algorithms 2, 3 and 5): two
weighted Gram products over all rows in double precision (a single-precision product's rounding bound is
above the products' sensitivity), and before them a minimiser whose gradient norm is at most 1e-10, which
takes passes over the rows. This times, on the rows of ``bench_core.py --scaling`` (one BLAS thread, best
of REPEATS):

* ``fit``: scikit-learn's fit of the same model, the reference;
* ``grams``: the two products as the fastest BLAS call there is, one symmetric rank-k update (syrk) of the
  whole pre-scaled matrix each (the scaling itself not timed);
* ``passes``: the gradient passes the solver took for this data (``minimise_erm``'s steps, each at least
  one pass), each timed as one pass of its fused kernel;
* ``floor`` = grams + passes, and ``dpci``: one whole interval (objective perturbation, pure epsilon = 1).

Everything else an interval does (reading and checking the rows, the noise, the quantiles) comes on top of
the floor, so where ``floor / fit`` is near 1 an interval within one fit is out of reach.

    python bench/floor.py                      # n = 100,000, d in {10, 50, 200}
    python bench/floor.py --n 30000 --d 50
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPEATS = 5
C = 1e-3


def cpu_seconds(fn, repeats=REPEATS) -> float:
    """The least CPU time of ``repeats`` calls (one thread: what the call costs, whatever else runs)."""
    best = np.inf
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def floor_row(n: int, d: int) -> dict:
    import dpci
    from bench.bench_core import fit_seconds, scaling_data
    from dpci.solver import _loss_gradient, margin_rows, minimise_erm

    X, y = scaling_data(n, d)
    loss = dpci.LogisticLoss()
    A = margin_rows(X, y)
    AT = A.T
    theta = minimise_erm(A, loss, C).theta
    passes = minimise_erm(A, loss, C).n_iter + 1  # the first gradient, then one per step at least
    d1, d2 = loss.derivatives(theta @ AT)
    scaled = [np.ascontiguousarray(AT * np.sqrt(w)) for w in (d2, d1 * d1)]
    row = dict(n=n, d=d, passes=passes)
    row["fit"] = min(fit_seconds(X, y, C)[1] for _ in range(REPEATS))
    row["grams"] = sum(cpu_seconds(lambda s=s: s @ s.T) for s in scaled)  # NumPy hands s @ s.T to syrk
    row["passes_s"] = passes * cpu_seconds(lambda: _loss_gradient(AT, loss, theta))
    row["floor"] = row["grams"] + row["passes_s"]
    row["dpci"] = cpu_seconds(lambda: dpci.private_confidence_intervals(X, y, loss, budget=1.0, c=C, random_state=0))
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="*", default=[100_000])
    p.add_argument("--d", type=int, nargs="*", default=[10, 50, 200])
    args = p.parse_args(argv)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    print(f"{'n':>8}{'d':>5}{'fit ms':>8}{'grams':>8}{'passes':>10}{'floor':>8}{'/ fit':>7}{'dpci':>8}{'/ fit':>7}")
    for n in args.n:
        for d in args.d:
            r = floor_row(n, d)
            print(
                f"{n:8d}{d:5d}{r['fit'] * 1e3:8.1f}{r['grams'] * 1e3:8.1f}{r['passes']:4d} {r['passes_s'] * 1e3:5.1f}"
                f"{r['floor'] * 1e3:8.1f}{r['floor'] / r['fit']:7.2f}{r['dpci'] * 1e3:8.1f}{r['dpci'] / r['fit']:7.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
