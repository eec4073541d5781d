"""Background jobs keep the latest state, finish, cancel between steps and report errors as text."""

import time

from ui.jobs import Job, JobSlot


def _counter(n, delay=0.0, fail_at=None):
    def make():
        for i in range(n):
            if i == fail_at:
                raise ValueError("bad input at step %d" % i)
            time.sleep(delay)
            yield i

    return make


def test_job_runs_to_the_end():
    job = Job("k", _counter(5))
    assert job.wait(5)
    assert job.latest == 4 and job.error is None and not job.cancelled


def test_slot_reuses_same_key_and_cancels_on_a_new_key():
    slot = JobSlot()
    first = slot.ensure("a", _counter(1000, delay=0.01))
    assert slot.ensure("a", _counter(3)) is first
    second = slot.ensure("b", _counter(3))
    assert second is not first
    assert first.wait(5) and first.cancelled and first.latest < 999
    assert second.wait(5) and second.latest == 2


def test_errors_become_messages():
    job = Job("k", _counter(5, fail_at=2))
    job.wait(5)
    assert job.error == "bad input at step 2" and job.latest == 1


def test_a_job_stops_when_its_user_has_gone():
    """An abandoned session's job stops at its next step and a later request restarts it."""
    connected = {"yes": True}
    slot = JobSlot(alive=lambda: connected["yes"])
    job = slot.ensure("a", _counter(1000, delay=0.01))
    while job.latest is None or job.latest < 3:
        time.sleep(0.005)
    connected["yes"] = False
    assert job.wait(5) and job.cancelled and job.latest < 999
    connected["yes"] = True
    again = slot.ensure("a", _counter(3))
    assert again is not job and again.wait(5) and again.latest == 2
