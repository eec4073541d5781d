"""Many exact minimisers at once: bootstrap replicates of one dataset.

Replicate b minimises

    J_b(theta) = (1/n) sum_i W[b, i] f(a_i . theta) + c ||theta||^2 + (1/n) L[b] . theta

(row multiplicities W[b] from the bootstrap, L[b] the noise of Algorithm 1 or 0).
Every replicate starts at the full data's minimiser theta_0 and takes chord-Newton
steps with its own Hessian there, H_b = (1/n) sum_i W[b, i] f''(a_i . theta_0) a_i a_i^T
+ 2cI (one matrix product for the whole batch, since f''(a_i . theta_0) is shared).
The replicates move little from theta_0, so the steps contract fast (about 30x per
step for logistic regression on Adult); when they contract slowly (a Huber row
crossing a kink changes the Hessian) the Hessians are recomputed at the iterates,
and every pass over the data is one matrix product for the whole batch. A replicate whose gradient
stops shrinking is finished by the single-problem Newton solver, so every returned
minimiser has ||grad J_b|| <= tol, the exactness of :func:`dpci.solver.minimise_erm`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .solver import minimise_erm, row_major_transpose


@dataclass(frozen=True)
class BatchStart:
    """What every batch of one dataset shares: theta_0, f'' there, and the row products a_i a_i^T."""

    theta: np.ndarray
    curvature: np.ndarray = field(repr=False)  # f''(a_i . theta), shape (n,)
    products: np.ndarray = field(repr=False)  # a_ij a_ik for j <= k, shape (n, d (d + 1) / 2)


def batch_start(A, loss, theta) -> BatchStart:
    """Precompute the shared pieces of the replicate Hessians at ``theta``."""
    theta = np.asarray(theta, dtype=float)
    upper = np.triu_indices(A.shape[1])
    # Column by column into a Fortran array: 40x faster than fancy-indexed copies at n = 450,000
    # (same numbers to the bit), which kept the first progress update of a large bootstrap waiting.
    products = np.empty((A.shape[0], len(upper[0])), order="F")
    for k, (i, j) in enumerate(zip(*upper)):
        np.multiply(A[:, i], A[:, j], out=products[:, k])
    return BatchStart(theta, loss.derivatives(theta @ row_major_transpose(A))[1], products)


def replicate_hessians(start: BatchStart, weights, c, n, d, curvature=None) -> np.ndarray:
    """H_b for every row of ``weights`` (B, n), shape (B, d, d) (Eq. 4.2): at theta_0, or with
    the replicates' own ``curvature`` f''(a_i . theta_b) (B, n) when given."""
    upper = np.triu_indices(d)
    curvature = start.curvature if curvature is None else curvature
    if weights is None and curvature.ndim == 1:
        packed = (curvature @ start.products)[None, :] / n
    else:
        packed = (curvature if weights is None else weights * curvature) @ start.products / n
    hess = np.zeros((len(packed), d, d))
    hess[:, upper[0], upper[1]] = packed
    hess[:, upper[1], upper[0]] = packed
    hess[:, np.arange(d), np.arange(d)] += 2.0 * c
    return hess


def minimise_erm_batch(A, loss, c, weights=None, linear=None, start: BatchStart | None = None, tol=1e-10, max_iter=40):
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
    if weights is None and linear is None:
        raise ValueError("give weights, linear terms or both: they define the batch")
    B = len(weights) if weights is not None else len(linear)
    if start is None:
        start = batch_start(A, loss, minimise_erm(A, loss, c, tol=tol).theta)
    AT = row_major_transpose(A)
    inv_hess = np.linalg.inv(replicate_hessians(start, weights, c, n, d))
    if weights is None:
        inv_hess = np.broadcast_to(inv_hess, (B, d, d))
    lin = np.zeros((B, d)) if linear is None else np.asarray(linear, dtype=float) / n
    theta = np.tile(start.theta, (B, 1))
    # Compacted copies of the active replicates' data; `active` maps them back to the batch.
    active = np.arange(B)
    th, W, L, Hi = theta.copy(), weights, lin, inv_hess
    prev = np.full(B, np.inf)
    stalled, fresh, refresh = [], False, False
    for _ in range(max_iter):
        z = th @ AT  # (b, n): one product for the whole batch
        if refresh:  # slow contraction: Newton steps with each replicate's Hessian at its iterate
            Hi = np.linalg.inv(replicate_hessians(start, W, c, n, d, loss.second_derivative(z)))
        fresh, refresh = refresh, False
        d1 = loss.first_derivative(z, overwrite=True, weights=W)
        grad = (AT @ d1.T).T / n + 2.0 * c * th + L
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
        # Chord steps contract ~30x per step for logistic regression on Adult; when they do not
        # (a Huber row crossing a kink changes the Hessian), refresh the Hessians next time.
        refresh = bool(np.any(norm > 0.1 * prev))
        prev = norm
        th = th - np.einsum("bij,bj->bi", Hi, grad)
    theta[active] = th
    for b in stalled + active.tolist():
        theta[b] = minimise_erm(
            A,
            loss,
            c,
            linear=None if linear is None else linear[b],
            weights=None if weights is None else weights[b],
            theta_init=theta[b],
            tol=tol,
        ).theta
    return theta
