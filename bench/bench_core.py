"""Speed of one full private interval against one scikit-learn fit (issues 2 and 26).

The reference is one ``LogisticRegression(C=1/(2 c n), fit_intercept=False)`` fit with
default settings on the same rows. One full private interval = input checks + fit + both
private matrices + m = 10,000 Monte Carlo samples, timed twice: as
``dpci.private_confidence_intervals`` (labels -1/+1) and as the estimator's ``fit``
(``PrivateLogisticRegression`` / ``PrivateHuberSVM`` without ``classes=``, which learns the
labels from y).

The machine may be shared, so the timings are interleaved: each round times the reference fit
right before each release, and a release's ratio is the median over the rounds of its time over
that reference fit's (the ratio of the minima beside it is the least disturbed by other work).

    python bench/bench_core.py                     # Adult, d = 10 (+ constant)
    python bench/bench_core.py --check             # exit 1 if a ratio on Adult exceeds 0.5
    python bench/bench_core.py --root ../old-tree  # time another checkout's dpci (before/after)
    python bench/bench_core.py --threads 1         # BLAS and OpenMP on one thread, for both
    python bench/bench_core.py --kddcup            # also KDD Cup 99, n = 450,000, d = 10
    python bench/bench_core.py --scaling --quick   # the scaling table, n <= 100,000 (a couple of minutes)
    python bench/bench_core.py --scaling           # n in {1e4, 1e5, 1e6}, d in {10, 50, 200} (longer)
    python bench/bench_core.py --scaling --against ../old/dpci-root   # and another checkout, interleaved
    python bench/bench_core.py --scaling --n 1000000 --d 10           # one row of the table

The scaling table times one interval (logistic loss, c = 1e-3, m = 10,000, both mechanisms, both
notions) on synthetic rows in the unit ball (``make_synthetic_logistic``, a constant column), each
against a scikit-learn fit timed just before it in the same process, on one BLAS thread for both.
With ``--against``, both checkouts are loaded side by side and each release is timed in turn with
each, so that the old and the new code meet the same load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

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
LIMIT = 0.5  # target: one interval in at most half a scikit-learn fit (Adult)


def seconds(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_seconds(fn, repeats: int) -> float:
    """Median seconds of ``repeats`` calls of ``fn`` (the other bench scripts' timer)."""
    return statistics.median(seconds(fn) for _ in range(repeats))


def bench(dpci, name, X, y, c, repeats):
    """Per (method, notion, loss): median seconds of the function and of the estimator, with the
    median of the reference fits timed beside them; prints the table and returns its rows."""
    from sklearn.linear_model import LogisticRegression

    n = len(X)

    def reference():
        LogisticRegression(C=1 / (2 * c * n), fit_intercept=False).fit(X, y)

    configs = []
    for loss in (dpci.LogisticLoss(), dpci.HuberLoss(0.5)):
        for mechanism, privacy, budget in METHODS:
            rng = np.random.default_rng(0)
            settings = dict(mechanism=mechanism, privacy=privacy, budget=budget, c=c, random_state=rng)
            if loss.name == "logistic":
                estimator = dpci.PrivateLogisticRegression(**settings)
            else:
                estimator = dpci.PrivateHuberSVM(h=loss.h, **settings)

            def function(loss=loss, settings=settings):
                dpci.private_confidence_intervals(X, y, loss, **settings)

            configs.append((mechanism, privacy, loss.name, function, lambda e=estimator: e.fit(X, y)))
    samples: dict[tuple, list[tuple[float, float, float]]] = {}
    for round_ in range(repeats + 1):  # round 0 warms up (lazy imports, caches) and is dropped
        for mechanism, privacy, loss_name, function, fit in configs:
            sample = (seconds(reference), seconds(function), seconds(fit))
            if round_ > 0:
                samples.setdefault((mechanism, privacy, loss_name), []).append(sample)
    refs = [s[0] for runs in samples.values() for s in runs]
    ref = statistics.median(refs)
    print(f"\n{name}: n = {n}, d = {X.shape[1]} (with constant), c = {c:g}, {repeats} rounds")
    print(
        f"reference: one scikit-learn LogisticRegression fit, median of {len(refs)}: {ref * 1e3:.1f} ms (min {min(refs) * 1e3:.1f})"
    )
    print("x ref: median over the rounds of the release's time over the reference fit's just before it; min: min/min")
    print(
        f"{'method':<18}{'loss':<10}{'fn ms':>8}{'x ref':>7}{'min':>6}{'fit ms':>8}{'x ref':>7}{'min':>6}{'paper s':>9}"
    )
    rows = []
    for (mechanism, privacy, loss_name), runs in samples.items():
        row = dict(method=f"{mechanism}/{privacy}", loss=loss_name)
        line = f"{mechanism + '/' + privacy:<18}{loss_name:<10}"
        for what, k in (("fn", 1), ("fit", 2)):
            row[what] = statistics.median(r[k] / r[0] for r in runs)
            line += f"{statistics.median(r[k] for r in runs) * 1e3:8.1f}{row[what]:7.2f}"
            line += f"{min(r[k] for r in runs) / min(r[0] for r in runs):6.2f}"
        paper = PAPER_TABLE3[name][(mechanism, privacy)][0 if loss_name == "logistic" else 1]
        rows.append(row)
        print(f"{line}{paper:9.2f}")
    return ref, rows


SCALING_N = (10_000, 100_000, 1_000_000)
SCALING_D = (10, 50, 200)
QUICK_N = (10_000, 100_000)


def scaling_data(n: int, d: int):
    """n rows of d features (the last a constant) in the unit ball, labels from a fixed theta of norm 2."""
    from dpci.data import make_synthetic_logistic

    theta = np.random.default_rng(d).standard_normal(d)
    return make_synthetic_logistic(n, 2.0 * theta / np.linalg.norm(theta), random_state=n + d)


def load_checkouts(roots):
    """``dpci`` imported from each root, with its own modules: [(name, package, modules)]. A call into one
    must run inside ``sys.modules.update(modules)`` (its lazy imports then find its own modules)."""
    import importlib

    loaded = []
    for root in roots:
        for name in [m for m in sys.modules if m == "dpci" or m.startswith("dpci.")]:
            del sys.modules[name]
        sys.path.insert(0, str(Path(root).resolve()))
        package = importlib.import_module("dpci")
        importlib.import_module("dpci.data")
        sys.path.pop(0)
        modules = {m: mod for m, mod in sys.modules.items() if m == "dpci" or m.startswith("dpci.")}
        loaded.append((str(root), package, modules))
    return loaded


def wall_and_cpu(fn) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call. On one thread the CPU time is what the call costs
    whatever else the machine runs (a busy machine gives it fewer turns, not more work)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def fit_seconds(X, y, c) -> tuple[float, float]:
    """Wall and CPU seconds of one scikit-learn fit of the same model (the reference)."""
    from sklearn.linear_model import LogisticRegression

    return wall_and_cpu(lambda: LogisticRegression(C=1 / (2 * c * len(X)), fit_intercept=False).fit(X, y))


def release_seconds(dpci, X, y, mechanism, privacy, budget, c) -> tuple[float, float]:
    """Wall and CPU seconds of one private interval (logistic loss, m = 10,000) with the package ``dpci``."""
    loss = dpci.LogisticLoss()
    settings = dict(mechanism=mechanism, privacy=privacy, budget=budget, c=c, random_state=0)
    return wall_and_cpu(lambda: dpci.private_confidence_intervals(X, y, loss, **settings))


def scaling_rows(checkouts, X, y, c, repeats):
    """For each method and checkout: the best of ``repeats`` rounds of (fit, release) wall and CPU
    seconds, each release timed right after a fit; the checkouts take turns within a round."""
    fit_seconds(X, y, c)  # warm-up
    rows = []
    for mechanism, privacy, budget in METHODS:
        best: dict[str, list[float]] = {}
        for round_ in range(repeats + 1):  # round 0 warms up (lazy imports) and is dropped
            for root, dpci, modules in checkouts:
                sys.modules.update(modules)
                sample = [*fit_seconds(X, y, c), *release_seconds(dpci, X, y, mechanism, privacy, budget, c)]
                if round_ > 0:
                    best[root] = [min(a, b) for a, b in zip(best.get(root, sample), sample)]
        keys = ("fit", "fit_cpu", "dpci", "dpci_cpu")
        rows += [dict(method=f"{mechanism}/{privacy}", root=root, **dict(zip(keys, t))) for root, t in best.items()]
    return rows


def scaling(checkouts, sizes, repeats):
    """Prints the scaling table, one (n, d) at a time, and returns its rows."""
    c, table = 1e-3, []
    code = {root: "new" if k == 0 else "old" for k, (root, _, _) in enumerate(checkouts)} if len(checkouts) > 1 else {}
    print(f"{'n':>9}{'d':>5}  {'method':<16}{'code':<5}{'fit ms':>9}{'dpci ms':>9}{'x fit':>7}{'CPU: x fit':>12}")
    for n, d in sizes:
        X, y = scaling_data(n, d)
        for row in scaling_rows(checkouts, X, y, c, repeats):
            row.update(n=n, d=d, code=code.get(row["root"], ""))
            table.append(row)
            print(
                f"{n:9d}{d:5d}  {row['method']:<16}{row['code']:<5}{row['fit'] * 1e3:9.1f}{row['dpci'] * 1e3:9.1f}"
                f"{row['dpci'] / row['fit']:7.2f}{row['dpci_cpu'] / row['fit_cpu']:12.2f}",
                flush=True,
            )
    return table


def scaling_main(args):
    import sklearn.linear_model  # noqa: F401 - loaded before the thread limit, which reaches only loaded libraries
    from threadpoolctl import threadpool_limits

    roots = [args.root] + ([args.against] if args.against else [])
    checkouts = load_checkouts(roots)
    threadpool_limits(args.threads or 1)
    ns = args.n or (QUICK_N if args.quick else SCALING_N)
    sizes = [(n, d) for n in ns for d in args.d or SCALING_D]
    repeats = args.repeats if args.repeats_given else (2 if args.quick else 3)
    print(
        f"one interval against one scikit-learn fit, {args.threads or 1} BLAS thread(s), best of {repeats}; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    warnings.simplefilter("ignore")
    scaling(checkouts, sizes, repeats)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15, help="timed rounds (medians over them)")
    parser.add_argument("--kddcup", action="store_true", help="also KDD Cup 99 (needs ../shared/data)")
    parser.add_argument("--check", action="store_true", help=f"exit 1 if a ratio on Adult exceeds {LIMIT}")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1], help="the dpci checkout")
    parser.add_argument(
        "--threads",
        type=int,
        help="BLAS and OpenMP threads for both (default: theirs); 1 is steadier on a busy machine",
    )
    parser.add_argument("--scaling", action="store_true", help="the scaling table (synthetic rows, d up to 200)")
    parser.add_argument("--quick", action="store_true", help="with --scaling: n up to 100,000 only")
    parser.add_argument("--against", type=Path, help="with --scaling: also time this checkout, interleaved")
    parser.add_argument("--n", type=int, nargs="+", help="with --scaling: these n only")
    parser.add_argument("--d", type=int, nargs="+", help="with --scaling: these d only")
    args = parser.parse_args()
    args.repeats_given = "--repeats" in sys.argv
    if args.scaling:
        scaling_main(args)
        return
    sys.path.insert(0, str(args.root.resolve()))
    import sklearn.linear_model  # noqa: F401 - loaded before the thread limit, which reaches only loaded libraries

    import dpci
    from dpci.data import load_adult, load_kddcup

    if args.threads:
        from threadpoolctl import threadpool_info, threadpool_limits

        threadpool_limits(args.threads)
        print("threads:", ", ".join(f"{lib['internal_api']} {lib['num_threads']}" for lib in threadpool_info()))

    print(f"dpci from {Path(dpci.__file__).parent}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    warnings.simplefilter("ignore")  # the estimators warn that they learn the labels from y (on purpose here)
    adult = load_adult(d=10)
    _, rows = bench(dpci, "adult", adult.X, adult.y, 1e-3, args.repeats)
    if args.kddcup:
        kdd = load_kddcup(d=10)
        idx = np.random.default_rng(0).permutation(len(kdd.X))[:450_000]
        bench(dpci, "kddcup", kdd.X[idx], kdd.y[idx], 1e-3, max(3, args.repeats // 3))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    over = [
        f"{r['method']} {r['loss']} ({what} {r[what]:.2f})" for r in rows for what in ("fn", "fit") if r[what] > LIMIT
    ]
    if args.check and over:
        print(f"\nFAIL: more than {LIMIT} x the reference on Adult: {'; '.join(over)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
