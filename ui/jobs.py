"""Background jobs for interactive front ends: run a progress generator in a thread,
keep its latest state, and cancel it between steps.

A user interface starts a :class:`Job` for an ``iter_*`` generator of :mod:`dpci.experiments.bootstrap`
or :mod:`dpci.experiments.sweeps` and polls ``job.latest`` to redraw; changing an input cancels the
job: the generator is closed at its next step (between chunks), and a run of the shared worker
pool that the job is waiting for stops waiting at once (:func:`dpci.experiments.engine.cancel_scope`)
and cancels its pending chunks. What dpci warns its user of while a job runs is kept on the job
(``job.warnings``) for the page to show. No UI code here.
"""

from __future__ import annotations

import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator

from dpci.exceptions import PrivacyLeakWarning, UnderCoverageWarning, WideIntervalWarning
from dpci.experiments.engine import Cancelled, cancel_scope

#: What dpci says to its user (intervals likely to under-cover, no useful interval, a bound read from the
#: data): raised in a job, a page shows it. Other warnings (numerical ones) go to the server's log.
SHOWN_WARNINGS = (UnderCoverageWarning, WideIntervalWarning, PrivacyLeakWarning)
_THREAD = threading.local()  # .sink: the list of the job running in this thread, if any
_LOGGED: set = set()  # SHOWN_WARNINGS raised outside any job, logged once each
_ROUTING = threading.Lock()


def route_warnings() -> None:
    """Send SHOWN_WARNINGS raised in a job's thread to that job rather than to the server's log.

    Up to Python 3.13 the warning filters and ``warnings.showwarning`` are one per process, so a
    ``catch_warnings`` block in a job's thread would take other threads' warnings too, and, ending while
    another job's block is open, restore the wrong state. Instead one ``showwarning`` (installed again if
    anything replaced it) hands each warning to the job of the thread that raised it. SHOWN_WARNINGS are
    let through every time (an "always" filter: a second sweep with the same settings says it again);
    outside a job each is logged once, as Python's default filter does."""
    with _ROUTING:
        shown = warnings.showwarning
        if not getattr(shown, "routes_job_warnings", False):

            def showwarning(message, category, filename, lineno, file=None, line=None):
                sink = getattr(_THREAD, "sink", None)
                if issubclass(category, SHOWN_WARNINGS):
                    text = str(message)
                    if sink is not None:
                        if text not in sink:
                            sink.append(text)
                        return
                    if (category, text) in _LOGGED:
                        return
                    _LOGGED.add((category, text))
                shown(message, category, filename, lineno, file, line)

            showwarning.routes_job_warnings = True  # type: ignore[attr-defined]
            warnings.showwarning = showwarning
        for category in SHOWN_WARNINGS:
            if not any(f[:3] == ("always", None, category) for f in warnings.filters):
                warnings.filterwarnings("always", category=category)


class Job:
    """Consume ``make()`` (a generator factory) in a daemon thread.

    Attributes read by the UI: ``latest`` (the last yielded state, or None), ``done``,
    ``error`` (a message, or None), ``warnings`` (each distinct message of the SHOWN_WARNINGS raised in
    the job's thread, in order), ``started`` and ``finished_at`` (perf_counter times).
    """

    def __init__(
        self, key, make: Callable[[], Iterator], name: str = "dpci-job", alive: Callable[[], bool] | None = None
    ):
        self.key = key
        self._alive = alive  # polled between steps: False stops the job (its user has gone)
        self.latest = None
        self.error = None
        self.warnings: list[str] = []
        self.done = False
        self.cancelled = False
        self.started = time.perf_counter()
        self.finished_at = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(make,), name=name, daemon=True)
        self._thread.start()

    def _should_stop(self) -> bool:
        return self._stop.is_set() or (self._alive is not None and not self._alive())

    def _run(self, make):
        gen = None
        route_warnings()
        _THREAD.sink = self.warnings
        try:
            with cancel_scope(self._should_stop):  # checked while the generator waits for workers
                gen = make()
                for state in gen:
                    self.latest = state
                    if self._should_stop():
                        self.cancelled = True
                        break
        except Cancelled:
            self.cancelled = True
        except (ValueError, FileNotFoundError) as err:
            self.error = str(err)
        except Exception as err:  # noqa: BLE001 - reported to the user as a message, never as a traceback
            self.error = f"{type(err).__name__}: {err}"
            self.details = traceback.format_exc()
        finally:
            if gen is not None and hasattr(gen, "close"):
                gen.close()
            _THREAD.sink = None
            self.done = True
            self.finished_at = time.perf_counter()

    def cancel(self):
        self._stop.set()

    def wait(self, timeout=None) -> bool:
        self._thread.join(timeout)
        return self.done

    @property
    def elapsed(self) -> float:
        return (self.finished_at or time.perf_counter()) - self.started


class JobSlot:
    """Holds at most one job per key kind: asking for a different key cancels the old job."""

    def __init__(self, alive: Callable[[], bool] | None = None):
        self.job: Job | None = None
        self.alive = alive  # handed to every job (see Job)

    def ensure(self, key, make: Callable[[], Iterator]) -> Job:
        if self.job is not None and self.job.key == key and not (self.job.cancelled or self.job.error):
            return self.job
        if self.job is not None:
            self.job.cancel()
        self.job = Job(key, make, alive=self.alive)
        return self.job

    def cancel(self):
        if self.job is not None:
            self.job.cancel()
