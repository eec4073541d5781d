"""Speed of the experiment engine against one scikit-learn fit.

Times, on the same rows and in the same run as the reference (one default
``LogisticRegression(C=1/(2 c n), fit_intercept=False)`` fit, the median of repeats taken before
and after every timed part, so that a change in the machine's load during the run shows up in the
reference too; the load average is printed at the start and the end):

* 10,000 private bootstrap replicates (variability intervals), objective perturbation,
  and the time until the first 200 are ready and the longest gap between progress updates;
* k = 1,000 coverage repetitions, each a full private interval with m = 10,000 samples.

    python bench/bench_engine.py                      # Adult, logistic regression
    python bench/bench_engine.py --loss huber
    python bench/bench_engine.py --kddcup --vi 2000   # KDD Cup 99, n = 450,000, d = 10
    python bench/bench_engine.py --jobs 2 --warm --k 0 --check   # the guards below (Adult, logistic)
    python bench/bench_engine.py --jobs 2 --warm --k 0 --precision 0.02   # stop at endpoints +-2% of the width

Guards (the engine stays pure NumPy: the per-replicate floor is accepted, and today's
figures must not get worse): on Adult with two workers, 10,000 variability replicates in at most
GUARDS["warm"] x one scikit-learn fit with the workers running, GUARDS["cold"] x when the run starts
them, and the first 200 in at most GUARDS["first 200"] x. Each is the figure measured when they were
set (about 210x, 250x and 12x) with 15% for the noise of a shared 2-core machine.

The reference fits run in scikit-learn's default setting (on KDD Cup 99 a fit takes 235 ms with
two BLAS threads and 133 ms with one, measured); the engine is timed with the main process as the
app's server runs it: one BLAS thread (``ui/background.py``), none left spinning from the reference
fits (an OpenBLAS thread busy-waits after each call, and took a core from the workers during the
first chunks: the first 200 replicates 20 ms later).

Peak memory: the largest total resident memory of this process and its joblib workers,
sampled every 50 ms from /proc (``/usr/bin/time -v`` sees only the main process).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.memory import tree_rss_mb
from dpci import ReleaseSpec
from dpci.data import load_adult, load_kddcup
from dpci.experiments.bootstrap import iter_coverage, iter_variability, warm_up_workers
from dpci.losses import get_loss

SETTLE = 0.3  # seconds for the reference fits' BLAS threads to stop spinning (OpenBLAS: ~0.1 s)


def reference_times(X, y, c, repeats=5):
    n = len(X)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        LogisticRegression(C=1 / (2 * c * n), fit_intercept=False).fit(X, y)
        times.append(time.perf_counter() - start)
    return times


class PeakMemory(threading.Thread):
    """Samples tree_rss_mb(this process) until stopped; ``peak`` is the largest total seen."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak, self._stop_event = 0.0, threading.Event()

    def run(self):
        while not self._stop_event.wait(0.05):
            self.peak = max(self.peak, tree_rss_mb(os.getpid()))

    def stop(self):
        self._stop_event.set()
        self.join()
        return self.peak


@contextmanager
def app_like():
    """The main process as the app's server runs it, with one BLAS thread (``ui/background.py``),
    and its BLAS threads from the reference fits idle (see the module's docstring)."""
    with threadpool_limits(limits=1, user_api="blas"):
        time.sleep(SETTLE)
        yield


def timed_progress(gen, first_k):
    start = time.perf_counter()
    last, first_at, gaps, progress = start, None, [], None
    for progress in gen:
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
        if first_at is None and progress.done >= first_k:
            first_at = now - start
    return time.perf_counter() - start, first_at, max(gaps), progress


GUARDS = {"warm": 240.0, "cold": 290.0, "first 200": 14.0}


def check(total: float, first: float, ref: float, warm: bool) -> list[str]:
    """The guards a run broke (see the module's docstring), in words."""
    broken = []
    limit = GUARDS["warm" if warm else "cold"]
    if total / ref > limit:
        broken.append(f"10,000 replicates took {total / ref:.0f}x a fit, more than the guard's {limit:.0f}x")
    if first / ref > GUARDS["first 200"]:
        broken.append(f"the first 200 took {first / ref:.1f}x a fit, more than the guard's {GUARDS['first 200']:.0f}x")
    return broken


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loss", choices=("logistic", "huber"), default="logistic")
    parser.add_argument("--kddcup", action="store_true")
    parser.add_argument("--vi", type=int, default=10_000, help="variability replicates")
    parser.add_argument("--k", type=int, default=1_000, help="coverage repetitions (0 skips)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--mechanism", default="objective")
    parser.add_argument("--warm", action="store_true", help="start the worker processes before timing")
    parser.add_argument("--precision", type=float, default=None, help="stop at this relative endpoint error")
    parser.add_argument("--check", action="store_true", help="exit 1 when a guard is broken (Adult, 10,000)")
    args = parser.parse_args()
    memory = PeakMemory()
    memory.start()
    if args.warm and args.jobs != 1:
        warm_up_workers(args.jobs)
    c = 1e-3
    if args.kddcup:
        ds = load_kddcup(d=10)
        idx = np.random.default_rng(0).permutation(ds.n)[:450_000]
        X, y, name = ds.X[idx], ds.y[idx], "kddcup"
    else:
        ds = load_adult(d=10)
        X, y, name = ds.X, ds.y, "adult"
    loss = get_loss(args.loss)
    print(
        f"{name}: n = {len(X)}, d = {X.shape[1]} (with constant), loss = {loss.name}, jobs = {args.jobs}"
        + (" (workers started before timing)" if args.warm and args.jobs != 1 else "")
        + f"; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    fits = reference_times(X, y, c)
    spec = ReleaseSpec(args.mechanism, "pure", 1.0, loss=loss, c=c)
    kw = dict(random_state=0, n_jobs=args.jobs)
    with app_like():
        vi = timed_progress(iter_variability(X, y, spec, n_replicates=args.vi, precision=args.precision, **kw), 200)
    fits += reference_times(X, y, c)
    if args.k:
        with app_like():
            cov = timed_progress(iter_coverage(X, y, spec, n_replicates=args.k, **kw), 50)
        fits += reference_times(X, y, c)
    ref = statistics.median(fits)
    print(
        f"reference: one scikit-learn LogisticRegression fit: {ref * 1e3:.1f} ms "
        f"(median of {len(fits)}; {min(fits) * 1e3:.1f}-{max(fits) * 1e3:.1f} ms)"
    )
    total, first, gap, last = vi
    print(
        f"{last.done} variability replicates: {total:.2f} s = {total / ref:.0f}x reference "
        f"({total / last.done * 1e3:.2f} ms each); first 200 after {first:.3f} s = {first / ref:.1f}x; "
        f"longest gap between updates {gap:.3f} s; {last.summary()}"
    )
    broken = check(total, first, ref, args.warm) if args.check else []
    if args.k:
        total, first, gap, p = cov
        print(
            f"{args.k} coverage repetitions (m = 10,000): {total:.2f} s = {total / ref:.0f}x reference; "
            f"longest gap {gap:.3f} s; coverage {p.overall_coverage[0]:.3f} +/- {p.overall_coverage[1]:.3f}"
        )
    print(f"peak resident memory, main process and workers together: {memory.stop():.0f} MB")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    if args.check:
        if args.kddcup or args.loss != "logistic" or args.vi != 10_000 or args.precision or args.jobs < 2:
            sys.exit("--check holds for Adult, logistic, --vi 10000, --jobs 2 and no --precision only")
        print("guards: " + ("; ".join(broken) if broken else "all kept"))
        sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
