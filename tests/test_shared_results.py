"""Results shared across sessions: one job per key whoever asks, a second asker joins the
running job, nobody left cancels it, finished results survive a restart through the ledger's database,
bit for bit."""

import threading
import time

import numpy as np
import pandas as pd
import pytest
from conftest import logistic_labels, unit_ball_rows

from dpci import LogisticLoss
from dpci.experiments import stored
from dpci.experiments.bootstrap import coverage, variability_intervals
from dpci.experiments.repeat import iter_repeated_releases
from dpci.experiments.sweeps import SweepProgress
from dpci.ledger.results import ResultStore
from dpci.spec import ReleaseSpec
from ui.jobs import Finished, JobBoard


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = unit_ball_rows(rng, 400, 2)
    return X, logistic_labels(rng, X, np.array([2.0, -1.0]))


def _counting(calls, steps=5, pause=0.0, gate=None):
    """A job factory that counts how often it is started; each step waits for ``gate`` if given."""

    def make():
        calls.append(1)
        for i in range(steps):
            if gate is not None:
                gate.wait(10)
            time.sleep(pause)
            yield i

    return make


def test_two_sessions_asking_for_the_same_result_compute_it_once():
    board, calls, gate = JobBoard(), [], threading.Event()
    first = board.join(("vi", 1), _counting(calls, gate=gate), holder="session A")
    second = board.join(("vi", 1), _counting(calls, gate=gate), holder="session B")
    assert second is first  # joined: the same job, its progress seen by both
    gate.set()
    assert first.wait(10) and first.latest == 4
    third = board.join(("vi", 1), _counting(calls), holder="session C")  # later: the finished result at once
    assert third is first and third.done
    assert len(calls) == 1 and board.started == 1
    other = board.join(("vi", 2), _counting(calls), holder="session A")  # another key: its own job
    assert other is not first and other.wait(10) and len(calls) == 2


def test_a_job_runs_while_someone_wants_it_and_is_cancelled_when_nobody_does():
    board, calls, gate = JobBoard(), [], threading.Event()
    job = board.join("k", _counting(calls, steps=1000, pause=0.01), holder="A")
    board.join("k", _counting(calls), holder="B")
    board.leave("k", "A")
    time.sleep(0.1)
    assert not job.done  # B still wants it
    board.leave("k", "B")
    assert job.wait(5) and job.cancelled
    again = board.join("k", _counting(calls, steps=2), holder="C")  # a cancelled job is not a result
    assert again is not job and again.wait(5) and again.latest == 1 and len(calls) == 2
    del gate


def test_a_new_job_is_wanted_from_its_first_step(monkeypatch):
    """The session that starts a job holds it before the job's thread runs: a job whose first step comes at
    once is not cancelled for want of a holder (a key nobody holds any more
    may be asked for again at once). The job here runs to its end inside ``join``, so the order is forced."""
    from ui import jobs

    def make():
        yield 0
        yield 1

    class Eager(jobs.Job):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.wait(5)

    monkeypatch.setattr(jobs, "Job", Eager)
    job = JobBoard().join("k", make, holder="A")
    assert job.done and not job.cancelled and job.latest == 1


def test_a_job_whose_sessions_have_all_gone_stops():
    board, calls, gone = JobBoard(), [], threading.Event()
    job = board.join("k", _counting(calls, steps=1000, pause=0.01), holder="A", alive=lambda: not gone.is_set())
    time.sleep(0.05)
    gone.set()  # the browser tab closed (past the grace period)
    assert job.wait(5) and job.cancelled


def test_pages_never_share_a_key_by_accident():
    board, calls = JobBoard(), []
    a = board.join("same", _counting(calls, steps=1), holder="A", kind="grid")
    b = board.join("same", _counting(calls, steps=1), holder="A", kind="cmp")
    assert a is not b and a.wait(5) and b.wait(5) and len(calls) == 2


def test_a_finished_result_outlives_the_server_through_the_database(tmp_path, data):
    X, y = data
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"

    def make():
        from dpci.experiments.bootstrap import iter_variability

        return iter_variability(X, y, ReleaseSpec(loss=LogisticLoss(), budget=1.0), n_replicates=64, random_state=9)

    def save(job):
        return stored.encode(job.latest, ["c is small: intervals may under-cover"])

    def load(payload):
        return stored.decode(payload), stored.decode_warnings(payload)

    board = JobBoard(store=ResultStore(url), save=save, load=load)
    job = board.join(("vi", "adult", 9), make, holder="A", kind="variability")
    assert job.wait(60) and job.latest.finished
    restarted = JobBoard(store=ResultStore(url), save=save, load=load)  # a new process, same database
    never = []
    again = restarted.join(("vi", "adult", 9), lambda: never.append(1) or iter(()), holder="B", kind="variability")
    assert isinstance(again, Finished) and again.done and never == []
    np.testing.assert_array_equal(again.latest.estimates, job.latest.estimates)  # bit for bit
    np.testing.assert_array_equal(again.latest.bounds, job.latest.bounds)
    assert again.latest.done == 64 and again.elapsed == job.latest.elapsed
    assert again.warnings == ["c is small: intervals may under-cover"]  # what dpci warned of comes back too
    assert restarted.join(("vi", "adult", 9), make, holder="B", kind="other") is not again  # the page's name counts


def test_states_round_trip_bit_for_bit(data):
    X, y = data
    vi = variability_intervals(X, y, ReleaseSpec(loss=LogisticLoss(), budget=1.0), n_replicates=40, random_state=1)
    cov = coverage(X, y, ReleaseSpec(loss=LogisticLoss(), budget=1.0, n_samples=200), n_replicates=8, random_state=1)
    repeat = None
    for repeat in iter_repeated_releases(
        [1.0, -0.5], 300, ReleaseSpec(loss=LogisticLoss(), n_samples=200), repetitions=2
    ):
        pass
    frame = pd.DataFrame({"method": ["objective", "output"], "n": [100, 200], "coverage": [0.951, np.nan]})
    sweep = SweepProgress(2, 2, frame, None, 8, 8, 1.5, {"n": (100, 200), "ε": 0.5})
    for state in (vi, cov, repeat, sweep):
        back = stored.decode(stored.encode(state))
        assert type(back) is type(state)
        for name, value in vars(state).items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(getattr(back, name), value)
            elif isinstance(value, pd.DataFrame):
                pd.testing.assert_frame_equal(getattr(back, name), value, check_exact=True)
            else:
                assert getattr(back, name) == value, name


def test_only_known_states_are_stored_and_a_huge_one_is_not_kept(tmp_path):
    with pytest.raises(TypeError, match="cannot store"):
        stored.encode({"a": 1})
    store = ResultStore(f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    assert store.put("k", "x", b"small") and store.get("k") == b"small"
    assert not store.put("big", "x", bytes(40_000_000)) and store.get("big") is None
    assert store.forget() == 1 and store.get("k") is None
