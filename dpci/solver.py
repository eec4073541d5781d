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


class ConvergenceError(RuntimeError):
    """The solver did not reach the requested gradient norm."""


@dataclass(frozen=True)
class SolverResult:
    theta: np.ndarray
    n_iter: int
    grad_norm: float


def weighted_gram(A, w):
    """A^T diag(w) A."""
    return (A * w[:, None]).T @ A


def minimise_erm(A, loss, c, linear=None, weights=None, tol=1e-10, max_iter=100, theta_init=None):
    """Minimise J(theta) above by Newton's method with an Armijo backtracking line search.

    Parameters
    ----------
    A : ndarray (n, d)
        Rows y_i x_i.
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
    b_over_n = np.zeros(d) if linear is None else np.asarray(linear, dtype=float) / n
    theta = np.zeros(d) if theta_init is None else np.array(theta_init, dtype=float)
    two_c_eye = 2.0 * c * np.eye(d)

    def gradient(th, d1):
        return d1 @ A / n + 2.0 * c * th + b_over_n

    def evaluate(th):
        z = A @ th
        f, d1, d2 = loss.value_and_derivatives(z)
        if weights is not None:
            f, d1, d2 = f * weights, d1 * weights, d2 * weights
        return f.sum() / n + c * th @ th + b_over_n @ th, d1, d2

    value, d1, d2 = evaluate(theta)
    grad = gradient(theta, d1)
    grad_norm = float(np.linalg.norm(grad))
    for it in range(max_iter + 1):
        if grad_norm <= tol:
            return SolverResult(theta, it, grad_norm)
        if it == max_iter:
            break
        hess = weighted_gram(A, d2) / n + two_c_eye
        step = -np.linalg.solve(hess, grad)
        slope = grad @ step
        t = 1.0
        while t >= 1e-10:
            cand = theta + t * step
            cand_value, cand_d1, cand_d2 = evaluate(cand)
            cand_grad = gradient(cand, cand_d1)
            cand_norm = float(np.linalg.norm(cand_grad))
            if cand_value <= value + 1e-4 * t * slope:
                break
            # Near the minimiser the decrease (~ |slope|) falls below the rounding error of J;
            # there a step that keeps J within rounding and shrinks the gradient is taken.
            if cand_value <= value + 1e-13 * (1.0 + abs(value)) and cand_norm < grad_norm:
                break
            t *= 0.5
        if t < 1e-10:
            break  # no step improves anything in floating point
        theta, value, d1, d2, grad, grad_norm = cand, cand_value, cand_d1, cand_d2, cand_grad, cand_norm
    raise ConvergenceError(
        f"Newton solver stopped after {it} iterations with gradient norm {grad_norm:.3g} > tol={tol:g}. "
        "Objective perturbation needs the exact minimiser; try a larger c, or check the data for "
        "extreme rows."
    )
