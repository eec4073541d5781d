"""Coverage of every registered method at equal privacy on known-truth data.

Each repetition draws a fresh sample of n rows from a logistic model with known coefficients
(d features and a constant), releases every method's interval and checks it against the theta_0
that method targets (the ridge theta_0 at its c, or the unregularised theta: Method.estimand_c).
Pure-DP methods run at epsilon; zCDP methods at the rho that is (epsilon, delta)-DP (equal privacy),
and also at the paper's rho = epsilon^2/2 with --paper-rho.

    python bench/coverage_table.py                    # n = 20,000, d = 4, 200 repetitions
    python bench/coverage_table.py --reps 50 --out docs/coverage-table.md
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpci import LogisticLoss, ReleaseSpec, methods
from dpci.experiments.bootstrap import _last
from dpci.experiments.repeat import iter_repeated_releases
from dpci.experiments.sweeps import budget_for

THETA = (1.5, -1.0, 0.5, -0.3)


def table(n, d, epsilon, delta, reps, seed, paper_rho=False, kinds=None):
    theta = np.append(np.resize(THETA, d), 0.3)
    rows = []
    for name, notion in methods.pairs():
        if kinds and name not in kinds:
            continue
        budget = budget_for(notion, epsilon, None if paper_rho else delta)
        start = time.perf_counter()
        p = _last(
            iter_repeated_releases(
                theta,
                n,
                ReleaseSpec(name, notion, budget, loss=LogisticLoss(), n_samples=2_000),
                repetitions=reps,
                random_state=seed,
            )
        )
        private = p.frame[p.frame["kind"] == "private"]
        cov, se = p.coverage("private")
        per = private.groupby("coefficient")["covers"].mean()
        rows.append(
            dict(
                method=methods.describe(name, notion),
                budget=("ε = " if notion == "pure" else "ρ = ") + f"{budget:.4g}",
                coverage=cov,
                se=se,
                worst_coefficient=per.min(),
                mean_length=float((private["upper"] - private["lower"]).mean()),
                within_2se=bool(cov >= 0.95 - 2 * se),
                seconds=time.perf_counter() - start,
            )
        )
        print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--d", type=int, default=4)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--paper-rho", action="store_true", help="zCDP at rho = epsilon^2/2 instead of equal (eps, delta)")
    ap.add_argument("--methods", default=None, help="comma-separated method names (default: all registered)")
    ap.add_argument("--out", default=None, help="write the table as Markdown here")
    args = ap.parse_args(argv)
    kinds = args.methods.split(",") if args.methods else None
    frame = table(args.n, args.d, args.epsilon, args.delta, args.reps, args.seed, args.paper_rho, kinds)
    text = frame.to_string(index=False, float_format=lambda v: f"{v:.4g}")
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
