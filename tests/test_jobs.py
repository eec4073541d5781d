"""Background jobs keep the latest state, finish, cancel between steps, report errors as text and keep
what dpci warned of for their page."""

import threading
import time
import warnings

from dpci import UnderCoverageWarning, WideIntervalWarning
from dpci.exceptions import warn
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


def _warning(*pairs):
    """A job's generator that raises the warnings (category, message) given, one per step."""

    def make():
        for category, message in pairs:  # dpci's own through dpci.exceptions.warn, as the library raises them
            (warn if category.__module__ == "dpci.exceptions" else warnings.warn)(message, category, stacklevel=1)
            yield message

    return make


def test_a_jobs_warnings_are_kept_on_the_job_each_message_once(recwarn):
    """What dpci warns of inside a job reaches the job (for its page), once per message, and again in the
    next job; a numerical warning goes to the log as before, and so does one raised outside any job."""
    first = Job("k", _warning((UnderCoverageWarning, "c too small"), (UnderCoverageWarning, "c too small")))
    assert first.wait(5)
    shown = (UnderCoverageWarning, "c too small"), (WideIntervalWarning, "no useful c"), (RuntimeWarning, "overflow")
    second = Job("k", _warning(*shown))
    assert second.wait(5)
    assert first.warnings == ["c too small"]
    assert second.warnings == ["c too small", "no useful c"]  # said again in a later job, numerical one not kept
    warnings.warn("outside a job", UnderCoverageWarning, stacklevel=1)
    logged = [str(w.message) for w in recwarn]
    assert "overflow" in logged and "outside a job" in logged and "c too small" not in logged


def test_warnings_raised_in_other_threads_stay_out_of_a_running_job(recwarn):
    started, release = threading.Event(), threading.Event()

    def make():
        started.set()
        release.wait(5)
        warn("mine", UnderCoverageWarning)
        yield 1

    job = Job("k", make)
    started.wait(5)
    other = threading.Thread(target=lambda: warn("another user's", UnderCoverageWarning))
    other.start()
    other.join()
    release.set()
    assert job.wait(5) and job.warnings == ["mine"]
    assert [str(w.message) for w in recwarn] == ["another user's"]  # logged, as before


def test_a_jobs_warning_survives_another_threads_catch_warnings_block():
    """A page's rerun (another thread) that records or silences warnings while a job warns takes nothing
    from the job: Python's catch_warnings is process-wide, dpci's collection is per thread, so a
    sweep's under-coverage warning never goes into another page's ignore block."""
    inside, warned = threading.Event(), threading.Event()

    def page():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("ignore")
            inside.set()
            warned.wait(5)
        page.caught = caught

    def make():
        inside.wait(5)
        warn("c leaves objective perturbation little", UnderCoverageWarning)
        warned.set()
        yield 1

    other = threading.Thread(target=page)
    other.start()
    job = Job("k", make)
    assert job.wait(5)
    other.join(5)
    assert job.warnings == ["c leaves objective perturbation little"]
    assert page.caught == []
