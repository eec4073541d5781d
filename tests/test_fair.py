"""Fair scheduling of the worker pool: calls served round-robin across sessions, newest run
first within a session, a closed run's waiting calls gone before anyone else's work."""

import concurrent.futures as cf
import threading

import numpy as np
import pytest
from conftest import logistic_labels, unit_ball_rows

from dpci import LogisticLoss
from dpci.experiments.bootstrap import iter_variability
from dpci.experiments.engine import fair_group
from dpci.experiments.fair import Dispatcher, FairQueue
from dpci.spec import ReleaseSpec


def test_round_robin_across_groups_and_newest_run_first_within_one():
    q = FairQueue()
    for i in range(3):
        q.push("A", "a-old", f"a-old{i}")
    q.push("A", "a-new", "a-new0")  # session A asked for something else since: served first
    q.push("A", "a-new", "a-new1")
    q.push("B", "b", "b0")
    q.push("C", "c", "c0")
    order = list(iter(q.pop, None))
    assert order == ["a-new0", "b0", "c0", "a-new1", "a-old0", "a-old1", "a-old2"]
    assert len(q) == 0


def test_the_group_served_least_recently_goes_first_even_with_a_new_run():
    q = FairQueue()
    q.push("A", "a1", "a1-0")
    assert q.pop() == "a1-0"  # A served
    q.drop("a1")  # A's job superseded: a new run of A's, and B arrives
    q.push("A", "a2", "a2-0")
    q.push("B", "b", "b0")
    assert [q.pop(), q.pop()] == ["b0", "a2-0"]  # A's new run does not jump the line


def test_a_dropped_run_leaves_nothing_behind_and_others_keep_their_turns():
    q = FairQueue()
    for i in range(3):
        q.push("A", "a", f"a{i}")
        q.push("B", "b", f"b{i}")
    assert q.pop() == "a0"
    assert q.drop("a") == ["a1", "a2"]
    assert list(iter(q.pop, None)) == ["b0", "b1", "b2"]
    assert q.drop("never") == []


def test_the_dispatcher_hands_calls_to_the_pool_in_turn_and_a_closed_run_is_cancelled():
    ran, gate = [], threading.Event()
    pool = cf.ThreadPoolExecutor(1)

    def work(name):
        gate.wait(10)
        ran.append(name)
        return name

    def submit(fn, args):
        return pool.submit(fn, *args), 1

    dispatcher = Dispatcher(submit, lambda: 1)  # one call in the pool at a time
    a = [dispatcher.ask("A", "run a", work, (f"a{i}",)) for i in range(4)]
    b = [dispatcher.ask("B", "run b", work, (f"b{i}",)) for i in range(2)]
    stale = [dispatcher.ask("C", "run c", work, (f"c{i}",)) for i in range(3)]
    dispatcher.drop("run c", stale)  # superseded before it ran: its calls never reach the pool
    gate.set()
    assert [f.result(10) for f in a + b] == ["a0", "a1", "a2", "a3", "b0", "b1"]
    assert ran == ["a0", "b0", "a1", "b1", "a2", "a3"]  # a0 was in the pool already; then turns
    assert all(f.cancelled() for f in stale)
    dispatcher.close()
    with pytest.raises(RuntimeError, match="shut down"):
        dispatcher.ask("A", "run a", work, ("late",))
    pool.shutdown()


def test_runs_in_sessions_give_the_same_numbers_as_one_run_alone():
    """Fair turns change only when a chunk is computed, never what it computes."""
    rng = np.random.default_rng(4)
    X = unit_ball_rows(rng, 600, 2)
    y = logistic_labels(rng, X, np.array([1.5, -1.0]))
    alone = None
    for alone in iter_variability(X, y, ReleaseSpec(loss=LogisticLoss()), n_replicates=256, random_state=3, n_jobs=1):
        pass
    results = {}

    def session(name, seed):
        with fair_group(name):
            last = None
            for last in iter_variability(
                X, y, ReleaseSpec(loss=LogisticLoss()), n_replicates=256, random_state=seed, n_jobs=2
            ):
                pass
            results[name] = last

    threads = [threading.Thread(target=session, args=(f"s{i}", 3 + i)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    np.testing.assert_array_equal(results["s0"].estimates, alone.estimates)
    assert {name: r.done for name, r in results.items()} == {"s0": 256, "s1": 256, "s2": 256}
