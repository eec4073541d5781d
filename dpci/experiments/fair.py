"""Fair order for the worker pool's calls: round-robin across groups (an app's sessions), newest run
first within a group.

A class of 30 on one server shares one pool of worker processes. Served first come, first served, the
sessions that asked first would hold the workers while the others wait; served by run, a session with
several runs would get several turns. So each call waits here until a worker is free, and the next
call to run is taken from the group served least recently (a group that has never been served first:
a newcomer does not wait for a full round), and within that group from its newest run (what its user
asked for last). A run that is closed (its job
cancelled or superseded) takes its waiting calls out at once, before anyone else's work is done.

:class:`FairQueue` is the bookkeeping; :class:`Dispatcher` is the thread that hands the queue's calls to
the pool of :class:`dpci.experiments.engine.Engine` as workers free up. The dispatcher has a lock of its
own, held only to move calls between the queue and the pool, never while a call runs or a pool starts.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from typing import Any

MAX_REMEMBERED = 10_000  # groups whose last turn is kept after their runs ended (then the older half goes)


class FairQueue:
    """Calls waiting for a worker, by group and run (see the module's docstring).

    Examples
    --------
    >>> q = FairQueue()
    >>> for item in ("a1", "a2"):
    ...     q.push("session A", "run a", item)
    >>> q.push("session B", "run b", "b1")
    >>> [q.pop() for _ in range(4)]
    ['a1', 'b1', 'a2', None]
    """

    def __init__(self):
        self._groups: OrderedDict[Any, list] = OrderedDict()  # group -> its runs, oldest first
        self._calls: dict[Any, deque] = {}  # run -> its waiting calls, in order
        self._group_of: dict[Any, Any] = {}
        self._order = itertools.count()
        self._seq: dict[Any, int] = {}  # run -> when it first asked (a larger number: newer)
        self._served: dict[Any, int] = {}  # group -> when it was last served (absent: never)

    def __len__(self) -> int:
        return sum(len(calls) for calls in self._calls.values())

    def push(self, group, run, item) -> None:
        """Queue ``item``, a call of ``run`` (a new run joins ``group``'s runs as its newest)."""
        if run not in self._calls:
            self._calls[run] = deque()
            self._group_of[run] = group
            self._seq[run] = next(self._order)
            self._groups.setdefault(group, []).append(run)
        self._calls[run].append(item)

    def pop(self):
        """The next call to run, or None when nothing waits."""
        waiting = [group for group, runs in self._groups.items() if any(self._calls[run] for run in runs)]
        if not waiting:
            return None
        group = min(waiting, key=lambda g: self._served.get(g, -1))  # ties: the group that came first
        newest = max((run for run in self._groups[group] if self._calls[run]), key=self._seq.__getitem__)
        self._served[group] = next(self._order)
        return self._calls[newest].popleft()

    def drop(self, run) -> list:
        """Take ``run`` out (closed or finished); returns its calls that were still waiting."""
        calls = self._calls.pop(run, deque())
        group = self._group_of.pop(run, None)
        self._seq.pop(run, None)
        if group in self._groups:
            self._groups[group] = [r for r in self._groups[group] if r is not run]
            if not self._groups[group]:
                del self._groups[group]  # its last turn is remembered: a new run does not jump the line
                if len(self._served) > MAX_REMEMBERED:
                    for old in [g for g in self._served if g not in self._groups][: len(self._served) // 2]:
                        del self._served[old]
        return list(calls)


class Dispatcher:
    """Calls wait in a :class:`FairQueue`; a thread hands them to ``submit(fn, args)`` (which returns
    ``(pool future, pool generation)``) while fewer than ``capacity()`` are in the pool.

    :meth:`ask` returns a future of the call's result at once; it gets the pool's result, error, or a
    ``CancelledError`` when the pool was lost (the run then asks again), and its attributes
    ``pool_future`` and ``generation`` say where it went.
    """

    def __init__(self, submit: Callable, capacity: Callable[[], int]):
        self._submit, self._capacity = submit, capacity
        self._queue = FairQueue()
        self._in_pool = 0
        self._closed = False
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def waiting(self) -> int:
        """How many calls wait for the pool."""
        with self._wake:
            return len(self._queue)

    def ask(self, group, run, fn, args) -> cf.Future:
        """Queue a call of ``run`` (in ``group``); returns the future of its result."""
        future: Any = cf.Future()
        future.call, future.pool_future, future.generation = (fn, args), None, None
        with self._wake:
            if self._closed:
                raise RuntimeError("the worker pool has been shut down (interpreter exit)")
            self._queue.push(group, run, future)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="dpci-engine-dispatch", daemon=True)
                self._thread.start()
            self._wake.notify()
        return future

    def drop(self, run, futures: Iterable[cf.Future] = ()) -> None:
        """``run`` ended: its waiting calls are cancelled, and so are ``futures`` of it in the pool, if
        they have not started."""
        with self._wake:
            waiting = self._queue.drop(run)
        for future in waiting:
            future.cancel()
        for future in futures:
            inner = getattr(future, "pool_future", None)
            if inner is not None:
                inner.cancel()

    def close(self) -> None:
        """No more calls: the waiting ones are cancelled and the thread ends."""
        with self._wake:
            self._closed = True
            waiting = list(iter(self._queue.pop, None))
            self._wake.notify_all()
        for future in waiting:
            future.cancel()

    def _serve(self):
        while True:
            with self._wake:
                while not self._closed and (self._in_pool >= self._capacity() or not len(self._queue)):
                    self._wake.wait()
                if self._closed:
                    return
                future = self._queue.pop()
                if not future.set_running_or_notify_cancel():  # cancelled while it waited
                    continue
                self._in_pool += 1
            try:
                inner, generation = self._submit(*future.call)
            except BaseException as err:  # noqa: BLE001 - the run waiting for it is told
                self._came_back()
                future.set_exception(err)
                continue
            future.pool_future, future.generation = inner, generation
            inner.add_done_callback(lambda done, outer=future: self._relay(done, outer))

    def _came_back(self):
        with self._wake:
            self._in_pool -= 1
            self._wake.notify()

    def _relay(self, inner: cf.Future, outer: cf.Future):
        """A pool call came back: its result, error or cancellation (a lost pool) to the run's future."""
        self._came_back()
        if inner.cancelled():
            outer.set_exception(cf.CancelledError())
        elif inner.exception() is not None:
            outer.set_exception(inner.exception())
        else:
            outer.set_result(inner.result())
