"""The process-wide worker pool that runs bootstrap chunks for every caller at once.

One :class:`Engine` per process owns one pool of worker processes (a loky
``ProcessPoolExecutor`` of its own, not joblib's reusable one). Nothing else creates, shuts down
or replaces that pool, so several runs (the app's users, a job and the job replacing it) share it
without stepping on each other:

* a run (:meth:`Engine.ordered`) asks for at most ``AHEAD x workers`` of its own calls at a time,
  yields their results in order and, when it is closed early (cancelled), cancels its own pending
  calls only; the pool and the other runs' calls are untouched;
* the calls wait in a :class:`.fair.FairQueue` and a dispatcher thread hands them to the pool as
  workers free up (at most ``AHEAD x workers`` in the pool at once): round-robin across groups (an
  app's sessions: :func:`fair_group`), newest run first within a group, so no session holds the
  workers while others wait;
* while the workers are starting (a second or two, cold), a run computes in its own thread, and
  so it does its first call while they are busy with other calls, so its first results never
  wait for them;
* a worker that dies (killed, out of memory) breaks the pool: the first run to notice makes the
  engine start a new one (a new *generation*) and every run resubmits its unfinished calls there
  (each call is a pure function of its arguments, so results do not change);
* a large read-only array (the population's rows) is written once to a file in ``/dev/shm`` and
  memory-mapped by each worker once (:meth:`Engine.shared`), instead of being pickled with every
  call; the file is deleted when no run needs it;
* while its caller waits, a run checks the calling thread's cancel scope (:func:`cancel_scope`)
  every ``POLL`` seconds and raises :class:`Cancelled`, so a cancelled job stops waiting at once;
* idle workers stop after ``IDLE_SECONDS``; at interpreter exit the pending calls are cancelled
  and the workers killed *before* loky joins its threads, so a server stops on SIGTERM whatever
  its users were doing.

No caller ever holds the engine's lock while waiting for a result or starting a worker, and the
pool's own threads are loky's: there is no lock order to get wrong.
"""

from __future__ import annotations

import concurrent.futures as cf
import importlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool  # loky's own errors derive from it
from contextlib import contextmanager

import numpy as np
from joblib.externals.loky.process_executor import ShutdownExecutorError  # imported before our exit handler

from .fair import Dispatcher
from .shared_arrays import SharedFiles

AHEAD = 2  # chunks in flight per worker a run asks for: keeps workers busy, cancels promptly, shares fairly
RETRIES = 3  # times a run resubmits its unfinished chunks after losing the pool (a worker died)
IDLE_SECONDS = 300.0  # idle workers are stopped after this long without a run (as joblib did)
EXIT_TIMEOUT = 5.0  # seconds the exit handler waits for the pool's threads after killing its workers
START_TIMEOUT = 60.0  # seconds a warm-up waits for the workers; after a failed start, runs compute inline this long
LOCAL_FIRST_RUNS = 2  # runs under way (this one included) up to which a busy pool's caller computes its first call
POLL = 0.05  # seconds between checks of the caller's cancel scope while it waits for a result
WORKER_IMPORTS = ("dpci.experiments.bootstrap",)  # imported by each worker as it starts


class Cancelled(Exception):
    """Raised by a run waiting for a result when its thread's cancel scope asks it to stop."""


class EngineClosed(RuntimeError):
    """The engine was shut down (interpreter exit): no more work is accepted."""


# --- cancel scopes: how a job thread tells the run it is consuming to stop waiting --------------

_SCOPE = threading.local()


@contextmanager
def _on_this_thread(name: str, value):
    """Within this block, this thread's ``_SCOPE.<name>`` is ``value`` (the previous one after it)."""
    previous = getattr(_SCOPE, name, None)
    setattr(_SCOPE, name, value)
    try:
        yield
    finally:
        setattr(_SCOPE, name, previous)


def cancel_scope(should_stop: Callable[[], bool]):
    """Within this block, runs consumed by this thread stop waiting (raise :class:`Cancelled`)
    as soon as ``should_stop()`` is true; it is checked every ``POLL`` seconds while they wait."""
    return _on_this_thread("check", should_stop)


def fair_group(group):
    """Within this block, runs consumed by this thread take their turns at the worker pool as
    ``group`` (an app's session): the group served least recently goes first (see :mod:`.fair`).
    Without one, each run is a group of its own."""
    return _on_this_thread("group", group)


def _wait(future: cf.Future):
    """The future's result; with a cancel scope on this thread, polled so that a cancel is seen."""
    check = getattr(_SCOPE, "check", None)
    if check is not None:
        while not future.done():
            cf.wait([future], timeout=POLL)
            if not future.done() and check():
                raise Cancelled()
    return future.result()


# --- worker side ----------------------------------------------------------------------------------


def _worker_init():
    """Workers leave Ctrl-C to their parent (which then shuts the pool down), and import what the
    calls need before they take any: a pool counts as started (a warm-up call came back) only when
    they are ready to compute, so runs compute in their own thread until then."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # loky restarts a worker whose memory grew 300 MB past its size after its first call (the
    # warm-up here), taking that for a leak; ours keep per-population caches on purpose (the
    # batched solver's start and scratch arrays: ~300 MB at n = 450,000), which a restart would
    # rebuild after a second of imports. Without psutil's check loky only runs gc.collect.
    from joblib.externals.loky import process_executor

    process_executor._USE_PSUTIL = False
    for name in WORKER_IMPORTS:
        importlib.import_module(name)
    # One BLAS thread for good (the chunks' products are thin; see bootstrap._one_blas_thread): a
    # chunk's own limit then costs nothing, where switching threads off and on took ~1 ms a chunk.
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def _noop(i):
    return i


# --- the engine ---------------------------------------------------------------------------------


def _succeeded(future: cf.Future) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None


class _Pool:
    """One generation of the worker pool: a loky executor that nothing but the engine touches.

    loky's own (not joblib's reusable) executor: its workers are fresh interpreters that import
    only what the calls need (never the caller's main script, unlike multiprocessing's spawn and
    forkserver), and calls are pickled with cloudpickle."""

    def __init__(self, size: int, generation: int):
        from joblib.externals.loky import ProcessPoolExecutor

        self.size, self.generation = size, generation
        self.executor = ProcessPoolExecutor(size, initializer=_worker_init)
        self.processes = self.executor._processes  # updated in place by the executor's manager thread
        self.manager = None  # the executor's manager thread, once started (kept for the exit handler)
        self.futures: set = set()  # calls not yet come back (cancelled when the pool is stopped)
        self.ready = threading.Event()  # set when a call has come back: the workers have started
        self.starting = False  # a warm-up is under way (see Engine._warm)

    @property
    def usable(self) -> bool:
        flags = self.executor._flags
        return flags.broken is None and not flags.shutdown

    def submit(self, fn, args) -> cf.Future:
        future = self.executor.submit(fn, *args)  # may start workers: not under the engine's lock
        self.manager = self.manager or self.executor._executor_manager_thread
        self.futures.add(future)
        future.add_done_callback(self._came_back)
        return future

    def _came_back(self, future):
        self.futures.discard(future)
        if not future.cancelled() and future.exception() is None:
            self.ready.set()

    def alive(self) -> list:
        return [p for p in list(self.processes.values()) if p.is_alive()]

    def stop(self, kill: bool, cancel: bool = True):
        """Stop accepting work. ``cancel`` cancels the calls not yet started (else they are
        computed first); ``kill`` kills the workers now (interpreter exit), else they exit when done.

        (Not loky's ``shutdown(kill_workers=True)``: it drops queued calls under its own manager
        thread, which then fails with a KeyError; killed workers make the pool broken instead,
        and its manager thread cleans up and ends.)"""
        processes = list(self.processes.values())
        self.manager = self.manager or self.executor._executor_manager_thread
        if cancel:
            for future in list(self.futures):
                future.cancel()
        try:
            self.executor.shutdown(wait=False)
        except Exception:  # noqa: BLE001 - a broken pool may refuse; its workers are gone anyway
            pass
        if kill:
            for p in processes:
                try:
                    p.kill()
                except (OSError, ValueError, AttributeError):
                    pass

    @property
    def finished(self) -> bool:
        return self.manager is None or not self.manager.is_alive()


class Engine:
    """Owns the process-wide worker pool (see the module's docstring). Thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pool: _Pool | None = None
        self._retired: list[_Pool] = []  # stopped pools whose threads may still be running
        self._size = 0
        self._generation = 0
        self._active = 0  # runs in progress
        self._closed = False
        self._idle_timer: threading.Timer | None = None
        self._files = SharedFiles()  # large arrays shared with the workers through files
        self._retry_start_at = 0.0
        # calls wait here for a worker and go to the pool in turn (at most AHEAD x workers there at once)
        self._fair = Dispatcher(self._submit, lambda: AHEAD * max(1, self._size))

    # -- the pool (every method below with _locked in its name is called with the lock held) --

    def _pool_locked(self, workers: int = 0) -> _Pool:
        if self._closed:
            raise EngineClosed("the worker pool has been shut down (interpreter exit)")
        pool = self._pool
        if workers > self._size:  # a larger pool is needed: the current one finishes its work and goes
            self._size = workers
            if pool is not None:
                self._retire_locked(pool, kill=False, cancel=False)
                pool = None
        if pool is not None and not pool.usable:  # broken (a worker died) or stopped
            self._retire_locked(pool, kill=False)
            pool = None
        if pool is None:
            self._generation += 1
            pool = self._pool = _Pool(max(1, self._size), self._generation)
        return pool

    def _retire_locked(self, pool: _Pool, kill: bool, cancel: bool = True):
        pool.stop(kill, cancel)
        if self._pool is pool:
            self._pool = None
        self._retired = [p for p in self._retired if not p.finished] + [pool]

    def _submit(self, fn, args) -> tuple[cf.Future, int]:
        for attempt in range(3):
            with self._lock:
                pool = self._pool_locked()
            try:
                return pool.submit(fn, args), pool.generation
            except (BrokenProcessPool, RuntimeError):  # broken or stopped since: the next one takes it
                with self._lock:
                    if attempt == 2 or self._closed:
                        raise
                    if self._pool is pool:
                        self._retire_locked(pool, kill=False)
        raise AssertionError("unreachable")

    def _warm(self) -> bool:
        """True when the pool's workers are up; if not, starts them in the background (once)."""
        pool = self._pool
        if pool is not None and pool.ready.is_set() and pool.usable:
            return True
        with self._lock:
            if self._closed:
                raise EngineClosed("the worker pool has been shut down (interpreter exit)")
            if time.monotonic() < self._retry_start_at:  # workers failed to start: runs compute here
                return False
            pool = self._pool_locked()
            if pool.starting:
                return False
            pool.starting = True
        threading.Thread(target=self._start_workers, args=(pool,), name="dpci-engine-start", daemon=True).start()
        return False

    def _start_workers(self, pool: _Pool):
        try:
            cf.wait([pool.submit(_noop, (i,)) for i in range(pool.size)], timeout=START_TIMEOUT)
        except Exception:  # noqa: BLE001 - stopped or broken meanwhile
            pass
        finally:
            pool.starting = False
        if not pool.ready.is_set() and not pool.usable and not self._closed:
            self._retry_start_at = time.monotonic() + START_TIMEOUT  # do not retry at every chunk

    def _enter(self, workers: int):
        with self._lock:
            self._pool_locked(workers)
            self._active += 1
            if self._idle_timer is not None:
                self._idle_timer.cancel()
                self._idle_timer = None

    def _leave(self):
        with self._lock:
            self._active -= 1
            self._arm_idle_locked()

    def _arm_idle_locked(self):
        if self._active or self._closed or self._pool is None:
            return
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        timer = self._idle_timer = threading.Timer(IDLE_SECONDS, self._idle, args=())
        timer.daemon, timer.name = True, "dpci-engine-idle"
        timer.start()

    def _idle(self):
        with self._lock:
            if self._active or self._pool is None or threading.current_thread() is not self._idle_timer:
                return
            self._idle_timer = None
            self._retire_locked(self._pool, kill=False)

    def _busy(self) -> bool:
        """True when the pool has calls that have not come back, or calls wait for it (of any run)."""
        pool = self._pool
        return (pool is not None and bool(pool.futures)) or self._fair.waiting() > 0

    @property
    def generation(self) -> int:
        """How many pools this engine has started (a new one after a worker died, or to grow)."""
        return self._generation

    def workers_running(self) -> bool:
        """True when the pool has live worker processes."""
        pool = self._pool
        return pool is not None and pool.usable and bool(pool.alive())

    def worker_pids(self) -> list[int]:
        pool = self._pool
        return [p.pid for p in pool.alive()] if pool is not None else []

    def warm_up(self, workers: int, timeout: float = 120.0):
        """Start ``workers`` worker processes now (and the pool, if none is running)."""
        with self._lock:
            self._pool_locked(workers)
        futures = [self._submit(_noop, (i,))[0] for i in range(workers)]
        cf.wait(futures, timeout=timeout)
        with self._lock:
            self._arm_idle_locked()

    # -- large arrays ----------------------------------------------------------------------------

    def shared(self, array: np.ndarray, key: str):
        """Within this block, a stand-in for ``array`` to put in chunk arguments (see
        :meth:`.shared_arrays.SharedFiles.shared`)."""
        return self._files.shared(array, key)

    # -- runs ------------------------------------------------------------------------------------

    def ordered(
        self,
        fn: Callable,
        calls: Sequence[tuple],
        workers: int,
        local: Callable[[int], object] | None = None,
        retries: int = RETRIES,
    ) -> Iterator:
        """Yield ``fn(*calls[i])`` for each i in order, computed by the pool with at most
        ``AHEAD * workers`` of them in flight.

        ``local(i)``, if given, computes call i in the calling thread: every call while the pool's
        workers are still starting (a cold start takes a second or two), and the first call when
        the workers are busy (another run's calls, or a cancelled run's last ones, which finish
        first), while the pool starts on the next ones; so results come at once. Not when more than
        ``LOCAL_FIRST_RUNS`` runs are under way (a class on one server): then the caller's process (an
        app's server, drawing every session's pages) keeps its core, and the first call takes its turn
        at the pool (:mod:`.fair`: a run whose session was served least recently goes first). With idle
        workers the first call goes to them too: computed here it took a core from them (a third
        process on two cores made the first 200 replicates on Adult 117 ms instead of 101 ms).

        Closing the generator cancels this run's pending calls only. If a worker dies, the
        unfinished calls are resubmitted to a new pool (at most ``retries`` times per run).
        """
        calls = list(calls)
        n, ahead = len(calls), max(1, AHEAD * workers)
        pending: dict[int, cf.Future] = {}
        nxt = 0  # the first call neither submitted nor computed here
        losses = 0
        run = object()  # this run, in the fair queue
        group = getattr(_SCOPE, "group", None)
        group = run if group is None else group

        def top_up(stop):
            nonlocal nxt
            while nxt < min(n, stop):
                pending[nxt] = self._fair.ask(group, run, fn, calls[nxt])
                nxt += 1

        self._enter(workers)
        try:
            for i in range(n):
                if i == nxt and local is not None:
                    warm = self._warm()
                    if not warm or (i == 0 and self._busy() and self._active <= LOCAL_FIRST_RUNS):
                        nxt = i + 1
                        if warm:
                            top_up(i + 1 + ahead)  # the pool works on the next calls meanwhile
                        yield local(i)
                        continue
                top_up(i + ahead)
                while True:
                    future = pending[i]
                    try:
                        result = _wait(future)
                        break
                    except (BrokenProcessPool, ShutdownExecutorError, cf.CancelledError):
                        if self._closed:
                            raise EngineClosed("the worker pool was shut down during this run") from None
                        losses += 1
                        if losses > retries:
                            raise
                        lost = future.generation  # type: ignore[attr-defined]
                        for j, f in sorted(pending.items()):  # the lost pool's unfinished calls, or this one
                            if not _succeeded(f) and (f is future or (lost is not None and f.generation == lost)):  # type: ignore[attr-defined]
                                if f.pool_future is not None:  # type: ignore[attr-defined]
                                    f.pool_future.cancel()  # type: ignore[attr-defined]
                                pending[j] = self._fair.ask(group, run, fn, calls[j])
                del pending[i]
                yield result
        finally:
            self._fair.drop(run, pending.values())
            self._leave()

    # -- shutdown --------------------------------------------------------------------------------

    def shutdown(self, timeout: float = EXIT_TIMEOUT, close: bool = True):
        """Cancel pending work, kill the workers, wait up to ``timeout`` for the pool's threads and
        delete the shared files. With ``close`` (interpreter exit), later work is refused; without,
        the next run starts a new pool."""
        with self._lock:
            self._closed = self._closed or close
            pools = self._retired + ([self._pool] if self._pool is not None else [])
            self._pool, self._retired = None, []
            if self._idle_timer is not None:
                self._idle_timer.cancel()
                self._idle_timer = None
            for pool in pools:
                pool.stop(kill=True)
        if close:
            self._fair.close()  # calls still waiting are cancelled; the dispatcher ends
        deadline = time.monotonic() + timeout
        for pool in pools:
            if pool.manager is not None and pool.manager is not threading.current_thread():
                pool.manager.join(max(0.0, deadline - time.monotonic()))
        if close:
            self._files.remove_all()


_ENGINE: Engine | None = None
_ENGINE_LOCK = threading.Lock()


def get_engine() -> Engine:
    """The process-wide engine, created on first use."""
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            _ENGINE = Engine()
        return _ENGINE


def _forget_in_child():  # a forked child must not use (or shut down) its parent's pool
    global _ENGINE, _ENGINE_LOCK
    _ENGINE, _ENGINE_LOCK = None, threading.Lock()


def _at_exit():
    engine = _ENGINE
    if engine is not None:
        engine.shutdown(timeout=EXIT_TIMEOUT, close=True)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)

# Registered after loky's own exit handler (imported above), so it runs first (they run in reverse
# order): the pending calls are cancelled and the workers killed before loky joins the pool's
# thread, which would otherwise wait for every pending call (a server then ignored SIGTERM).
if hasattr(threading, "_register_atexit"):
    threading._register_atexit(_at_exit)
else:  # pragma: no cover - Python < 3.9
    import atexit

    atexit.register(_at_exit)
