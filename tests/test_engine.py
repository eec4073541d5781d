"""The shared worker pool (dpci.experiments.engine) under concurrent use: many users changing their
settings at once, a worker killed mid-run, one run cancelled beside another, interpreter exit with
work in flight. Each test is bounded in time (the machine has 2 cores, shared)."""

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import logistic_labels, unit_ball_rows

from dpci import LogisticLoss, ReleaseSpec
from dpci.experiments import engine as engine_module
from dpci.experiments.bootstrap import iter_variability, variability_intervals, warm_up_workers
from dpci.experiments.engine import Cancelled, Engine, cancel_scope, get_engine
from ui.jobs import JobSlot

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts threads and pipes in /proc"),
    pytest.mark.serial,  # times exits and counts the threads of a process-wide pool: alone (tests/run.sh)
]


@pytest.fixture(scope="module")
def rows():
    """40,000 x 4 rows: 1.3 MB, so they reach the workers through a shared file."""
    rng = np.random.default_rng(8)
    n = 40_000
    X = np.column_stack([unit_ball_rows(rng, n, 3), np.full(n, 0.5)]) / np.sqrt(1.25)
    return X, logistic_labels(rng, X, np.array([2.0, -1.0, 0.5, 0.5]))


def _os_threads():
    return len(os.listdir("/proc/self/task"))


def _open_fds():
    return len(os.listdir("/proc/self/fd"))


def _processes():
    """{pid: (ppid, state)} of every process on the machine."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            table[int(entry)] = (int(fields[1]), fields[0])
    return table


def _zombie_descendants():
    """This process's descendants (workers are the forkserver's children) that are zombies."""
    table = _processes()
    family, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, (ppid, _) in table.items() if ppid in frontier} - family
        family |= frontier
    return sorted(pid for pid in family if table[pid][1] == "Z")


def _shared_files():
    return [name for folder in get_engine()._files.folders() if os.path.isdir(folder) for name in os.listdir(folder)]


def _quiet(timeout=30.0):
    """Wait (bounded) for runs started by earlier tests (e.g. an app test's job) to end."""
    deadline = time.monotonic() + timeout
    while get_engine()._active and time.monotonic() < deadline:
        time.sleep(0.2)


def _settle(baseline_threads, timeout=10.0):
    """Wait (bounded) for threads that are ending (cancelled jobs, the pool's warm-up) to go."""
    deadline = time.monotonic() + timeout
    while _os_threads() > baseline_threads and time.monotonic() < deadline:
        time.sleep(0.1)


SPEC08 = ReleaseSpec("objective", "pure", 0.8, loss=LogisticLoss())
SETTINGS = [ReleaseSpec("objective", "pure", b, loss=LogisticLoss()) for b in (0.5, 1.0, 2.0)] + [
    ReleaseSpec("output", "pure", b, loss=LogisticLoss()) for b in (0.8, 1.5)
]


@pytest.mark.slow  # over 15 s: -m 'not slow' leaves it out (CI runs it)
@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_six_users_changing_settings_all_get_their_final_results(rows):
    """Six simulated users each change a setting every 0.2-1 s for 15 s (the old job is cancelled
    and a new one started, as the app does), then leave one job each. All six finish, with the
    numbers of a single-process run, and nothing is left behind: threads, pipes, zombies, files."""
    X, y = rows
    kw = dict(n_replicates=600, n_jobs=2, low_priority=True)
    warm_up_workers(2)
    variability_intervals(X, y, SETTINGS[0], **dict(kw, n_replicates=64, random_state=0))  # everything started
    _quiet()
    _settle(_os_threads())
    threads0, fds0, files0 = _os_threads(), _open_fds(), set(_shared_files())

    users = 6
    slots = [JobSlot() for _ in range(users)]
    every_job, finals, errors = [], {}, []
    churn_until = time.monotonic() + 15.0

    def user(u):
        rng = random.Random(u)
        try:
            while time.monotonic() < churn_until:
                setting = rng.choice(SETTINGS)
                key = (u, setting.key)
                make = lambda s=setting, u=u: iter_variability(X, y, s, random_state=100 + u, **kw)  # noqa: E731
                every_job.append(slots[u].ensure(key, make))
                time.sleep(rng.uniform(0.2, 1.0))
            final = SETTINGS[u % len(SETTINGS)]
            finals[u] = final
            key = (u, "final")
            every_job.append(slots[u].ensure(key, lambda: iter_variability(X, y, final, random_state=100 + u, **kw)))
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    people = [threading.Thread(target=user, args=(u,)) for u in range(users)]
    for p in people:
        p.start()
    for p in people:
        p.join(30)
    assert not errors
    last_change = time.monotonic()
    deadline = last_change + 60
    for u in range(users):
        assert slots[u].job.wait(max(0.0, deadline - time.monotonic())), f"user {u}'s final job did not finish"
    finished_after = time.monotonic() - last_change
    for job in every_job:  # cancelled jobs stop waiting within a poll of their scope
        assert job.wait(10), "a cancelled job is still running"
    started, cancelled = len(every_job), sum(job.cancelled for job in every_job)
    assert cancelled >= 20  # most settings changed while their job ran
    assert all(job.error is None for job in every_job), [job.error for job in every_job if job.error][:3]

    for u in range(users):
        state = slots[u].job.latest
        assert state is not None and state.finished and not slots[u].job.cancelled
        expected = variability_intervals(X, y, finals[u], random_state=100 + u, **dict(kw, n_jobs=1))
        np.testing.assert_array_equal(state.estimates, expected.estimates)

    _settle(threads0)
    threads1, fds1, zombies = _os_threads(), _open_fds(), _zombie_descendants()
    print(
        f"\n{started} jobs started by 6 users, {cancelled} cancelled while running; the final six finished {finished_after:.1f} s after the last "
        f"change; threads {threads0} -> {threads1}, open fds {fds0} -> {fds1}, pool generation "
        f"{get_engine().generation}"
    )
    assert abs(threads1 - threads0) <= 5
    assert abs(fds1 - fds0) <= 10
    assert zombies == []
    assert set(_shared_files()) <= files0  # these runs are over: their rows' file is gone
    assert get_engine().workers_running()


@pytest.mark.slow  # over 3 s: the quick run (-m "not slow") stays well under 4 minutes
def test_a_killed_worker_is_replaced_once_and_both_runs_get_the_same_numbers(rows):
    """A worker killed under two runs breaks the pool: one new pool replaces it (the generation
    goes up by one, whichever run notices first), both runs resubmit their unfinished chunks there
    and get the numbers of a single-process run; the dead workers are reaped."""
    X, y = rows
    kw = dict(n_replicates=800, chunk_size=16)
    warm_up_workers(2)
    engine = get_engine()
    generation = engine.generation
    runs = [iter_variability(X, y, SPEC08, n_jobs=2, random_state=seed, **kw) for seed in (4, 5)]
    for _ in range(3):
        for run in runs:
            next(run)
    victim = engine.worker_pids()[0]
    os.kill(victim, signal.SIGKILL)
    lasts = [None, None]
    while not all(last is not None and last.finished for last in lasts):  # both consumed, interleaved
        for k, run in enumerate(runs):
            lasts[k] = next(run, lasts[k])
    for seed, last in zip((4, 5), lasts):
        expected = variability_intervals(X, y, SPEC08, n_jobs=1, random_state=seed, **kw)
        np.testing.assert_array_equal(last.estimates, expected.estimates)
    assert engine.generation == generation + 1
    assert victim not in engine.worker_pids() and len(engine.worker_pids()) == 2
    deadline = time.monotonic() + 10
    while _zombie_descendants() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _zombie_descendants() == []


def test_cancelling_one_run_does_not_disturb_another(rows):
    """The cancelled run's chunks are cancelled; the pool (same workers, same generation) and the
    other run's chunks are untouched."""
    X, y = rows
    kw = dict(n_replicates=500, n_jobs=2, chunk_size=16)
    warm_up_workers(2)
    engine = get_engine()
    generation, pids = engine.generation, engine.worker_pids()
    cancelled = iter_variability(X, y, SPEC08, random_state=1, **kw)
    survivor = iter_variability(X, y, SPEC08, random_state=2, **kw)
    for _ in range(3):
        next(cancelled), next(survivor)  # both runs have chunks in the pool
    cancelled.close()
    *_, last = survivor
    expected = variability_intervals(X, y, SPEC08, random_state=2, **dict(kw, n_jobs=1))
    np.testing.assert_array_equal(last.estimates, expected.estimates)
    assert engine.generation == generation and engine.worker_pids() == pids


@pytest.mark.slow  # over 3 s: the quick run (-m "not slow") stays well under 4 minutes
def test_a_cancel_scope_stops_a_run_waiting_for_a_busy_pool():
    """A job cancelled while its run waits for workers busy with long chunks stops within a poll,
    and its pending chunks are cancelled (not left for the workers)."""
    engine = Engine()
    try:
        engine.warm_up(1)
        stop = threading.Event()
        run = engine.ordered(time.sleep, [(1.0,)] * 6, workers=1)
        outcome = {}

        def consume():
            with cancel_scope(stop.is_set):
                try:
                    for _ in run:
                        pass
                except Cancelled:
                    outcome["cancelled_at"] = time.monotonic()

        thread = threading.Thread(target=consume)
        thread.start()
        time.sleep(0.3)
        stop.set()
        asked = time.monotonic()
        thread.join(5)
        assert outcome["cancelled_at"] - asked < 0.5
        start = time.monotonic()
        engine.warm_up(1)  # waits behind the chunks already handed to the worker (at most 2), not all 6
        assert time.monotonic() - start < 2.9
    finally:
        engine.shutdown(close=False)


@pytest.mark.slow  # over 3 s: the quick run (-m "not slow") stays well under 4 minutes
def test_idle_workers_take_the_first_call_and_busy_ones_leave_it_to_the_caller():
    """With idle workers a run's first call goes to them (computed in the caller's thread it took
    a core from them); while the pool is busy (another run's long calls) the caller computes it, so
    its first result does not wait for them."""
    engine = Engine()
    try:
        engine.warm_up(1)
        here = []
        idle = list(engine.ordered(pow, [(2, k) for k in range(4)], workers=1, local=lambda i: here.append(i) or 2**i))
        assert idle == [1, 2, 4, 8] and here == []
        other = engine.ordered(time.sleep, [(1.0,)] * 2, workers=1)
        thread = threading.Thread(target=lambda: list(other))
        thread.start()
        deadline = time.monotonic() + 5
        while not engine._busy() and time.monotonic() < deadline:
            time.sleep(0.01)
        busy = engine.ordered(pow, [(2, k) for k in range(3)], workers=1, local=lambda i: here.append(i) or 2**i)
        start = time.monotonic()
        assert next(busy) == 1 and time.monotonic() - start < 0.5  # not behind the 1 s calls
        assert here == [0]
        busy.close()
        thread.join(5)
    finally:
        engine.shutdown(close=False)


def test_large_rows_are_shared_through_one_file_deleted_after_the_last_run(rows):
    X, y = rows
    kw = dict(n_replicates=300, n_jobs=2, chunk_size=16)
    warm_up_workers(2)
    before = set(_shared_files())  # (another test's run may hold its own)
    a = iter_variability(X, y, SPEC08, random_state=1, **kw)
    b = iter_variability(X, y, SPEC08, random_state=2, **kw)  # the same rows: the same file
    next(a), next(b)
    assert len(set(_shared_files()) - before) == 1
    a.close()
    assert len(set(_shared_files()) - before) == 1  # b still needs it
    for _ in b:
        pass
    assert set(_shared_files()) - before == set()


EXIT_SCRIPT = """
import sys, threading, time
sys.path.insert(0, {root!r})
import numpy as np
from dpci import LogisticLoss, ReleaseSpec
from dpci.experiments.bootstrap import iter_variability, warm_up_workers
from dpci.experiments.engine import get_engine

rng = np.random.default_rng(0)
X = rng.uniform(-0.5, 0.5, size=(60_000, 4))
y = np.where(rng.uniform(size=60_000) < 0.5, 1.0, -1.0)

def run(seed):
    try:
        for _ in iter_variability(X, y, ReleaseSpec(loss=LogisticLoss()), n_replicates=100_000, n_jobs=2, random_state=seed,
                                  low_priority=True):
            pass
    except Exception as err:  # the engine refuses work once the interpreter exits
        print(type(err).__name__, file=sys.stderr)

state = {state!r}
if state == "runs in flight":  # four runs of 100,000 replicates, mid-way
    for seed in range(4):
        threading.Thread(target=run, args=(seed,), daemon=True).start()
    while len(get_engine().worker_pids()) < 2:
        time.sleep(0.05)
    time.sleep(1.0)
elif state == "workers starting":  # the app's warm-up at a first paint
    threading.Thread(target=warm_up_workers, args=(2,), daemon=True).start()
    time.sleep(0.3)
else:  # "idle": a run has finished, the workers wait for the next one
    warm_up_workers(2)
    for _ in iter_variability(X, y, ReleaseSpec(loss=LogisticLoss()), n_replicates=200, n_jobs=2):
        pass
print("workers", *get_engine().worker_pids(), flush=True)
"""


@pytest.mark.parametrize("state", ["runs in flight", "workers starting", "idle"])
@pytest.mark.slow  # over 4 s: the quick run (-m "not slow") stays under 4 minutes
def test_the_interpreter_exits_promptly_whatever_the_pool_is_doing(tmp_path, state):
    """The main thread ends with runs mid-way, with workers starting, or with idle workers: the
    exit handler cancels pending chunks and stops the workers, so the process ends within seconds
    (a server stops on SIGTERM), leaving no worker behind."""
    script = tmp_path / "exit_with_work.py"
    script.write_text(textwrap.dedent(EXIT_SCRIPT.format(root=str(ROOT), state=state)))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        said = time.monotonic()
        assert line.startswith("workers"), proc.stderr.read()
        proc.wait(timeout=30)
        took = time.monotonic() - said
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = proc.stderr.read()
    print(f"\n{state}: exited {took:.2f} s after its main thread's last line")
    assert took < 10
    assert "Traceback" not in stderr, stderr
    workers = [int(p) for p in line.split()[1:]]
    time.sleep(0.5)
    assert not any(Path(f"/proc/{pid}").exists() and _processes().get(pid, (0, "Z"))[1] != "Z" for pid in workers)


@pytest.mark.slow  # over 3 s: the quick run (-m "not slow") stays well under 4 minutes
def test_idle_workers_stop_and_the_next_run_starts_them_again(monkeypatch, rows):
    """After IDLE_SECONDS without a run the workers exit (memory goes back to the machine); the
    next run computes in its own thread while they start again, with the same numbers."""
    monkeypatch.setattr(engine_module, "IDLE_SECONDS", 0.5)
    engine = Engine()
    try:
        engine.warm_up(2)
        pids = engine.worker_pids()
        assert len(pids) == 2
        deadline = time.monotonic() + 10
        while engine.workers_running() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not engine.workers_running()
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(Path(f"/proc/{pid}").exists() for pid in pids)  # exited and reaped
        results = list(engine.ordered(pow, [(2, k) for k in range(20)], workers=2, local=lambda i: 2**i))
        assert results == [2**k for k in range(20)]
    finally:
        engine.shutdown(close=False)
