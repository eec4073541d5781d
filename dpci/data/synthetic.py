"""Synthetic logistic-regression data with a known population parameter.

Generating distribution
-----------------------
Let ``theta`` have length d'. Raw features ``u`` are uniform in the unit ball
of R^m.

* ``add_constant=True`` (default): m = d' - 1 and
  ``x = (u, 1) / sqrt(1 + ||u||^2)``, i.e. the constant is appended and the
  row divided by its norm, exactly the paper's preprocessing (Section 7.1,
  ERRATA.md: the constant becomes 1/||(u, 1)||). Every row has norm 1 and
  ``theta[-1]`` is the coefficient of the constant.
* ``add_constant=False``: m = d' and ``x = u`` (norm <= 1).

Labels: ``P(y = +1 | x) = S(theta . x)`` with S the sigmoid (Section 3.3).

Population parameter
--------------------
For regularisation c the target of the confidence intervals is (eq. 3.1 with
n -> infinity, Section 4.2)::

    theta0 = argmin_t  E[ f(y t.x) ] + c ||t||^2,

with f the logistic loss or the Huberized hinge loss of width h
(Section 3.3). :func:`population_theta0` computes it as follows.

1. y is integrated out exactly:
   ``E[f(y t.x) | x] = p(x) f(t.x) + (1 - p(x)) f(-t.x)``, p(x) = S(theta.x).
2. Exact reduction to two dimensions. The law of x and p(x) are invariant
   under rotations of the u-space that fix ``w`` (the non-constant part of
   theta); the objective is strictly convex, so theta0 is invariant too and
   lies in span(w/||w||, e_const): ``theta0 = alpha w/||w|| + beta e_const``
   (without a constant: ``theta0 = alpha w/||w||``). Writing
   ``u = r (cos phi e + ...)``, the objective depends only on r (density
   m r^(m-1) on [0, 1]) and phi (density proportional to sin^(m-2) phi on
   [0, pi]; for m = 1, phi is 0 or pi with probability 1/2).
3. Tensor Gauss-Legendre quadrature in (r, phi). For the Huber loss the
   panels are split at the kinks of f' (where |t.x| = 1 +- h), so every panel
   integrand is smooth and the rule converges spectrally. For large m the
   domains are cut where the densities fall below exp(-45) (r near 1, phi
   near pi/2), so the nodes sit where the mass is.
4. Newton's method with the analytic gradient and Hessian of the reduced
   objective (line search far from the solution, full steps near it) until
   the gradient norm is below 1e-13 or the Newton step below 1e-10, first
   with ``n_nodes`` and then with ``2 n_nodes`` nodes per panel; the change
   between the two solutions is reported as the quadrature error estimate.
   Across d' up to 1001, c down to 1e-5 and h down to 0.05, 64 and 150 nodes
   per panel agree to better than 1e-12, far below the 1e-4 target.

Since the objective is 2c-strongly convex, any theta with population gradient
g satisfies ``||theta - theta0|| <= ||g|| / (2c)``; the tests use this with an
independently computed gradient to certify the 1e-4 accuracy, and compare
with large-sample fits within their Monte Carlo standard errors. With c = 0
and the logistic loss the model is well specified and theta0 = theta.

Randomness: every function takes ``random_state`` (None, int or
``numpy.random.Generator``) and uses ``numpy.random.Generator`` only.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from dpci.losses import LogisticLoss, Loss, coerce_loss
from dpci.noise import check_random_state


def _special():
    """scipy.special, imported on first use (it takes most of a second to import)."""
    import scipy.special

    return scipy.special


def _expit(x):
    return _special().expit(x)


#: Quadrature domains are truncated where the density is below exp(-_TAIL).
_TAIL = 45.0


def sample_unit_ball(n: int, m: int, random_state=None) -> np.ndarray:
    """Draw n points uniformly from the unit ball of R^m.

    Parameters
    ----------
    n, m : int
        Number of points and dimension (m >= 1).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray of shape (n, m)
    """
    rng = check_random_state(random_state)
    g = rng.standard_normal((n, m))
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    norms[norms == 0] = 1.0  # probability zero; avoids 0/0
    return g / norms * rng.random((n, 1)) ** (1.0 / m)


def _check_theta(theta, add_constant: bool) -> np.ndarray:
    theta = np.asarray(theta, dtype=np.float64)
    if theta.ndim != 1 or not np.all(np.isfinite(theta)):
        raise ValueError("theta must be a finite 1-d array of coefficients.")
    if len(theta) < (2 if add_constant else 1):
        raise ValueError(
            "theta needs at least one non-constant coefficient "
            f"(length >= {2 if add_constant else 1} with add_constant={add_constant})."
        )
    return theta


def make_synthetic_logistic(
    n: int, theta, *, add_constant: bool = True, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Draw a logistic-regression sample with known coefficients.

    Parameters
    ----------
    n : int
        Number of rows.
    theta : array-like of shape (d',)
        True coefficients; with ``add_constant=True`` the last one belongs to
        the constant feature.
    add_constant : bool, default True
        If True, ``x = (u, 1) / ||(u, 1)||`` with u uniform in the unit ball
        of R^(d'-1) (the paper's "add constant, then normalise"; ||x|| = 1).
        If False, ``x = u`` uniform in the unit ball of R^d'.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    X : numpy.ndarray of shape (n, d')
        Rows with norm <= 1; the constant feature, if any, is the last column.
    y : numpy.ndarray of shape (n,)
        Labels in {-1.0, +1.0} with P(y = +1 | x) = S(theta . x).

    See Also
    --------
    population_theta0 : the population minimiser for this distribution.
    """
    theta = _check_theta(theta, add_constant)
    if not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    rng = check_random_state(random_state)
    if add_constant:
        u = sample_unit_ball(n, len(theta) - 1, rng)
        X = np.column_stack([u, np.ones(n)])
        X /= np.sqrt(1.0 + np.einsum("ij,ij->i", u, u))[:, None]
    else:
        X = sample_unit_ball(n, len(theta), rng)
    y = np.where(rng.random(n) < _expit(X @ theta), 1.0, -1.0)
    return X, y


# ---------------------------------------------------------------- losses
def _loss_derivatives(t: np.ndarray, loss: Loss):
    """Return f(t), f'(t), f''(t) for a margin loss of Section 3.3 (:mod:`dpci.losses`)."""
    return loss.value_and_derivatives(t)


def _objective(theta_r, Z, W, P, c, loss, order: int = 2):
    """Value, gradient and Hessian of sum_k W_k E_y[f(y theta.z_k)] + c||theta||^2."""
    t = Z @ theta_r
    fp, d1p, d2p = _loss_derivatives(t, loss)
    fm, d1m, d2m = _loss_derivatives(-t, loss)
    val = W @ (P * fp + (1.0 - P) * fm) + c * theta_r @ theta_r
    if order == 0:
        return val, None, None
    grad = Z.T @ (W * (P * d1p - (1.0 - P) * d1m)) + 2.0 * c * theta_r
    hess = (Z * (W * (P * d2p + (1.0 - P) * d2m))[:, None]).T @ Z
    hess[np.diag_indices_from(hess)] += 2.0 * c
    return val, grad, hess


# ------------------------------------------------------------ quadrature
@functools.lru_cache(maxsize=16)
def _legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    return _special().roots_legendre(n)


def _gl_panels(breaks: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on consecutive panels.

    ``breaks`` has shape (..., k+1), sorted along the last axis; returns
    nodes and weights of shape (..., k * n). Empty panels get zero weight.
    """
    x, w = _legendre(n)
    lo, hi = breaks[..., :-1, None], breaks[..., 1:, None]
    half = (hi - lo) / 2.0
    nodes = lo + half * (x + 1.0)
    weights = half * w
    shape = breaks.shape[:-1] + (-1,)
    return nodes.reshape(shape), weights.reshape(shape)


class _ReducedDesign:
    """Quadrature for E over x in the two-dimensional reduction (module doc)."""

    def __init__(self, theta: np.ndarray, add_constant: bool):
        self.add_constant = add_constant
        self.m = len(theta) - 1 if add_constant else len(theta)
        w = theta[: self.m]
        a = float(np.linalg.norm(w))
        self.direction = w / a if a > 0 else np.eye(self.m)[0]
        self.theta_true = np.array([a, theta[-1]]) if add_constant else np.array([a])
        # Truncate the domains where the densities are below exp(-_TAIL): for large m
        # ||u|| concentrates near 1 (P(r < r_lo) = r_lo^m) and phi near pi/2
        # (sin^(m-2)(pi/2 +- delta) = cos^(m-2) delta <= exp(-(m-2) delta^2 / 2)).
        m = self.m
        self.r_range = (float(np.exp(-_TAIL / m)) if m > 1 else 0.0, 1.0)
        delta = np.pi / 2 if m <= 2 else min(np.pi / 2, float(np.sqrt(2 * _TAIL / (m - 2))))
        self.phi_range = (np.pi / 2 - delta, np.pi / 2 + delta)

    def full(self, theta_r: np.ndarray) -> np.ndarray:
        """Map reduced coefficients back to R^d'."""
        out = theta_r[0] * self.direction
        return np.append(out, theta_r[1]) if self.add_constant else out

    def _margin_geometry(self, theta_r):
        A = theta_r[0]
        B = theta_r[1] if self.add_constant else 0.0
        return A, B

    def _rho(self, r):
        return np.sqrt(1.0 + r * r) if self.add_constant else np.ones_like(r)

    def _r_breaks(self, theta_r, kinks) -> np.ndarray:
        """r in (0, 1) where a kink curve touches phi = 0 or pi."""
        A, B = self._margin_geometry(theta_r)
        r_lo = self.r_range[0]
        pts = [r_lo, 1.0]
        if A != 0:
            for K in kinks:
                for sgn in (1.0, -1.0):
                    if self.add_constant:
                        # (sgn A r + B)^2 = K^2 (1 + r^2), keep roots of the unsquared form
                        roots = np.roots([A * A - K * K, 2 * sgn * A * B, B * B - K * K])
                        for rt in roots[np.isreal(roots)].real:
                            if r_lo < rt < 1 and abs(sgn * A * rt + B - K * np.sqrt(1 + rt * rt)) < 1e-9:
                                pts.append(float(rt))
                    else:
                        rt = K / (sgn * A)
                        if r_lo < rt < 1:
                            pts.append(float(rt))
        return np.unique(pts)

    def nodes(self, theta_r, n: int, loss: Loss):
        """Reduced points Z (K, q), probability weights W (K,), p(x) P (K,)."""
        kinks = tuple(loss.kinks) + tuple(-k for k in loss.kinks)  # where f'(t) or f'(-t) is not smooth
        m = self.m
        r, wr = _gl_panels(self._r_breaks(theta_r, kinks), n)
        wr = wr * m * r ** (m - 1)  # density of ||u|| for u uniform in the ball
        if m == 1:
            cphi = np.array([1.0, -1.0])[None, :].repeat(len(r), 0)
            wphi = np.full_like(cphi, 0.5)
        else:
            A, B = self._margin_geometry(theta_r)
            rho = self._rho(r)
            lo, hi = self.phi_range
            cols = [np.full_like(r, lo), np.full_like(r, hi)]
            for K in kinks:
                with np.errstate(divide="ignore", invalid="ignore"):
                    cstar = (K * rho - B) / (A * r)
                ok = np.isfinite(cstar) & (np.abs(cstar) < 1)
                cols.append(np.clip(np.where(ok, np.arccos(np.clip(cstar, -1, 1)), lo), lo, hi))
            breaks = np.sort(np.stack(cols, axis=1), axis=1)
            phi, wphi = _gl_panels(breaks, n)
            # density sin^(m-2) phi / B_m, B_m = sqrt(pi) Gamma((m-1)/2) / Gamma(m/2)
            log_norm = 0.5 * np.log(np.pi) + _special().gammaln((m - 1) / 2) - _special().gammaln(m / 2)
            if m == 2:
                wphi = wphi / np.pi
            else:  # nodes of empty panels may sit on phi = 0 or pi, where sin rounds to <= 0
                sin = np.maximum(np.sin(phi), 1e-300)
                wphi = np.where(wphi > 0, wphi * np.exp((m - 2) * np.log(sin) - log_norm), 0.0)
            cphi = np.cos(phi)
        W = (wr[:, None] * wphi).ravel()
        rr = np.broadcast_to(r[:, None], cphi.shape).ravel()
        proj = rr * cphi.ravel()
        if self.add_constant:
            rho = np.sqrt(1.0 + rr * rr)
            Z = np.column_stack([proj / rho, 1.0 / rho])
        else:
            Z = proj[:, None]
        keep = W > 0
        Z, W = Z[keep], W[keep]
        return Z, W, _expit(Z @ self.theta_true)


def _newton(theta_start, node_fn, c, loss, tol, max_iter):
    """Damped Newton on a convex objective whose quadrature may depend on theta.

    Far from the solution a backtracking (Armijo) line search is used; once
    the Newton step is below 1e-6 (1 + ||theta||) full steps are taken (the
    objective's rounding error would defeat a line search there). Stops when
    the gradient norm is <= ``tol`` or after a full step of at most
    1e-10 (1 + ||theta||). Returns (theta, gradient, iterations, last step norm).
    """
    theta = np.array(theta_start, dtype=np.float64)
    Z, W, P = node_fn(theta)
    val, grad, hess = _objective(theta, Z, W, P, c, loss)
    step_norm = np.inf
    for it in range(max_iter):
        if np.linalg.norm(grad) <= tol:
            return theta, grad, it, 0.0
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        step_norm = float(np.linalg.norm(step))
        scale = 1.0 + float(np.linalg.norm(theta))
        s = 1.0
        if step_norm > 1e-6 * scale:
            slope = grad @ step
            while True:
                Zc, Wc, Pc = node_fn(theta - s * step)
                if _objective(theta - s * step, Zc, Wc, Pc, c, loss, order=0)[0] <= val - 1e-4 * s * slope:
                    break
                s *= 0.5
                if s < 1e-12:
                    raise RuntimeError(
                        "population_theta0: line search failed (the objective did not decrease); increase n_nodes or c."
                    )
        theta = theta - s * step
        Z, W, P = node_fn(theta)
        val, grad, hess = _objective(theta, Z, W, P, c, loss)
        if s == 1.0 and step_norm <= 1e-10 * scale:
            return theta, grad, it + 1, step_norm
    raise RuntimeError(
        f"population_theta0: Newton did not converge in {max_iter} iterations (gradient norm "
        f"{np.linalg.norm(grad):.2e}, step {step_norm:.2e}); increase n_nodes, c or max_iter."
    )


def population_theta0(
    theta,
    c: float,
    loss: Loss | str = "logistic",
    h: float | None = None,
    *,
    add_constant: bool = True,
    X=None,
    n_nodes: int = 64,
    tol: float = 1e-13,
    max_iter: int = 100,
    return_info: bool = False,
):
    """Population minimiser theta0 of E[f(y theta.x)] + c ||theta||^2 (eq. 3.1).

    The expectation is under the distribution of
    :func:`make_synthetic_logistic` with the same ``theta`` and
    ``add_constant``; y is integrated out exactly and x by an exact
    two-dimensional reduction with Gauss-Legendre quadrature (see the module
    docstring). Accuracy is far better than 1e-4 (quadrature error estimate
    in ``info``; certified in the tests by the strong-convexity bound
    ``||theta - theta0|| <= ||gradient|| / (2c)``).

    Parameters
    ----------
    theta : array-like of shape (d',)
        True coefficients of the generating logistic model.
    c : float
        Regularisation (>= 0; > 0 for the Huber loss), as in eq. 3.1.
    loss : Loss, default LogisticLoss()
        Loss of the ERM whose population target is wanted: any :class:`dpci.losses.Loss` (a
        registered name is accepted too, built by :func:`dpci.losses.get_loss`).
    h : float, optional
        Deprecated spelling of the Huber width for ``loss="huber"``; pass ``HuberLoss(h)``.
    add_constant : bool, default True
        Distribution of x, as in :func:`make_synthetic_logistic`.
    X : array-like of shape (N, d'), optional
        Instead of the built-in distribution, a large fixed sample of feature
        vectors (e.g. QMC points) whose empirical law defines E over x; y is
        still integrated out exactly with p(x) = S(theta.x). The result then
        carries the Monte Carlo error of that sample.
    n_nodes : int, default 64
        Gauss-Legendre nodes per panel (the final solve uses twice as many).
    tol : float, default 1e-13
        Gradient-norm tolerance of Newton's method.
    max_iter : int, default 100
    return_info : bool, default False
        Also return a dict with ``gradient_norm`` (reduced problem),
        ``newton_step`` (norm of the last Newton step, 0 if the gradient
        tolerance was met), ``iterations``, ``quadrature_error_estimate``
        (change between ``n_nodes`` and ``2 n_nodes``) and ``n_points``.

    Returns
    -------
    theta0 : numpy.ndarray of shape (d',)
    info : dict, only if ``return_info``
    """
    loss = coerce_loss(loss, **({} if h is None else {"h": h}))
    c = float(c)
    if not np.isfinite(c) or c < 0:
        raise ValueError(f"c must be a finite number >= 0, got {c}.")
    if c == 0 and not isinstance(loss, LogisticLoss):
        raise ValueError(
            f"loss {loss.name!r} needs c > 0 (without a ridge term its minimiser may not be unique; "
            "only the logistic loss is strictly convex)."
        )
    theta = _check_theta(theta, add_constant if X is None else False)

    if X is not None:
        Xs = np.asarray(X, dtype=np.float64)
        if Xs.ndim != 2 or Xs.shape[1] != len(theta):
            raise ValueError(f"X must have shape (N, {len(theta)}).")
        W = np.full(len(Xs), 1.0 / len(Xs))
        P = _expit(Xs @ theta)
        est, grad, it, step = _newton(np.zeros(len(theta)), lambda _t: (Xs, W, P), c, loss, tol, max_iter)
        info = {
            "gradient_norm": float(np.linalg.norm(grad)),
            "newton_step": step,
            "iterations": it,
            "quadrature_error_estimate": np.nan,
            "n_points": len(Xs),
        }
        return (est, info) if return_info else est

    design = _ReducedDesign(theta, add_constant)

    def solve(start, n):
        return _newton(start, lambda t: design.nodes(t, n, loss), c, loss, tol, max_iter)

    coarse, _, it1, _ = solve(np.zeros(len(design.theta_true)), n_nodes)
    fine, grad, it2, step = solve(coarse, 2 * n_nodes)
    est = design.full(fine)
    if not return_info:
        return est
    info = {
        "gradient_norm": float(np.linalg.norm(grad)),
        "newton_step": step,
        "iterations": it1 + it2,
        "quadrature_error_estimate": float(np.linalg.norm(fine - coarse)),
        "n_points": len(design.nodes(fine, 2 * n_nodes, loss)[1]),
    }
    return est, info


#: The census-like design's true coefficients (age, education, hours, sex, constant), in the scaled units
#: of :func:`make_census_like`: ||theta|| = 25.2. On the raw scale (age / 90, education / 16, hours / 99,
#: sex in {0, 1}, constant 1) the logit is 3 age + 6 education + 3 hours + sex - 8.5 (P(y = +1) = 0.23).
CENSUS_LIKE_THETA = np.array([3.0, 6.0, 3.0, 1.0, -8.5]) * np.sqrt(5.0)


def make_census_like(n: int, theta=None, *, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """A known-truth design shaped like census data: large coefficients and a near-singular design.

    Four features of Adult's kind, each scaled by a public maximum (age 17-90 with a long right tail,
    years of education 1-16, weekly hours 1-99, a binary sex), and a constant; every row is divided by the
    public divisor sqrt(5), so ||x|| <= 1. The features are all positive and narrow, so the columns are
    nearly collinear with the constant: lambda_min(E[x x']) = 0.0017 (400,000 rows), against 0.097 for
    :func:`make_synthetic_logistic`'s design with d = 5. Labels follow the logistic model with ``theta``
    (default :data:`CENSUS_LIKE_THETA`; well specified: the unpenalised population coefficients are theta).

    Returns
    -------
    X : numpy.ndarray of shape (n, 5)
        Rows with norm <= 1; the constant is the last column.
    y : numpy.ndarray of shape (n,)
        Labels in {-1.0, +1.0}.
    """
    if not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    rng = check_random_state(random_state)
    age = np.clip(rng.gamma(6.0, 4.0, n) + 17.0, 17.0, 90.0) / 90.0
    education = np.clip(np.round(rng.normal(10.0, 2.5, n)), 1.0, 16.0) / 16.0
    hours = np.clip(rng.normal(40.0, 12.0, n), 1.0, 99.0) / 99.0
    sex = (rng.random(n) < 0.67).astype(float)
    X = np.column_stack([age, education, hours, sex, np.ones(n)]) / np.sqrt(5.0)
    theta = CENSUS_LIKE_THETA if theta is None else _check_theta(theta, add_constant=False)
    if theta.shape != (5,):
        raise ValueError(f"theta must have 5 coefficients (the constant's last), got {theta.shape[0]}.")
    y = np.where(rng.random(n) < _expit(X @ theta), 1.0, -1.0)
    return X, y
