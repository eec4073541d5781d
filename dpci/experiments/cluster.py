"""Bootstrap chunks on a Dask distributed scheduler: one client per scheduler address and process,
and a context and a generator wrapper that send every bootstrap run of this thread to it.

A deployment for a class sets one scheduler (``DPCI_SCHEDULER`` in the app, ``--scheduler`` on the
command line); the chunks of :mod:`dpci.experiments.bootstrap` then go through joblib's dask backend
to its workers. A chunk is a pure function of its arguments (its replicates' random streams derive
from the run's entropy and the replicate numbers alone), so a run gives the same numbers, to the last
bit, as one on local processes, given workers with the same numpy and BLAS on the same kind of CPU.

joblib's backend configuration is per thread: enter :func:`on_scheduler` in the thread that runs the
bootstrap (a background job's thread, not the thread that started it); :func:`run_on` does so for a
generator factory. Dask is optional (``pip install -e '.[cluster]'``); nothing here
imports it until a scheduler is asked for.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

CONNECT_SECONDS = 10.0  # how long connecting to a scheduler may take before it is reported unreachable

_CLIENTS: dict = {}  # scheduler address -> its distributed.Client in this process
_LOCK = threading.Lock()
_HERE = threading.local()  # .address: the scheduler this thread's bootstrap runs go to, if any


def scheduler_here() -> str | None:
    """The address of the scheduler this thread's bootstrap runs go to (inside :func:`on_scheduler`), else None.

    Returns
    -------
    str or None
        The address given to the innermost :func:`on_scheduler` open in this thread.
    """
    return getattr(_HERE, "address", None)


def client_for(address: str, timeout: float | None = None):
    """The process's ``distributed.Client`` for the scheduler at ``address``, connected on first use.

    Made once per process and address (thread-safe) and shared by every run; a client whose
    connection was closed or failed is replaced.

    Parameters
    ----------
    address : str
        The scheduler's address, e.g. ``"tcp://scheduler:8786"``.
    timeout : float, optional
        Seconds to wait for the scheduler before giving up (default :data:`CONNECT_SECONDS`).

    Returns
    -------
    distributed.Client

    Raises
    ------
    ValueError
        When Dask is not installed or the scheduler cannot be reached, saying which and what to do.
    """
    address = str(address).strip()
    if not address:
        raise ValueError("a Dask scheduler's address is empty; give one such as tcp://scheduler:8786.")
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(
            f"the Dask scheduler {address} needs Dask on this machine: pip install -e '.[cluster]' "
            '(or pip install "dask[distributed]").'
        ) from None
    with _LOCK:
        client = _CLIENTS.get(address)
        if client is not None and client.status in ("running", "connecting", "newly-created"):
            return client
        try:
            client = Client(address, timeout=CONNECT_SECONDS if timeout is None else timeout, set_as_default=False)
        except (OSError, TimeoutError) as err:
            raise ValueError(f"cannot reach the Dask scheduler at {address}: {err}.") from None
        _CLIENTS[address] = client
        return client


def close_clients() -> None:
    """Close every client :func:`client_for` made in this process (a test's or a shutdown's clean-up)."""
    with _LOCK:
        clients = list(_CLIENTS.values())
        _CLIENTS.clear()
    for client in clients:
        with contextlib.suppress(Exception):  # a scheduler already gone: nothing left to close
            client.close()


@contextlib.contextmanager
def on_scheduler(address: str, timeout: float | None = None):
    """Within this block, in this thread, every bootstrap run's chunks go to the scheduler at ``address``.

    Enters joblib's dask backend bound to :func:`client_for` ``(address)``. Runs with ``n_jobs=1``
    go there too (they would otherwise compute in this thread and leave the cluster idle); as on
    local workers, each run computes its first chunk here while the others are dispatched.

    Parameters
    ----------
    address, timeout
        As for :func:`client_for` (which raises a ValueError saying what to do when Dask is missing or the
        scheduler cannot be reached).

    Yields
    ------
    distributed.Client
        The client the chunks are submitted through.
    """
    from joblib import parallel_config

    client = client_for(address, timeout)
    previous = scheduler_here()
    with parallel_config(backend="dask", client=client):
        _HERE.address = str(address).strip()
        try:
            yield client
        finally:
            _HERE.address = previous


def run_on(address: str, make: Callable[[], Iterator], timeout: float | None = None) -> Iterator:
    """Yield what ``make()`` yields, with its bootstrap chunks on the scheduler at ``address``.

    The backend is entered when the generator starts, in the thread that consumes it (joblib's
    configuration is per thread), and left when it ends or is closed. A background job takes
    ``functools.partial(run_on, address, make)`` where it took ``make``.

    Parameters
    ----------
    address, timeout
        As for :func:`client_for`.
    make : callable
        A generator factory, such as ``functools.partial(iter_variability, X, y, loss, ...)``.

    Yields
    ------
    object
        Each state ``make()`` yields.
    """
    with on_scheduler(address, timeout):
        inner = make()
        try:
            yield from inner
        finally:
            close = getattr(inner, "close", None)
            if close is not None:
                close()  # here, inside the backend, so its pending chunks are released through it
