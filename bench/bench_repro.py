"""Awan and Wang's repro-samples interval (dpci/methods/repro.py) on their own logistic design: coverage of the
slope beta1 and mean width per (n, eps) cell, beside the non-private Wald interval (docs/related-methods.md).

Their design (dpci.data.make_awan_wang): x = 2 B - 1, B ~ Beta(0.5, 0.5), beta = (0.5, 2), rows (1, x) / sqrt 2;
dpci's coefficients on these rows are sqrt 2 beta, converted back. Their published numbers (JASA; their
linear_logistic/results, 1,000 replicates, pure eps = 1): coverage 0.994 with mean width 0.969 at n = 1,000
and 0.996 with 0.615 at n = 2,000. Each release runs through ReleaseSpec and the registered method, searching
the slope's interval only (``ReproSamples(coefficients=(1,))``: each coefficient's projection is searched alone,
the intercept's would double the time).

    python bench/bench_repro.py --quick                        # n = 500, eps = 1, 10 reps
    python bench/bench_repro.py --n 1000 2000 --eps 1 --reps 100 --out /tmp/repro.csv
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cell_table import run_cells
from dpci import LogisticLoss, ReleaseSpec, methods, nonprivate_confidence_intervals
from dpci.data.awan_wang import AWAN_WANG_BETA, make_awan_wang
from dpci.methods.repro import ReproSamples

ALPHA = 0.05
SCALE = math.sqrt(2.0)  # dpci's coefficients are sqrt 2 beta on the scaled rows
KINDS = ("repro (Awan–Wang)", "Wald (non-private)")
# (coverage, mean width) of beta1 over their 1,000 replicates (linear_logistic/results/summary/Repro_Logistic-*)
PUBLISHED = {
    (1_000, 1.0): (0.994, 0.969),
    (2_000, 1.0): (0.996, 0.615),
    (1_000, 0.3): (0.994, 4.060),
    (1_000, 3.0): (0.990, 0.770),
    (500, 1.0): (0.989, 1.771),
}


def interval(kind: str, X, y, eps: float, rng) -> np.ndarray:
    """The (2, 2) interval for beta (their units) of one kind on one data set."""
    if kind == "Wald (non-private)":
        fit = nonprivate_confidence_intervals(X, y, LogisticLoss(), c=1e-12, alpha=ALPHA)
        return np.asarray(fit.conf_int) / SCALE
    release = ReleaseSpec("repro", "pure", eps, alpha=ALPHA).release(X, y, random_state=rng)
    return release.conf_int / SCALE


def cell(n: int, eps: float, reps: int, seed: int, kinds, log) -> list[dict]:
    hits = {k: [] for k in kinds}
    widths = {k: [] for k in kinds}
    seconds = dict.fromkeys(kinds, 0.0)
    for r in range(reps):
        X, y = make_awan_wang(n, random_state=np.random.default_rng([seed, n, r]))
        for i, k in enumerate(kinds):
            rng = np.random.default_rng([seed, n, r, int(1000 * eps), i])
            start = time.process_time()
            bounds = interval(k, X, y, eps, rng)
            seconds[k] += time.process_time() - start
            hits[k].append(bounds[1, 0] <= AWAN_WANG_BETA[1] <= bounds[1, 1])
            widths[k].append(bounds[1, 1] - bounds[1, 0])
        if log and (r + 1) % 10 == 0:
            print(f"n={n} eps={eps}: {r + 1}/{reps}", file=log, flush=True)
    rows = []
    for k in kinds:
        cover = float(np.mean(hits[k]))
        published = PUBLISHED.get((n, eps), (None, None)) if k.startswith("repro") else (None, None)
        rows.append(
            dict(
                n=n,
                epsilon=eps,
                method=k,
                reps=reps,
                coverage_beta1=cover,
                mc_se=math.sqrt(cover * (1 - cover) / reps),
                mean_width=float(np.mean(widths[k])),
                median_width=float(np.median(widths[k])),
                cpu_s=seconds[k] / reps,
                published_coverage=published[0],
                published_width=published[1],
            )
        )
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="n = 500, eps = 1, 10 repetitions")
    p.add_argument("--reps", type=int, default=100, help="repetitions per cell (100: coverage SE about 0.02)")
    p.add_argument("--n", type=int, nargs="*", default=[1_000, 2_000])
    p.add_argument("--eps", type=float, nargs="*", default=[1.0])
    p.add_argument("--methods", nargs="*", default=list(KINDS), choices=KINDS)
    p.add_argument("--seed", type=int, default=2303)
    p.add_argument("--log", type=Path, help="progress lines go here (default: stderr)")
    p.add_argument("--out", type=Path, help="write the table as CSV")
    a = p.parse_args(argv)
    methods.register(ReproSamples(coefficients=(1,)), replace=True)  # opt-in: not registered by default
    if a.quick:
        a.n, a.eps, a.reps = [500], [1.0], 10
    cells = [(n, eps) for eps in a.eps for n in a.n]
    run_cells(cells, lambda log, n, eps: cell(n, eps, a.reps, a.seed, a.methods, log), a.log, a.out, len(a.methods))


if __name__ == "__main__":
    main()
