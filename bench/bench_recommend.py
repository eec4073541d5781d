"""Speed of dpci.recommend_c (target: at most 0.1 s) against one scikit-learn fit on Adult, in one run.

Cold: the first call for a (d, noise kind), which builds the public reference and the quantile table
(cached for the process); warm: every later call (what the app's sidebar pays for a new setting, before
its own cache). Median of repeats; the guard fails (exit 1) when a warm call exceeds 0.1 s.

    python bench/bench_recommend.py
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_core import median_seconds
from dpci.data import load_adult
from dpci.recommend import recommend_c

GUARD_SECONDS = 0.1
CASES = [  # (method, notion, budget, estimand): the paper's four methods, both estimands
    ("objective", "pure", 1.0, "regularised"),
    ("output", "pure", 1.0, "regularised"),
    ("objective", "zcdp", 0.5, "unregularised"),
    ("output", "zcdp", 0.5, "unregularised"),
    ("naive", "pure", 1.0, "regularised"),
    ("wu", "pure", 1.0, "regularised"),
]


def main() -> int:
    data = load_adult(d=10)
    X, y = data.X, data.y
    n, d = X.shape
    c = 1e-3
    ref = median_seconds(lambda: LogisticRegression(C=1 / (2 * c * n), fit_intercept=False).fit(X, y), 7)
    print(f"Adult: n = {n}, d = {d} (with constant); reference: one scikit-learn fit, {ref * 1e3:.1f} ms")
    print(f"{'method':<12}{'notion':<8}{'estimand':<15}{'c':>9}{'cold ms':>9}{'warm ms':>9}{'x ref':>7}")
    worst = 0.0
    warnings.simplefilter("ignore")
    for method, notion, budget, estimand in CASES:

        def call(method=method, notion=notion, budget=budget, estimand=estimand):
            return recommend_c(n, d, method=method, privacy=notion, budget=budget, estimand=estimand)

        start = time.perf_counter()
        rec = call()
        cold = time.perf_counter() - start
        warm = median_seconds(call, 5)
        worst = max(worst, warm)
        print(
            f"{method:<12}{notion:<8}{estimand:<15}{rec.c:>9.2g}{cold * 1e3:>9.0f}{warm * 1e3:>9.0f}{warm / ref:>7.2f}"
        )
    verdict = "ok" if worst <= GUARD_SECONDS else "TOO SLOW"
    print(f"slowest warm call: {worst * 1e3:.0f} ms (guard {GUARD_SECONDS * 1e3:.0f} ms): {verdict}")
    return 0 if worst <= GUARD_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
