"""Bootstrap replicates on wide synthetic rows against one scikit-learn fit, in CPU time.

    python bench/bench_wide_bootstrap.py                        # n = 30,000, d = 50, 2,000 replicates, 2 workers
    python bench/bench_wide_bootstrap.py --root ../old-checkout # the same with another checkout's dpci

The rows are those of ``bench_core.py --scaling`` (a constant column, unit ball). Timed: one
``variability_intervals`` run of objective perturbation (pure, epsilon = 1, c = 1e-3), the worker
processes started beforehand. Reported beside the wall-clock time: the CPU seconds of this process
and its workers, which a machine busy with other work does not inflate the way it does wall time;
with idle cores, two workers take about half of it in wall time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import psutil

from dpci.spec import ReleaseSpec


def tree_cpu_seconds() -> float:
    """User + system CPU seconds of this process and its live descendants (the worker processes)."""
    from bench.cpu import seconds  # the repository is on sys.path once main() has run

    me = psutil.Process()
    return seconds([me, *me.children(recursive=True)])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=30_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--replicates", type=int, default=2_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1], help="the dpci checkout")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.bench_core import fit_seconds, scaling_data

    sys.path.insert(0, str(args.root.resolve()))
    from threadpoolctl import threadpool_limits

    import dpci
    from dpci.experiments.bootstrap import variability_intervals, warm_up_workers

    X, y = scaling_data(args.n, args.d)
    c = 1e-3
    with threadpool_limits(1):
        fits = [fit_seconds(X, y, c) for _ in range(5)]
    fit_wall, fit_cpu = min(f[0] for f in fits), min(f[1] for f in fits)
    warm_up_workers(args.jobs)
    time.sleep(3)  # the workers' start-up is not timed
    cpu, wall = tree_cpu_seconds(), time.perf_counter()
    variability_intervals(X, y, ReleaseSpec(loss=dpci.LogisticLoss(), method="objective", privacy="pure", budget=1.0, c=c), n_replicates=args.replicates, random_state=0, n_jobs=args.jobs)  # fmt: skip
    wall, cpu = time.perf_counter() - wall, tree_cpu_seconds() - cpu
    print(
        f"dpci from {Path(dpci.__file__).parent}: n = {args.n}, d = {args.d}, {args.replicates} replicates, "
        f"{args.jobs} workers\nfit: {fit_wall * 1e3:.1f} ms wall, {fit_cpu * 1e3:.1f} ms CPU (best of 5)\n"
        f"bootstrap: {wall:.2f} s wall = {wall / fit_wall:.0f} fits; {cpu:.2f} s CPU = {cpu / fit_cpu:.0f} fits' CPU "
        f"(/{args.jobs} workers: {cpu / args.jobs / fit_cpu:.0f})"
    )


if __name__ == "__main__":
    main()
