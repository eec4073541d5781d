"""Bootstrap experiments of Section 7.2: variability intervals and coverage.

A dataset D is treated as the population and theta_0 as its non-private minimiser
(Eq. 3.1). Replicate r resamples D with replacement (row multiplicities W_r) and

* for **variability intervals** runs only the coefficient mechanism (phi1) on it, and
  takes the alpha/2 and 1 - alpha/2 quantiles of the private estimates per coordinate;
* for **coverage** runs the whole private interval (Algorithm 3 or 5) on it and counts
  how often the interval holds theta_0, with the mean length.

Every replicate draws from its own random stream, ``SeedSequence(entropy,
spawn_key=(r,))``, and replicates are solved together in fixed blocks (replicates
0-31, 32-63, ... for variability intervals; one batched exact solve per block, :mod:`dpci.batch`),
so results are identical, to the last bit, however the work is chunked and however
many workers run it. A chunk is a run of whole blocks; the ``iter_*`` generators
yield the state after each chunk, so a user interface can draw partial results and
stop between chunks. Given a ``precision``, a run stops by itself once its Monte Carlo error is
below it (:mod:`dpci.experiments.stopping`), at a replicate count that does not depend on the
chunking either.
With ``n_jobs != 1``, chunks run in one worker pool shared by every run in the process
(:mod:`dpci.experiments.engine`); inside ``joblib.parallel_config(backend="dask")`` they go
through joblib to a Dask cluster instead, and inside :func:`dpci.experiments.cluster.on_scheduler`
every run's chunks do, n_jobs=1 included.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from contextlib import closing
from dataclasses import dataclass
from functools import partial

import numpy as np
from threadpoolctl import ThreadpoolController

from ..batch import batch_start, scratch, scratch_space
from ..intervals import check_count
from ..ledger.hooks import note_not_private
from ..methods import Measurement
from ..methods.paper import solve_replicates
from ..solver import margin_rows, minimise_erm, row_major_transpose
from ..spec import ReleaseSpec, check_spec
from ..validation import check_signed_data
from . import stopping
from .cluster import scheduler_here
from .progress import CoverageProgress, VariabilityProgress

NONPRIVATE = "none"  # the ledger's method name for the non-private bootstrap (a baseline and a test oracle)


def stream_entropy(random_state) -> int:
    """The entropy all replicate streams derive from (None: fresh; int; or drawn from a Generator)."""
    if random_state is None:
        return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]  # an int when drawn fresh
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**63))
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    raise ValueError(f"random_state must be None, an int or a numpy.random.Generator, got {random_state!r}.")


def replicate_rng(entropy: int, r: int) -> np.random.Generator:
    """Replicate r's own random stream."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=(r,))))


def bootstrap_counts(rng, n: int, out=None) -> np.ndarray:
    """Multiplicities of the n rows in a sample of n drawn with replacement (as floats; into
    ``out``, a float row of length n, when given). ``np.add.at`` counts the same draws as
    ``np.bincount`` a third faster and writes the floats directly."""
    counts = np.zeros(n) if out is None else out
    counts.fill(0.0)
    np.add.at(counts, rng.integers(0, n, size=n), 1.0)
    return counts


BLOCK = 32  # replicates per batched solve (fewer for large n); fixed by n alone, so floating-point
COVERAGE_BLOCK = 8  # results never depend on chunking. Coverage also runs Monte Carlo per replicate.
ROW_VISITS = 4_000_000  # replicates x rows per block and per chunk at most: ~0.1 s of work
SINGLE_BLOCK_CHUNKS = 8  # a run's first chunks are one block each (early progress), then they double
COLD_SECONDS = 0.2  # with no workers running, a run computes this long in its own thread before starting them


def block_size(n: int, cap: int = BLOCK) -> int:
    """Replicates per batched solve for n rows: at most ``cap``, and about ROW_VISITS row-visits,
    so that one block (the smallest chunk) takes a fraction of a second even for large n."""
    return int(min(cap, max(1, ROW_VISITS // max(n, 1))))


def default_chunk_size(n: int) -> int:
    """Replicates per chunk, at most: about ROW_VISITS row-visits, so a chunk takes well under 0.5 s."""
    return int(min(256, max(1, ROW_VISITS // max(n, 1))))


def _spans(total: int, chunk_size: int, block: int):
    """Chunks of whole blocks: the first SINGLE_BLOCK_CHUNKS one block each, so that progress comes
    early, then doubling up to chunk_size rounded to a multiple of ``block`` (at least one block),
    so that the workers get fewer, larger calls."""
    cap, start = max(1, round(chunk_size / block)), 0
    spans: list[tuple[int, int]] = []
    while start < total:
        size = block * min(cap, 2 ** max(0, len(spans) + 1 - SINGLE_BLOCK_CHUNKS))
        spans.append((start, min(start + size, total)))
        start += size
    return spans


_STARTS: dict = {}  # per-process cache of BatchStart objects, keyed by population token


@dataclass(frozen=True)
class _Population:
    """What every chunk shares: the rows, the spec's measurement, theta_0 and the Hessian pieces there."""

    A: np.ndarray
    loss: object
    c: float
    measurement: Measurement | None  # the spec measured by its method, or None for the non-private bootstrap
    theta0: np.ndarray
    token: str  # identifies the population, so each worker builds its BatchStart once

    def __sizeof__(self) -> int:
        """Its arrays' bytes: joblib's Dask backend sends an argument this large to the cluster once per
        run (``client.scatter``), not with every chunk."""
        return object.__sizeof__(self) + self.A.nbytes + self.theta0.nbytes

    @property
    def start(self):
        """The :class:`dpci.batch.BatchStart` at theta0, built once per process (not shipped to workers)."""
        cached = _STARTS.get(self.token)
        if cached is None:
            if len(_STARTS) >= 4:
                _STARTS.pop(next(iter(_STARTS)))
            cached = _STARTS[self.token] = batch_start(self.A, self.loss, self.theta0)
        return cached


def _population(X, y, spec: ReleaseSpec, private: bool):
    """The run's population, computed with one BLAS thread: its products are thin, and a second
    BLAS thread busy-waits after each call on a core the workers need for the first chunks."""
    with _one_blas_thread():
        return _make_population(X, y, spec, private)


def _make_population(X, y, spec: ReleaseSpec, private: bool):
    X, y = check_signed_data(X, y)  # the same input contract as a release (rows in the unit ball, -1/+1)
    what = f"bootstrap replicates of {spec.method}" if private else "the non-private bootstrap"
    A = margin_rows(X, y)
    record = dict(function="bootstrap", **spec.to_dict())
    note_not_private(A, record if private else dict(record, method=NONPRIVATE), f"{what} on the data")
    loss, c = spec.loss, spec.c
    measurement, target_c = None, c
    if private:
        measurement = spec.measure()  # the spec's privacy map (Method.measure)
        method = measurement.method
        method.check_settings(measurement, A.shape[0])  # refuses an invalid c before any work
        target_c = method.estimand_c(measurement, *A.shape)
    theta0 = minimise_erm(A, loss, target_c).theta  # what the intervals should cover
    digest = hashlib.blake2b(row_major_transpose(A).data, digest_size=16)  # hashes A in place, no copy
    digest.update(theta0.tobytes())
    digest.update(repr(loss).encode())
    return _Population(A, loss, c, measurement, theta0, digest.hexdigest())


def _private_coefficients(pop: _Population, entropy: int, start: int, stop: int, block: int):
    """The coefficient mechanism (phi1 only) on replicates start..stop-1; returns (theta, weights, rngs).

    Each replicate's stream gives its row multiplicities first, then its noise (the method's).
    """
    n = pop.A.shape[0]
    rngs = [replicate_rng(entropy, r) for r in range(start, stop)]
    weights = scratch("weights", (len(rngs), n))  # this chunk's only (see _variability_chunk)
    for rng, row in zip(rngs, weights):
        bootstrap_counts(rng, n, out=row)
    m = pop.measurement
    if m is None:  # the non-private bootstrap of theta-hat
        theta = solve_replicates(pop.A, pop.loss, pop.c, weights, None, pop.start, block)
    else:
        theta = m.method.replicate_coefficients(m, pop.A, weights, rngs, pop.start, block)
    return theta, weights, rngs


# Finding the BLAS libraries takes ~20 ms: done at import (an app imports at start-up), not in a
# run's first chunk, where it delayed the first results.
_CONTROLLER = ThreadpoolController()


def _one_blas_thread():
    """A context in which BLAS uses one thread. The products here are thin (d is small); with
    several BLAS threads, any other busy process on the machine stalled them more than tenfold."""
    return _CONTROLLER.limit(limits=1, user_api="blas")


def _variability_chunk(pop, entropy, start, stop):
    with _one_blas_thread(), scratch_space():
        return _private_coefficients(pop, entropy, start, stop, block_size(pop.A.shape[0]))[0]


def _coverage_chunk(pop, entropy, start, stop):
    m = pop.measurement
    with _one_blas_thread(), scratch_space():
        theta, weights, rngs = _private_coefficients(
            pop, entropy, start, stop, block_size(pop.A.shape[0], COVERAGE_BLOCK)
        )
        law = m.check(pop.A.shape[0])  # the coefficients' noise law
        bounds = np.empty(theta.shape + (2,))
        for i, rng in enumerate(rngs):
            bounds[i] = m.method.replicate_interval(m, pop.A, theta[i], law, rng, weights[i])
    return bounds


LOW_PRIORITY = 10  # the nice value of worker processes computing for an interactive server


def _low_priority_call(func, *args):
    """Run ``func`` with this worker process's nice value at least LOW_PRIORITY (set once; a
    process already there, or lower in priority, is left as it is)."""
    if hasattr(os, "getpriority") and os.getpriority(os.PRIO_PROCESS, 0) < LOW_PRIORITY:
        os.setpriority(os.PRIO_PROCESS, 0, LOW_PRIORITY)
    return func(*args)


RETRIES = 3  # times a run resubmits its unfinished chunks after losing its worker pool


def _pool_lost(err: Exception) -> bool:
    """True when a joblib backend's worker pool was shut down or its workers killed under a run
    (only the joblib path, for a non-default backend such as Dask, can meet this)."""
    from joblib.externals.loky.process_executor import BrokenProcessPool, ShutdownExecutorError

    return isinstance(err, (ShutdownExecutorError, BrokenProcessPool)) or (
        isinstance(err, RuntimeError) and "executor underlying Parallel has been shutdown" in str(err)
    )


def _joblib_backend_active() -> bool:
    """True inside ``joblib.parallel_config(backend=...)`` with a backend other than loky (e.g.
    Dask): the chunks then go through joblib, to wherever that backend sends them."""
    from joblib.parallel import get_active_backend

    return type(get_active_backend()[0]).__name__ != "LokyBackend"


def _workers(n_jobs) -> int:
    """Worker processes for ``n_jobs`` with joblib's meaning (-1: all cores, -2: all but one, ...)."""
    from joblib import effective_n_jobs

    return max(1, int(effective_n_jobs(n_jobs)))


def _run_chunks(func, pop, entropy, total, spans, n_jobs, *extra, low_priority=False):
    """Yield chunk results in replicate order: inline for n_jobs=1, else in the process-wide
    worker pool of :mod:`dpci.experiments.engine` (or through joblib under a non-default
    ``joblib.parallel_config`` backend; inside :func:`.cluster.on_scheduler`, for any n_jobs).

    Chunks are computed in this thread while the workers are still starting, and so is the first
    chunk when they are busy with other runs' chunks, so partial results do not wait for them (with
    idle workers it goes to them: see :meth:`.engine.Engine.ordered`); with no workers running, the
    run computes for COLD_SECONDS before it starts them.
    ``low_priority`` lowers the worker processes' priority, so an interactive server and its
    users' browsers stay responsive while they compute. Closing this generator (a cancelled job)
    cancels this run's own pending chunks only. The population's rows go to each worker once (a
    memory-mapped file), not with every chunk.
    """
    if _joblib_backend_active() and (n_jobs != 1 or scheduler_here()):
        # inside cluster.on_scheduler even n_jobs=1 goes there (the Dask backend spreads over the cluster)
        jobs = -1 if n_jobs == 1 else n_jobs
        yield from _run_chunks_joblib(func, pop, entropy, spans, jobs, *extra, low_priority=low_priority)
        return
    if n_jobs == 1:
        for start, stop in spans:
            yield stop, func(pop, entropy, start, stop, *extra)
        return
    from dataclasses import replace

    from .engine import get_engine

    engine = get_engine()
    if not engine.workers_running():
        # Cold: each worker takes about a second of CPU to start, which on a small machine slows the
        # first results down; they are computed here first, then the workers start.
        spans, began = list(spans), time.perf_counter()
        while len(spans) > 1 and time.perf_counter() - began < COLD_SECONDS:
            start, stop = spans.pop(0)
            yield stop, func(pop, entropy, start, stop, *extra)
    head = (_low_priority_call, func) if low_priority else (func,)
    with engine.shared(pop.A, pop.token) as rows:
        remote = replace(pop, A=rows)  # what the workers get: the rows travel once per worker
        calls = [(*head[1:], remote, entropy, start, stop, *extra) for start, stop in spans]
        results = engine.ordered(
            head[0], calls, _workers(n_jobs), local=lambda i: func(pop, entropy, *spans[i], *extra)
        )
        try:
            for (_, stop), res in zip(spans, results):
                yield stop, res
        finally:
            results.close()  # here, in this thread: cancels this run's pending chunks now


def _run_chunks_joblib(func, pop, entropy, spans, n_jobs, *extra, low_priority=False):
    """Chunks through joblib's ``Parallel`` with the active backend (e.g. Dask)."""
    from joblib import Parallel, delayed

    call = partial(_low_priority_call, func) if low_priority else func
    todo, inline = list(spans), True
    for attempt in range(RETRIES + 1):
        # Dispatch starts at once; the first chunk is computed here meanwhile, so the first
        # partial result does not wait for the workers to start.
        parallel = Parallel(n_jobs=n_jobs, batch_size=1, return_as="generator")  # no batching: steady updates
        results = parallel(delayed(call)(pop, entropy, start, stop, *extra) for start, stop in todo[inline:])
        try:
            if inline:
                yield todo[0][1], func(pop, entropy, *todo[0], *extra)
                todo, inline = todo[1:], False
            for res in results:
                yield todo[0][1], res
                todo = todo[1:]
            return
        except Exception as err:
            # At interpreter exit joblib shuts the pool down too: then stop, do not start a new one.
            if attempt == RETRIES or not _pool_lost(err) or not threading.main_thread().is_alive():
                raise
        finally:
            # Closed here, in the thread that started it: a joblib generator left to the garbage
            # collector may be finalised in another thread, even at interpreter exit.
            results.close()


def workers_running() -> bool:
    """True when the process-wide worker pool (:mod:`dpci.experiments.engine`) has live workers."""
    from .engine import get_engine

    return get_engine().workers_running()


def warm_up_workers(n_jobs=-1):
    """Start the worker processes now, so the first parallel chunks do not wait for them (the app
    calls this when :func:`workers_running` says none are; they are reused afterwards, and stop
    after :data:`dpci.experiments.engine.IDLE_SECONDS` without work)."""
    from .engine import get_engine

    get_engine().warm_up(_workers(n_jobs))


def _entropy(spec: ReleaseSpec, random_state) -> int:
    """The replicate streams' entropy: from ``random_state`` when given, else from the spec's seed
    (None: fresh)."""
    return stream_entropy(spec.seed if random_state is None else random_state)


def iter_variability(
    X,
    y,
    spec: ReleaseSpec,
    n_replicates=10_000,
    random_state=None,
    chunk_size=None,
    n_jobs=1,
    low_priority=False,
    precision=None,
    private=True,
):
    """Yield :class:`VariabilityProgress` after each chunk of bootstrap replicates (Section 7.2).

    ``spec`` (a :class:`dpci.ReleaseSpec`) gives the method, its notion, budget and split, the loss,
    c and alpha; each replicate runs its coefficient mechanism. ``private=False`` gives the
    non-private bootstrap of theta-hat at the spec's loss and c instead. ``random_state`` (None, an int
    or a Generator) seeds the replicates' streams; None takes the spec's seed (None there: fresh).
    ``low_priority`` runs the worker processes (n_jobs != 1) at a lower scheduling priority. With
    ``precision`` (a fraction in (0, 1)) the run stops before ``n_replicates`` once every endpoint's
    Monte Carlo standard error is at most ``precision`` times its coordinate's interval width
    (:mod:`dpci.experiments.stopping`); the last state then has ``converged`` True and ``done`` the
    replicates the intervals use.
    """
    spec = check_spec(spec, "iter_variability")
    alpha = spec.alpha
    n_replicates = check_count("n_replicates", n_replicates, 1)
    target = stopping.check_precision(precision, "the endpoints' Monte Carlo error as a fraction of the width")
    pop = _population(X, y, spec, private)
    entropy, start = _entropy(spec, random_state), time.perf_counter()
    n = pop.A.shape[0]
    spans = _spans(int(n_replicates), chunk_size or default_chunk_size(n), block_size(n))
    rule = None
    if target is not None:
        least = stopping.normal_replicates(alpha, target)  # A&B's step 1: no check before it
        first = stopping.first_checkpoint(stopping.VARIABILITY_FIRST, n_replicates, stopping.VARIABILITY_STEP, least)
        error_of = partial(stopping.largest_endpoint_error, alpha=alpha)
        rule = stopping.Rule(target, first, stopping.VARIABILITY_STEP, n_replicates, error_of)
    runs = _run_chunks(_variability_chunk, pop, entropy, int(n_replicates), spans, n_jobs, low_priority=low_priority)
    state = partial(VariabilityProgress, total=n_replicates, theta0=pop.theta0, alpha=alpha, precision=target)
    yield from _states(runs, np.vstack, state, "estimates", start, rule)


def _covered(theta0, bounds):
    """(k, d): whether each of k replicates' intervals (k, d, 2) holds theta0."""
    return (bounds[..., 0] <= theta0) & (theta0 <= bounds[..., 1])


def _states(runs, join, state, field, start, rule, checked=None):
    """``state(done=..., <field>=rows, elapsed=...)`` after each chunk of ``runs``, whose rows
    ``join`` puts together. With a stopping ``rule`` (applied to ``checked(rows)``, or the rows),
    the last state is the first check that passes, made on the rows before its checkpoint only,
    and this run's chunks still pending are cancelled."""
    parts: list = []
    checkpoint = None if rule is None else rule.first
    with closing(runs):  # closed here, in this thread: a run that stops cancels its pending chunks
        for done, part in runs:
            parts.append(part)
            rows = join(parts)
            if rule is not None:
                stop, checkpoint = stopping.run_checks(rows if checked is None else checked(rows), checkpoint, rule)
                if stop is not None:
                    elapsed = time.perf_counter() - start
                    yield state(done=stop, **{field: rows[:stop]}, elapsed=elapsed, converged=True)
                    return
            yield state(done=done, **{field: rows}, elapsed=time.perf_counter() - start)


def iter_coverage(
    X,
    y,
    spec: ReleaseSpec,
    n_replicates=1_000,
    random_state=None,
    chunk_size=None,
    n_jobs=1,
    precision=None,
):
    """Yield :class:`CoverageProgress` after each chunk of replicates: the full private interval
    (Algorithm 3 or 5) of ``spec`` (a :class:`dpci.ReleaseSpec`, its m Monte Carlo draws included)
    on each bootstrap replicate, checked against theta_0 (Section 7.2). ``random_state`` as
    :func:`iter_variability`. With ``precision`` the run stops before ``n_replicates`` once the
    overall coverage's standard error is at most ``precision``
    (:func:`dpci.experiments.stopping.coverage_error`)."""
    spec = check_spec(spec, "iter_coverage")
    alpha = spec.alpha
    n_replicates = check_count("n_replicates", n_replicates, 1)
    target = stopping.check_precision(precision, "the standard error of the coverage to stop at")
    pop = _population(X, y, spec, True)
    entropy, start = _entropy(spec, random_state), time.perf_counter()
    # each replicate also runs Monte Carlo: over 10x the work of a variability replicate
    n = pop.A.shape[0]
    spans = _spans(int(n_replicates), chunk_size or default_chunk_size(n) // 16, block_size(n, COVERAGE_BLOCK))
    rule = None
    if target is not None:
        first = stopping.first_checkpoint(stopping.COVERAGE_FIRST, n_replicates)
        error_of = partial(stopping.coverage_error, alpha=alpha)
        rule = stopping.Rule(target, first, stopping.COVERAGE_STEP, n_replicates, error_of)
    runs = _run_chunks(_coverage_chunk, pop, entropy, int(n_replicates), spans, n_jobs)
    state = partial(CoverageProgress, total=n_replicates, theta0=pop.theta0, alpha=alpha, precision=target)
    covered = partial(_covered, pop.theta0)
    yield from _states(runs, np.concatenate, state, "bounds", start, rule, checked=covered)


def _last(generator):
    result = None
    for result in generator:
        pass
    return result


def variability_intervals(X, y, spec: ReleaseSpec, **kwargs) -> VariabilityProgress:
    """Run :func:`iter_variability` to the end and return its final state."""
    return _last(iter_variability(X, y, spec, **kwargs))


def coverage(X, y, spec: ReleaseSpec, **kwargs) -> CoverageProgress:
    """Run :func:`iter_coverage` to the end and return its final state."""
    return _last(iter_coverage(X, y, spec, **kwargs))
