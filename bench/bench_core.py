"""Speed of one full private interval against one scikit-learn fit (issue 2).

The reference is one ``LogisticRegression(C=1/(2 c n), fit_intercept=False)`` fit with
default settings on the same rows, timed in the same run (median of repeats). One full
private interval = fit + both private matrices + m = 10,000 Monte Carlo samples.

    python bench/bench_core.py              # Adult, d = 10 (+ constant)
    python bench/bench_core.py --kddcup     # also KDD Cup 99, n = 450,000, d = 10
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpci import HuberLoss, LogisticLoss, private_confidence_intervals
from dpci.data import load_adult, load_kddcup

METHODS = [("objective", "pure", 1.0), ("output", "pure", 1.0), ("objective", "zcdp", 0.5), ("output", "zcdp", 0.5)]
PAPER_TABLE3 = {  # seconds, Section 7.8 (laptop, Python, L-BFGS)
    "adult": {
        ("objective", "pure"): (0.68, 3.03),
        ("output", "pure"): (0.72, 2.77),
        ("objective", "zcdp"): (0.72, 3.26),
        ("output", "zcdp"): (0.45, 2.89),
    },
    "kddcup": {
        ("objective", "pure"): (7.68, 38.03),
        ("output", "pure"): (7.39, 39.94),
        ("objective", "zcdp"): (6.83, 35.31),
        ("output", "zcdp"): (6.60, 34.48),
    },
}


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench(name, X, y, c, repeats):
    n = len(X)
    ref = median_time(lambda: LogisticRegression(C=1 / (2 * c * n), fit_intercept=False).fit(X, y), repeats)
    print(f"\n{name}: n = {n}, d = {X.shape[1]} (with constant), c = {c:g}")
    print(f"reference: one scikit-learn LogisticRegression fit, median of {repeats}: {ref * 1e3:.1f} ms")
    print(f"{'method':<22}{'loss':<10}{'ms':>8}{'x ref':>8}{'paper s':>9}")
    rows = []
    for loss in (LogisticLoss(), HuberLoss(0.5)):
        for mechanism, privacy, budget in METHODS:
            rng = np.random.default_rng(0)
            t = median_time(
                lambda loss=loss, mechanism=mechanism, privacy=privacy, budget=budget, rng=rng: (
                    private_confidence_intervals(X, y, loss, mechanism, privacy, budget, c=c, random_state=rng)
                ),
                repeats,
            )
            paper = PAPER_TABLE3[name][(mechanism, privacy)][0 if loss.name == "logistic" else 1]
            rows.append((f"{mechanism}/{privacy}", loss.name, t, t / ref, paper))
            print(f"{mechanism + '/' + privacy:<22}{loss.name:<10}{t * 1e3:8.1f}{t / ref:8.2f}{paper:9.2f}")
    return ref, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--kddcup", action="store_true", help="also KDD Cup 99 (needs ../shared/data)")
    args = parser.parse_args()
    adult = load_adult(d=10)
    bench("adult", adult.X, adult.y, 1e-3, args.repeats)
    if args.kddcup:
        kdd = load_kddcup(d=10)
        idx = np.random.default_rng(0).permutation(len(kdd.X))[:450_000]
        bench("kddcup", kdd.X[idx], kdd.y[idx], 1e-3, max(3, args.repeats // 3))


if __name__ == "__main__":
    main()
