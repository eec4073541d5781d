"""Exact minimiser of the regularised (and possibly perturbed) empirical risk.

    J(theta) = (1/n) sum_i w_i f(a_i . theta) + c ||theta||^2 + (1/n) b . theta

with a_i = y_i x_i (so z_i = y_i theta . x_i): Eq. 3.1 when b = 0, and the
objective-perturbation objective of Algorithm 1 (line 3) when b = beta. The
weights w_i (default 1) let a bootstrap replicate be solved without copying rows.

Objective perturbation's privacy proof (Theorem 1, Appendix A.1) holds for the
*exact* minimiser, so the solver runs a damped Newton method until the gradient
norm is below ``tol`` (1e-10 by default) and raises ``ConvergenceError`` rather
than return an approximate point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_BLOCK = 4096  # columns per block of a Gram product: the block and its weighted copy stay in cache


class ConvergenceError(RuntimeError):
    """The solver did not reach the requested gradient norm.

    Objective perturbation's guarantee needs the exact minimiser (Algorithm 1), so a release stops
    rather than use an approximate one; a larger c makes the problem better conditioned. A
    ``RuntimeError``, not a ``ValueError``: the settings are valid, the numerics failed.

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> from dpci.solver import margin_rows, minimise_erm
    >>> X, y = make_synthetic_logistic(2_000, [1.0, -0.5], random_state=0)
    >>> try:
    ...     minimise_erm(margin_rows(X, y), dpci.LogisticLoss(), c=1e-3, max_iter=1)
    ... except dpci.ConvergenceError as error:
    ...     print(str(error).split(" with")[0])
    Newton solver stopped after 1 iterations
    """


@dataclass(frozen=True)
class SolverResult:
    theta: np.ndarray
    n_iter: int
    grad_norm: float
    n_hessians: int = 0


def margin_rows(X, y, divisors=None):
    """A = diag(y) X in Fortran order, so that A.T (used by every pass below) is C-contiguous.

    ``divisors`` (:func:`dpci.validation.unit_ball_divisors`) project the rows just outside the unit
    ball in the same pass: row i becomes x_i / (y_i s_i), bit for bit y_i (x_i / s_i) as y_i = +-1.
    Written as A.T, a block of rows at a time: a transposing copy in cache-sized pieces.
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    op, by = (np.multiply, y) if divisors is None else (np.divide, y * divisors)
    AT = np.empty((X.shape[1], X.shape[0]))
    for start in range(0, X.shape[0], _BLOCK):
        rows = slice(start, start + _BLOCK)
        op(X[rows].T, by[rows], out=AT[:, rows])
    return AT.T


def row_major_transpose(A):
    """A.T as a C-contiguous (d, n) array, without a copy when A is Fortran-ordered."""
    return A.T if A.T.flags.c_contiguous else np.ascontiguousarray(A.T)


def _cholesky_solve(lower, b):
    """Solve (L L^T) x = b for a Cholesky factor L (d is small: two generic solves suffice)."""
    return np.linalg.solve(lower.T, np.linalg.solve(lower, b))


def weighted_gram(AT, w):
    """A^T diag(w) A from AT = A.T (d, n), in cache-sized blocks of rows."""
    d, n = AT.shape
    gram = np.zeros((d, d))
    for start in range(0, n, _BLOCK):
        block = AT[:, start : start + _BLOCK]
        gram += (block * w[start : start + _BLOCK]) @ block.T
    return gram


def minimise_erm(A, loss, c, linear=None, weights=None, tol=1e-10, max_iter=100, theta_init=None) -> SolverResult:
    """Minimise J(theta) above by Newton's method with an Armijo backtracking line search.

    The Hessian is refreshed unless the previous step was a full step that cut the
    gradient norm tenfold, in which case it is reused (a chord step); only the path
    changes, not the stopping rule ||grad J|| <= tol. J itself (a logarithm per row for
    logistic regression) is computed only for a step that the gradient at its end does not
    already prove good: J is convex (f convex, w >= 0, c > 0), so the Armijo decrease holds when
    J's slope along the step is still below 1e-4 of its first slope there; a full step that cuts
    the gradient tenfold is taken as Newton's method converging. On Adult no step needs J.

    Parameters
    ----------
    A : ndarray (n, d)
        Rows y_i x_i (Fortran order avoids a transposed copy: see :func:`margin_rows`).
    loss : a loss of :mod:`dpci.losses`.
    c : float
        Regularisation coefficient (> 0 makes J 2c-strongly convex).
    linear : ndarray (d,), optional
        The vector b of the linear term (1/n) b . theta (beta of Algorithm 1).
    weights : ndarray (n,), optional
        Row multiplicities (bootstrap counts); the objective still divides by n = len(A).
    tol : float
        Stop when ||grad J||_2 <= tol.
    theta_init : ndarray (d,), optional
        Starting point (a warm start changes the path, not the minimiser).
    """
    n, d = A.shape
    AT = row_major_transpose(A)
    b_over_n = np.zeros(d) if linear is None else np.asarray(linear, dtype=float) / n
    theta = np.zeros(d) if theta_init is None else np.array(theta_init, dtype=float)

    def evaluate(th):
        """(grad J, its norm, f'') at th: J itself is computed only when a step needs it (:func:`objective`)."""
        d1, d2 = loss.derivatives(th @ AT)
        if weights is not None:
            d1, d2 = d1 * weights, d2 * weights
        grad = AT @ d1 / n + 2.0 * c * th + b_over_n
        return grad, float(np.linalg.norm(grad)), d2

    def objective(th):
        f = loss.value(th @ AT)
        return (f @ weights if weights is not None else f.sum()) / n + c * th @ th + b_over_n @ th

    grad, grad_norm, d2 = evaluate(theta)
    value = None  # J(theta), once a step has needed it
    factor, n_hessians, refresh = None, 0, True
    # From a cold start, or after a step that had to be cut below half, the first Hessian is the
    # majoriser t A^T diag(w) A / n + 2cI (|f''| <= t): its step cannot overshoot. A Huber row outside
    # the quadratic piece has f'' = 0, so a plain Newton step from theta = 0 would be far too long.
    majorise = theta_init is None
    majoriser = None  # its factor: the majoriser does not depend on theta, so it is computed once
    for it in range(max_iter + 1):
        if grad_norm <= tol:
            return SolverResult(theta, it, grad_norm, n_hessians)
        if it == max_iter:
            break
        if majorise and majoriser is not None:
            factor = majoriser
        elif refresh or factor is None or majorise:
            curv = d2 if not majorise else np.full(n, loss.t) if weights is None else loss.t * weights
            hess = weighted_gram(AT, curv) / n
            hess[np.diag_indices(d)] += 2.0 * c
            factor = np.linalg.cholesky(hess)
            majoriser = factor if majorise else majoriser
            n_hessians += 1
        step = -_cholesky_solve(factor, grad)
        slope = grad @ step
        t = 1.0
        while t >= 1e-10:
            cand = theta + t * step
            cand_grad, cand_norm, cand_d2 = evaluate(cand)
            # J is convex, so along the step its slope only grows: J(cand) - J(theta) <= t * grad J(cand) . step.
            # A slope there still below 1e-4 of the first proves the Armijo condition without J; and a full
            # step that cuts the gradient tenfold is Newton's method converging. Either is taken as it is.
            if cand_grad @ step <= 1e-4 * slope or (t == 1.0 and cand_norm <= 0.1 * grad_norm):
                cand_value = None
                break
            value = objective(theta) if value is None else value
            cand_value = objective(cand)
            if cand_value <= value + 1e-4 * t * slope:
                break
            # Near the minimiser the decrease (~ |slope|) falls below the rounding error of J;
            # there a step that keeps J within rounding and shrinks the gradient is taken.
            if cand_value <= value + 1e-13 * (1.0 + abs(value)) and cand_norm < grad_norm:
                break
            # Backtrack to the minimiser of the quadratic through J(0), J'(0) and J(t), kept in [t/10, t/2].
            curvature = cand_value - value - slope * t
            t_quad = -slope * t * t / (2.0 * curvature) if curvature > 0 else 0.5 * t
            t = min(max(t_quad, 0.1 * t), 0.5 * t)
        if t < 1e-10:
            break  # no step improves anything in floating point
        refresh = not (t == 1.0 and cand_norm <= 0.1 * grad_norm) or majorise
        majorise = t < 0.5
        theta, value, grad, grad_norm, d2 = cand, cand_value, cand_grad, cand_norm, cand_d2
    raise ConvergenceError(
        f"Newton solver stopped after {it} iterations with gradient norm {grad_norm:.3g} > tol={tol:g}. "
        "Objective perturbation needs the exact minimiser; try a larger c, or check the data for "
        "extreme rows."
    )
