"""A class moving the Explorer's ε slider at once, simulated at the library level.

Each simulated user is a thread that does what the app does for one browser session: at every move of
the ε slider (one stop left or right, within 0.3-2, every 1.5-2.5 s, for ``--seconds``), its job slot asks
for the variability interval of the new settings (Adult, d = 10, objective perturbation, c = 1e-3, the
bootstrap's seed 0, at most 10,000 replicates, two worker processes at low priority), which cancels the
job it had. Afterwards, the time from each user's last move to their variability interval being done.

Two ways of serving the class, in one run:

* ``before``: what the app once did: each session its own job of 10,000 replicates, calls to
  the worker pool first come, first served (with ``--before ROOT``, a checkout of that code is imported
  instead, so the engine is the old one too);
* ``after``: a server-wide board of jobs (a result being computed is joined, a finished one shown at once),
  the bootstrap stopping at endpoints ±2% of the width, and the pool's calls served round-robin across
  users (``ui.jobs.JobBoard``, ``dpci.experiments.stopping``, ``dpci.experiments.fair``);

and ``dask``: ``after`` again, its chunks on a two-worker ``distributed.LocalCluster`` (as ``DPCI_SCHEDULER``
sends the app's).

    python bench/bench_classroom.py                           # users 1, 3, 6, 10, 30; 60 s of moves
    python bench/bench_classroom.py --users 30 --seconds 60 --modes after dask
    python bench/bench_classroom.py --before /tmp/wt-before   # the old code, imported from a checkout
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EPSILON_RANGE = (0.3, 2.0)  # within a visitor's demo budget, as in tests/e2e/test_classroom_load.py
WAIT_AT_MOST = 300.0  # seconds after the last move; later counts as never


def simulate(users: int, seconds: float, mode: str, seed: int = 7) -> list[float]:
    """Times (s) from each user's last move to their interval done (``inf``: not within WAIT_AT_MOST)."""
    from threadpoolctl import threadpool_limits

    from dpci import LogisticLoss, ReleaseSpec
    from dpci.data import load_adult
    from dpci.experiments.bootstrap import iter_variability, warm_up_workers
    from dpci.notions import EPSILONS
    from ui.jobs import JobSlot

    threadpool_limits(limits=1)  # as the app's server (ui/background.py)
    data = load_adult(d=10)
    X, y = data.X, data.y
    after = mode != "before"
    board = None
    if after:
        from ui.jobs import JobBoard

        board = JobBoard()
    address = None
    if mode == "dask":  # a two-worker cluster on this machine, one thread each, as the compose recipe's workers
        from distributed import LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        address = cluster.scheduler_address
    else:
        warm_up_workers(2)
    grid = [e for e in EPSILONS if EPSILON_RANGE[0] <= e <= EPSILON_RANGE[1]]
    rng = random.Random(seed)
    slots = []
    for u in range(users):
        kw = dict(board=board, kind="variability", group=f"user {u}") if after else {}
        slots.append(JobSlot(**kw))

    def ask(slot, epsilon):
        extra = dict(precision=0.02) if after else {}
        key = ("adult", 10, "objective", "pure", epsilon, 1e-3, 0, 10_000, extra.get("precision"))

        def make():
            return iter_variability(
                X, y, ReleaseSpec(budget=epsilon, loss=LogisticLoss(), c=1e-3), n_replicates=10_000, random_state=0,
                n_jobs=2, low_priority=True, **extra,
            )  # fmt: skip

        if address is not None:
            from functools import partial

            from dpci.experiments.cluster import run_on

            slot.ensure(key, partial(run_on, address, make))
        else:
            slot.ensure(key, make)

    position = [grid.index(1.0)] * users
    last_move = [0.0] * users
    start = time.monotonic()
    for u, slot in enumerate(slots):
        ask(slot, grid[position[u]])  # each page load
        last_move[u] = time.monotonic()
    moves = sorted((start + rng.uniform(1.5, 2.5), u) for u in range(users))
    end = start + seconds
    while moves and moves[0][0] < end:
        at, u = moves.pop(0)
        time.sleep(max(0.0, at - time.monotonic()))
        step = rng.choice((-1, 1))
        if not 0 <= position[u] + step < len(grid):
            step = -step
        position[u] += step
        ask(slots[u], grid[position[u]])
        last_move[u] = time.monotonic()
        moves.append((time.monotonic() + rng.uniform(1.5, 2.5), u))
        moves.sort()
    done_after = [float("inf")] * users
    deadline = time.monotonic() + WAIT_AT_MOST
    while time.monotonic() < deadline and any(t == float("inf") for t in done_after):
        for u, slot in enumerate(slots):
            if done_after[u] == float("inf") and slot.job is not None and slot.job.done:
                done_after[u] = time.monotonic() - last_move[u]
        time.sleep(0.05)
    for slot in slots:
        slot.cancel()
    return done_after


def describe(times: list[float]) -> str:
    finite = sorted(times)
    within = sum(t <= 30 for t in finite) / len(finite)
    fmt = [("never" if t == float("inf") else f"{t:.1f}") for t in finite]
    median = statistics.median(finite)
    return (
        f"median {'never' if median == float('inf') else f'{median:.1f} s'}, worst {fmt[-1]} s, "
        f"{100 * within:.0f}% within 30 s"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, nargs="+", default=[1, 3, 6, 10, 30])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--modes", nargs="+", default=["before", "after", "dask"], choices=("before", "after", "dask"))
    parser.add_argument("--before", type=Path, default=None, help="a checkout of the code before shared results")
    parser.add_argument("--one", nargs=2, metavar=("MODE", "USERS"), help=argparse.SUPPRESS)  # a child run
    args = parser.parse_args()
    if args.one:  # one scenario in this process (a fresh engine and worker pool for each)
        times = simulate(int(args.one[1]), args.seconds, args.one[0])
        print(" ".join(f"{t:.3f}" for t in times))
        return
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; {args.seconds:.0f} s of slider moves")
    for mode in args.modes:
        root = args.before if mode == "before" and args.before else ROOT
        for users in args.users:
            env = dict(os.environ, PYTHONPATH=str(root))
            command = [sys.executable, str(Path(__file__).resolve()), "--seconds", str(args.seconds)]
            out = subprocess.run(
                command + ["--one", mode, str(users)], env=env, capture_output=True, text=True, cwd=root, check=False
            )
            if out.returncode:
                print(f"{mode}, {users} users: failed\n{out.stderr[-2000:]}")
                continue
            times = [float(t) for t in out.stdout.split()[-users:]]
            print(f"{mode:<7}{users:>3} users: {describe(times)}", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    if str(ROOT) not in sys.path and not os.environ.get("PYTHONPATH"):
        sys.path.insert(0, str(ROOT))
    main()
