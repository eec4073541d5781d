"""Many exact minimisers at once: bootstrap replicates of one dataset.

Replicate b minimises

    J_b(theta) = (1/n) sum_i W[b, i] f(a_i . theta) + c ||theta||^2 + (1/n) L[b] . theta

(row multiplicities W[b] from the bootstrap, L[b] the noise of Algorithm 1 or 0).
Every replicate starts at the full data's minimiser theta_0, where f'(a_i . theta_0) is
shared: every replicate's gradient there, (1/n) sum_i W[b, i] f'_i a_i + 2c theta_0 + L[b]/n,
comes from one product W @ [f'_i a_i] (no exponential), and the first Newton step uses the
full data's Hessian at theta_0 (each replicate's own would make it a little better, for a
product d(d + 1)/2 columns wide, and buy no pass later). The first pass over the data (at
the first iterate) computes every replicate's own Hessian there, so that from there Newton's
method converges quadratically: for logistic regression on Adult a replicate's gradient
falls from ~3e-5 (first iterate) to ~3e-9 to ~1e-13 <= tol, three passes where chord steps
with the Hessians at theta_0 took five or six. Later passes reuse those Hessians (chord
steps) and recompute them only when the gradients stop contracting tenfold per step (a
Huber row crossing a kink changes the Hessian). Every pass over the data is one matrix
product for the whole batch. The Hessians only choose the steps, so they are computed in
single precision (half the work), and so is the whole first pass, whose gradients (~3e-5,
with errors ~1e-9) only take a step; the gradients that decide when to stop are in double
precision. A replicate whose gradient stops shrinking is finished by the single-problem
Newton solver, so every returned minimiser has ||grad J_b|| <= tol, the exactness of
:func:`dpci.solver.minimise_erm`.

For wide rows (d >= SHARED_HESSIAN_D) the replicates' own Hessians are not formed: every replicate
takes quasi-Newton steps from the full data's Hessian at theta_0, BFGS-updated per replicate
(:func:`dpci.solver.minimise_erm_shared`), one pass over the rows per step, to the same stopping rule.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from .solver import SharedStart, finish_singly, minimise_erm, minimise_erm_shared, row_major_transpose, shared_start

try:
    from numpy._core.multiarray import _set_madvise_hugepage  # type: ignore[attr-defined]
except ImportError:  # numpy < 2
    from numpy.core.multiarray import _set_madvise_hugepage  # type: ignore[no-redef]

_PAGES_LOCK = threading.Lock()


def _empty(shape, dtype=np.float64, order="C") -> np.ndarray:
    """``np.empty`` without NumPy's request for transparent huge pages (made for arrays of 4 MB and
    more). Where the kernel then compacts memory before it gives a huge page (``defrag = madvise``,
    Debian's default), the first touch of the solver's fresh arrays took 2-3x longer: a worker's
    first chunk on Adult 30-60 ms instead of 25 ms, and the shared start 4-18 ms instead of 5 ms,
    with the passes no faster afterwards. NumPy's switch is process-wide: it is turned off for
    this allocation only, under a lock, so the caller's other arrays are untouched."""
    with _PAGES_LOCK:
        previous = _set_madvise_hugepage(False)
        try:
            return np.empty(shape, dtype, order=order)
        finally:
            _set_madvise_hugepage(previous)


@dataclass(frozen=True)
class BatchStart:
    """What every batch of one dataset shares: theta_0, f' and f'' there, and the row products a_i a_i^T."""

    theta: np.ndarray
    curvature: np.ndarray = field(repr=False)  # f''(a_i . theta), shape (n,)
    products: np.ndarray = field(repr=False)  # a_ij a_ik for j <= k, float32, shape (n, d (d + 1) / 2)
    slopes: np.ndarray = field(repr=False)  # f'(a_i . theta) a_i, float32, shape (n, d)
    hessian: np.ndarray = field(repr=False)  # sum_i f''(a_i . theta) a_ij a_ik for j <= k (every row once)
    rows: np.ndarray = field(repr=False)  # A^T in single precision, (d, n)
    margins: np.ndarray = field(repr=False)  # a_i . theta in single precision, (n,)


# From this many coefficients on, replicates are solved by steps from the full data's Hessian
# (:func:`dpci.solver.minimise_erm_shared`): each replicate's own Hessians cost n d (d + 1) / 2
# multiply-adds, and the row products they are formed from n d (d + 1) / 2 floats of memory (2.4 GB
# at n = 30,000, d = 200). Measured at n = 30,000, 32 replicates of objective perturbation, one
# thread: those steps (then chord steps) were slower at d = 16 and 24, 1.2-1.7x faster at d = 50.
SHARED_HESSIAN_D = 40


def batch_start(A, loss, theta) -> BatchStart | SharedStart:
    """Precompute the shared pieces of the replicate Hessians and gradients at ``theta`` (for wide rows,
    d >= SHARED_HESSIAN_D, the full data's Hessian only)."""
    if A.shape[1] >= SHARED_HESSIAN_D:
        return shared_start(A, loss, theta)
    return _hessian_start(A, loss, theta)


def _hessian_start(A, loss, theta) -> BatchStart:
    """The :class:`BatchStart` at ``theta``: what each replicate's own Hessians are formed from."""
    theta = np.asarray(theta, dtype=float)
    n, d = A.shape
    upper = np.triu_indices(d)
    margins = theta @ row_major_transpose(A)
    slope, curvature = loss.derivatives(margins)
    # Column by column into Fortran arrays: 40x faster than fancy-indexed copies at n = 450,000,
    # which kept the first progress update of a large bootstrap waiting.
    products = _empty((n, len(upper[0])), np.float32, order="F")
    column = np.empty(n)
    for k, (i, j) in enumerate(zip(*upper)):
        products[:, k] = np.multiply(A[:, i], A[:, j], out=column)
    slopes = _empty((n, d), np.float32, order="F")
    for col in range(d):
        slopes[:, col] = np.multiply(A[:, col], slope, out=column)
    hessian = curvature.astype(np.float32) @ products
    rows = row_major_transpose(A).astype(np.float32)
    return BatchStart(theta, curvature, products, slopes, hessian, rows, margins.astype(np.float32))


_LOCAL = threading.local()  # the calling thread's scratch space, inside scratch_space()
_STASH: list[dict] = []  # spaces given back, for the next scratch_space() in any thread
_STASH_LOCK = threading.Lock()
STASH_SPACES = 2  # spaces kept for later (more are dropped when given back)
SCRATCH_LIMIT = 64 * 2**20  # bytes: larger scratch arrays are allocated afresh, not kept


@contextmanager
def scratch_space():
    """Within this block, :func:`scratch` arrays of the calling thread come from one space (a dict
    of arrays), one given back by an earlier block in any thread if there is one. A fresh array of
    a few MB costs the kernel's zeroing of its pages on first touch (~1-2 ms per MB here, more than
    the arithmetic done on it), and runs come in new threads (one per job in the app), so the
    spaces are kept per process, at most STASH_SPACES of them."""
    with _STASH_LOCK:
        space = _STASH.pop() if _STASH else {}
    previous, _LOCAL.space = getattr(_LOCAL, "space", None), space
    try:
        yield
    finally:
        _LOCAL.space = previous
        with _STASH_LOCK:
            if len(_STASH) < STASH_SPACES:
                _STASH.append(space)


def scratch(name: str, shape, dtype=np.float64) -> np.ndarray:
    """An uninitialised array of ``shape``: inside :func:`scratch_space`, the space's array called
    ``name`` (grown when too small), which later calls with that name reuse; outside, a new one."""
    size, dtype = int(np.prod(shape)), np.dtype(dtype)
    space = getattr(_LOCAL, "space", None)
    if space is None or size * dtype.itemsize > SCRATCH_LIMIT:
        return _empty(shape, dtype)
    buf = space.get((name, dtype))
    if buf is None or buf.size < size:
        buf = space[(name, dtype)] = _empty(size, dtype)
    return buf[:size].reshape(shape)


def _single(name: str, x) -> np.ndarray:
    """``x`` in single precision, in a scratch array."""
    out = scratch(name, np.shape(x), np.float32)
    out[...] = x
    return out


def _unpack(packed, c, n, d) -> np.ndarray:
    """Symmetric (B, d, d) matrices packed / n + 2cI from their upper triangles ``packed`` (B, d (d + 1) / 2)."""
    upper = np.triu_indices(d)
    packed = np.asarray(packed, dtype=float) / n
    hess = np.zeros((len(packed), d, d))
    hess[:, upper[0], upper[1]] = packed
    hess[:, upper[1], upper[0]] = packed
    hess[:, np.arange(d), np.arange(d)] += 2.0 * c
    return hess


def _first_step(start: BatchStart, weights, lin, c, n):
    """Every replicate's gradient at theta_0 from one product (no exponential), in single precision
    (``weights`` too): it only takes the first step, with the full data's Hessian there. Each replicate's own Hessian
    there would make that step no better where it matters: Newton steps from the next iterate,
    with the replicates' Hessians there, converge just as fast."""
    left = np.ones((1, n), dtype=np.float32) if weights is None else weights
    return (left @ start.slopes).astype(float) / n + 2.0 * c * start.theta + lin


def _first_pass(start: BatchStart, loss, th, weights, lin, c, n, d):
    """Gradients and inverse Hessians at the first iterates ``th``, in single precision: the margins
    as a_i . theta_0 + a_i . (th - theta_0), so that their rounding error is that of the small
    second term. Errors ~1e-9 in these gradients, far below their size (~3e-5), cost nothing: the
    next steps, with double-precision gradients, remove them; no replicate stops on them.
    ``weights`` in single precision."""
    z = np.matmul((th - start.theta).astype(np.float32), start.rows, out=scratch("z32", (len(th), n), np.float32))
    z += start.margins
    d1, d2 = loss.weighted_derivatives(z, weights, second=True, out=scratch("d1_32", z.shape, np.float32))
    inv_hess = np.linalg.inv(_unpack(d2.astype(np.float32, copy=False) @ start.products, c, n, d))
    return (d1 @ start.rows.T).astype(float) / n + 2.0 * c * th + lin, inv_hess


def minimise_erm_batch(
    A, loss, c, weights=None, linear=None, start: BatchStart | SharedStart | None = None, tol=1e-10, max_iter=40
):
    """Exact minimisers of J_b for every row of ``weights`` (B, n) and ``linear`` (B, d).

    Parameters
    ----------
    A : ndarray (n, d)
        Rows y_i x_i (Fortran order avoids a copy).
    weights : ndarray (B, n) or None
        Row multiplicities of each replicate (None: every row once).
    linear : ndarray (B, d) or None
        The vectors b of the linear terms (None: no linear term).
    start : BatchStart or None
        Shared starting point and Hessian pieces (:func:`batch_start`); None starts from
        the full data's minimiser.

    Returns
    -------
    ndarray (B, d)
    """
    n, d = A.shape
    if isinstance(start, SharedStart) or (start is None and d >= SHARED_HESSIAN_D):
        return minimise_erm_shared(A, loss, c, weights, linear, start, tol)
    if weights is None and linear is None:
        raise ValueError("give weights, linear terms or both: they define the batch")
    B = len(weights) if weights is not None else len(linear)
    if start is None:
        start = _hessian_start(A, loss, minimise_erm(A, loss, c, tol=tol).theta)
    AT = row_major_transpose(A)
    lin = np.zeros((B, d)) if linear is None else np.asarray(linear, dtype=float) / n
    theta = np.tile(start.theta, (B, 1))
    weights32 = None if weights is None else _single("weights32", weights)  # for the single-precision parts
    grad = _first_step(start, weights32, lin, c, n)
    # Compacted copies of the active replicates' data; `active` maps them back to the batch.
    # The gradient at theta_0 is in single precision: it takes the first step, never stops one.
    active, W, L = np.arange(B), weights, lin
    prev = np.sqrt(np.einsum("ij,ij->i", grad, grad))
    th = theta - grad @ np.linalg.inv(_unpack(start.hessian[None], c, n, d)[0])  # (symmetric)
    stalled, fresh, refresh = [], False, True
    for it in range(max_iter):
        if it == 0:  # the first iterate's gradients and Hessians
            grad, Hi = _first_pass(start, loss, th, weights32, L, c, n, d)
        else:
            z = np.matmul(th, AT, out=scratch("z", (len(th), n)))  # one product for the whole batch
            d1, d2 = loss.weighted_derivatives(z, W, second=refresh, out=scratch("d1", z.shape))  # overwrites z
            if refresh:  # Newton steps with each replicate's Hessian at its iterate
                Hi = np.linalg.inv(_unpack(_single("d2", d2) @ start.products, c, n, d))
            grad = (d1 @ A) / n + 2.0 * c * th + L
        fresh, refresh = refresh and it > 0, False  # the first step's Hessians were the shared theta_0's
        norm = np.sqrt(np.einsum("ij,ij->i", grad, grad))
        done = norm <= tol
        # No progress even with fresh Hessians: the damped single-problem solver takes over.
        stuck = ~done & (norm >= prev) & fresh
        theta[active[done | stuck]] = th[done | stuck]
        stalled.extend(active[stuck].tolist())
        keep = ~done & ~stuck
        if not keep.all():
            active, th, grad, norm, prev, L, Hi = (
                active[keep],
                th[keep],
                grad[keep],
                norm[keep],
                prev[keep],
                L[keep],
                Hi[keep],
            )
            W = None if W is None else W[keep]
            if not len(active):
                break
        # Steps with the Hessians of the first iterate contract the gradients by ~1e4 on Adult; when
        # they contract less than tenfold (a Huber row crossing a kink), refresh the Hessians next time.
        refresh = bool(np.any(norm > 0.1 * prev))
        prev = norm
        th = th - np.einsum("bij,bj->bi", Hi, grad)
    theta[active] = th
    return finish_singly(A, loss, c, theta, stalled + active.tolist(), weights, linear, tol)
