"""Many exact minimisers at once: bootstrap replicates of one dataset.

Replicate b minimises

    J_b(theta) = (1/n) sum_i W[b, i] f(a_i . theta) + c ||theta||^2 + (1/n) L[b] . theta

(row multiplicities W[b] from the bootstrap, L[b] the noise of Algorithm 1 or 0).
All replicates take chord-Newton steps with one shared Hessian, the full data's at
the starting point; a bootstrap replicate's Hessian differs from it by O(1/sqrt(n)),
so the steps contract fast, and every pass over the data is one matrix product for
the whole batch. A replicate whose gradient stops shrinking is finished by the
single-problem Newton solver, so every returned minimiser has ||grad J_b|| <= tol,
the same exactness as :func:`dpci.solver.minimise_erm`.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .solver import minimise_erm, row_major_transpose, weighted_gram


def shared_hessian_factor(A, loss, c, theta):
    """Cholesky factor of the full data's Hessian H[J_n(theta)] (Eq. 4.2), shared by the batch."""
    AT = row_major_transpose(A)
    d2 = loss.derivatives(theta @ AT)[1]
    hess = weighted_gram(AT, d2) / A.shape[0]
    hess[np.diag_indices(A.shape[1])] += 2.0 * c
    return cho_factor(hess)


def minimise_erm_batch(A, loss, c, weights=None, linear=None, theta_init=None, tol=1e-10, max_iter=40, factor=None):
    """Exact minimisers of J_b for every row of ``weights`` (B, n) and ``linear`` (B, d).

    Parameters
    ----------
    A : ndarray (n, d)
        Rows y_i x_i (Fortran order avoids a copy).
    weights : ndarray (B, n) or None
        Row multiplicities of each replicate (None: every row once).
    linear : ndarray (B, d) or None
        The vectors b of the linear terms (None: no linear term).
    theta_init : ndarray (d,) or None
        Common starting point; None starts from the full data's minimiser.
    factor : optional
        A precomputed :func:`shared_hessian_factor` at ``theta_init`` (speed only).

    Returns
    -------
    ndarray (B, d)
    """
    n, d = A.shape
    if weights is None and linear is None:
        raise ValueError("give weights, linear terms or both: they define the batch")
    B = len(weights) if weights is not None else len(linear)
    if theta_init is None:
        theta_init = minimise_erm(A, loss, c, tol=tol).theta
    if factor is None:
        factor = shared_hessian_factor(A, loss, c, theta_init)
    lin = np.zeros((B, d)) if linear is None else np.asarray(linear, dtype=float) / n
    theta = np.tile(np.asarray(theta_init, dtype=float), (B, 1))
    active = np.arange(B)
    prev_norm = np.full(B, np.inf)
    stalled = []
    for _ in range(max_iter):
        th = theta[active]
        d1 = loss.first_derivative(th @ A.T)  # (b, n): one product for the whole batch
        if weights is not None:
            d1 *= weights[active]
        grad = d1 @ A / n + 2.0 * c * th + lin[active]
        norm = np.sqrt(np.einsum("ij,ij->i", grad, grad))
        done = norm <= tol
        stuck = ~done & (norm > 0.5 * prev_norm[active])
        stalled.extend(active[stuck].tolist())
        keep = ~done & ~stuck
        if not keep.any():
            active = active[:0]
            break
        prev_norm[active[keep]] = norm[keep]
        theta[active[keep]] = th[keep] - cho_solve(factor, grad[keep].T).T
        active = active[keep]
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
