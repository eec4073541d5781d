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
from collections import OrderedDict
from collections.abc import Callable, Iterator
from functools import partial

from dpci.exceptions import collect_warnings
from dpci.experiments.engine import Cancelled, cancel_scope, fair_group


class Job:
    """Consume ``make()`` (a generator factory) in a daemon thread.

    Attributes read by the UI: ``latest`` (the last yielded state, or None), ``done``,
    ``error`` (a message, or None), ``warnings`` (each distinct message of dpci's warnings raised in
    the job's thread, in order: :func:`dpci.exceptions.collect_warnings`), ``started`` and ``finished_at`` (perf_counter times).
    """

    def __init__(
        self,
        key,
        make: Callable[[], Iterator],
        name: str = "dpci-job",
        alive: Callable[[], bool] | None = None,
        on_done: Callable[[Job], None] | None = None,
        group=None,
    ):
        self.key = key
        self.group = group  # whose turn its chunks take at the worker pool (a session; see fair_group)
        self._alive = alive  # polled between steps: False stops the job (its user has gone)
        self._on_done = on_done  # called in the job's thread as it ends
        self.latest = None
        self.error = None
        self.warnings: list[str] = []
        self._said: list[Warning] = []  # dpci's warnings raised in the job's thread (collect_warnings)
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
        try:
            # dpci's warnings raised in this thread are kept here (Python's warning machinery is one per
            # process: a page's catch_warnings in another thread would take them); the page shows them
            with cancel_scope(self._should_stop), fair_group(self.group), collect_warnings() as self._said:
                gen = make()
                for state in gen:
                    self._keep()
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
            self._keep()
            self.finished_at = time.perf_counter()
            if self._on_done is not None:
                self._on_done(self)
            self.done = True

    def _keep(self):
        """``warnings``: the texts of dpci's warnings raised so far, each once, in order."""
        for text in map(str, self._said):
            if text not in self.warnings:
                self.warnings.append(text)

    def cancel(self):
        self._stop.set()

    def wait(self, timeout=None) -> bool:
        self._thread.join(timeout)
        return self.done

    @property
    def elapsed(self) -> float:
        return (self.finished_at or time.perf_counter()) - self.started


class Finished:
    """A job's stand-in for a result finished earlier (kept in memory or read from a store)."""

    error = None
    done = True
    cancelled = False

    def __init__(self, key, latest, warnings=()):
        self.key, self.latest, self.warnings = key, latest, list(warnings)
        self.elapsed = float(getattr(latest, "elapsed", 0.0))  # the time it took when it was computed

    def cancel(self):
        pass


class JobBoard:
    """Jobs shared by every session of a server: one job per key, whoever asks for it.

    A session (its :class:`JobSlot`) asking for a key that is being computed joins the running job and
    sees its progress; one asking for a key computed earlier gets the finished result at once (the last
    ``keep`` results in memory, and every result in ``store``, if given, which outlives the server). A
    job runs while at least one of its sessions wants it and is still connected: when the last one moves
    on (a new key) or goes, it is cancelled. A job that failed or was cancelled is not kept. ``save(job)``
    returns the bytes to store for a finished job (None: not stored); ``load(bytes)`` reads them back, as
    the state, or as (state, the texts of its warnings).
    """

    def __init__(self, keep: int = 256, store=None, save=None, load=None):
        self._lock = threading.Lock()
        self._jobs: OrderedDict = OrderedDict()  # key -> Job or Finished, newest last
        self._holders: dict = {}  # key -> {holder: alive or None}
        self.keep, self.store, self._save, self._load = keep, store, save, load
        self.started = 0  # jobs started (a test counts them)

    def _wanted(self, key) -> bool:
        holders = self._holders.get(key, {})
        return any(alive is None or alive() for alive in list(holders.values()))

    def join(
        self, key, make: Callable[[], Iterator], holder, alive: Callable[[], bool] | None = None, kind="", group=None
    ):
        """The job for ``key`` (running, finished, or started now with ``make``), with ``holder`` among
        those who want it. ``kind`` (a page's name for its job) is part of the board's key: two pages'
        jobs never meet by accident. A job started here takes its turns at the pool as ``group``."""
        job_key, key = key, (kind, key)
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and (job.cancelled or job.error):
                del self._jobs[key]
                job = None
            if job is None:
                job = self._stored(key, job_key)
            # the holder first: a job started below asks at its first step whether anyone wants it
            self._holders.setdefault(key, {})[holder] = alive
            if job is None:
                job = Job(
                    job_key, make, alive=lambda: self._wanted(key), on_done=partial(self._finished, key), group=group
                )
                self.started += 1
            self._jobs[key] = job
            self._jobs.move_to_end(key)
            self._trim()
            return job

    def leave(self, key, holder, kind=""):
        """``holder`` no longer wants ``key``: with nobody left, a running job for it is cancelled."""
        key = (kind, key)
        with self._lock:
            holders = self._holders.get(key, {})
            holders.pop(holder, None)
            if not holders:
                self._holders.pop(key, None)
                job = self._jobs.get(key)
                if job is not None and not job.done:
                    job.cancel()
                    del self._jobs[key]

    def _stored(self, key, job_key):
        if self.store is None or self._load is None:
            return None
        try:
            payload = self.store.get(key)
            if payload is None:
                return None
            loaded = self._load(payload)
            return Finished(job_key, *loaded) if isinstance(loaded, tuple) else Finished(job_key, loaded)
        except Exception:  # noqa: BLE001 - an unreadable stored result is computed again
            return None

    def _finished(self, key, job):
        """A job ended: store its result if it finished (not cancelled, no error)."""
        if self.store is None or self._save is None or job.cancelled or job.error or job.latest is None:
            return
        try:
            payload = self._save(job)
            if payload is not None:
                self.store.put(key, type(job.latest).__name__, payload)
        except Exception:  # noqa: BLE001 - not kept: computed again when asked for
            pass

    def _trim(self):
        """Forget the oldest finished results no connected session holds, beyond ``keep``."""
        extra = len(self._jobs) - self.keep
        for key in list(self._jobs):
            if extra <= 0:
                break
            if self._jobs[key].done and not self._wanted(key):
                del self._jobs[key]
                self._holders.pop(key, None)
                extra -= 1


class JobSlot:
    """Holds at most one job per key kind: asking for a different key cancels the old job (with a
    ``board``, leaves it: it is cancelled when no other session wants it either)."""

    def __init__(
        self, alive: Callable[[], bool] | None = None, board: JobBoard | None = None, kind: str = "", group=None
    ):
        self.job: Job | Finished | None = None
        self.alive = alive  # handed to every job (see Job)
        self.board, self.kind, self.group = board, kind, group

    def ensure(self, key, make: Callable[[], Iterator]):
        if self.job is not None and self.job.key == key and not (self.job.cancelled or self.job.error):
            return self.job
        self.cancel()
        if self.board is not None:
            self.job = self.board.join(key, make, self, self.alive, self.kind, self.group)
        else:
            self.job = Job(key, make, alive=self.alive, group=self.group)
        return self.job

    def cancel(self):
        if self.job is not None:
            if self.board is not None:
                self.board.leave(self.job.key, self, self.kind)
            else:
                self.job.cancel()
