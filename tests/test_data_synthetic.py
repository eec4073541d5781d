"""Synthetic logistic data and the population parameter theta0 (eq. 3.1, n -> infinity).

Accuracy of theta0 is shown two ways:

* a certificate: the objective is 2c-strongly convex, so
  ||theta - theta0|| <= ||grad F(theta)|| / (2c); the gradient is computed here
  independently of dpci (full-dimensional polar-coordinate quadrature, no
  symmetry reduction, or scipy.integrate.quad) and must bound the error
  far below 1e-4;
* large-sample fits (sklearn for the logistic loss, L-BFGS for the Huber loss)
  must agree within their Monte Carlo standard errors (sandwich formula). With
  2,000,000 rows that error is about 2e-3 per coordinate, so a sample fit alone
  cannot resolve 1e-4; it checks that the sampler and theta0 describe the same
  distribution.
"""

import numpy as np
import pytest
from scipy import integrate, optimize, stats
from scipy.special import expit, roots_legendre
from sklearn.linear_model import LogisticRegression

from dpci.data import check_random_state, make_synthetic_logistic, population_theta0, sample_unit_ball

THETA = np.array([1.5, -1.0, 0.5])  # two features + constant


def _dloss(t, loss, h):
    """f'(t) written out independently of dpci."""
    if loss == "logistic":
        return -expit(-t)
    return np.where(t > 1 + h, 0.0, np.where(t < 1 - h, -1.0, -(1 + h - t) / (2 * h)))


def _gradient_on_disc(theta0, theta, c, loss, h, add_constant, nr=400, npsi=1024):
    """Population gradient for u uniform in the unit disc, in polar coordinates."""
    x, w = roots_legendre(nr)
    r, wr = (x + 1) / 2, w / 2 * 2 * (x + 1) / 2  # density 2r on [0, 1]
    psi = np.arange(npsi) * 2 * np.pi / npsi  # trapezoid rule: spectral for periodic integrands
    R, P = np.meshgrid(r, psi, indexing="ij")
    W = (wr[:, None] * np.full(npsi, 1 / npsi)).ravel()
    U = np.column_stack([(R * np.cos(P)).ravel(), (R * np.sin(P)).ravel()])
    if add_constant:
        X = np.column_stack([U, np.ones(len(U))]) / np.sqrt(1 + (R**2).ravel())[:, None]
    else:
        X = U
    t, p = X @ theta0, expit(X @ theta)
    return X.T @ (W * (p * _dloss(t, loss, h) - (1 - p) * _dloss(-t, loss, h))) + 2 * c * theta0


@pytest.mark.parametrize("loss, h", [("logistic", None), ("huber", 0.5), ("huber", 0.1)])
@pytest.mark.parametrize("add_constant", [True, False])
def test_theta0_certified_by_independent_gradient(loss, h, add_constant):
    c = 0.01
    theta = THETA if add_constant else THETA[:2]
    theta0, info = population_theta0(theta, c, loss=loss, h=h, add_constant=add_constant, return_info=True)
    g = _gradient_on_disc(theta0, theta, c, loss, h, add_constant)
    error_bound = np.linalg.norm(g) / (2 * c)
    assert error_bound < 1e-5  # certified accuracy, 10x better than the 1e-4 target
    assert info["quadrature_error_estimate"] < 1e-8
    # the same check has power: a point 1e-3 away violates it
    g_off = _gradient_on_disc(theta0 + 1e-3, theta, c, loss, h, add_constant)
    assert np.linalg.norm(g_off) / (2 * c) > 1e-4


def test_theta0_one_dimensional_against_scipy_quad():
    # no constant, d' = 1: x uniform on [-1, 1]
    c, th = 0.05, np.array([2.0])
    for loss, h in [("logistic", None), ("huber", 0.3)]:
        t0 = population_theta0(th, c, loss=loss, h=h, add_constant=False)[0]

        def integrand(x, t0=t0, loss=loss, h=h):
            p = expit(th[0] * x)
            return 0.5 * (p * _dloss(t0 * x, loss, h) - (1 - p) * _dloss(-t0 * x, loss, h)) * x

        pts = (
            None
            if loss == "logistic"
            else sorted({k / t0 for k in (1 - h, 1 + h, -(1 - h), -(1 + h)) if abs(k / t0) < 1})
        )
        g = integrate.quad(integrand, -1, 1, points=pts, epsabs=1e-14, epsrel=1e-13, limit=200)[0] + 2 * c * t0
        assert abs(g) / (2 * c) < 1e-9


@pytest.mark.parametrize("add_constant", [True, False])
def test_theta0_is_theta_without_regularisation(add_constant):
    theta = np.array([0.8, -2.0, 0.3, 1.1, -0.4])
    np.testing.assert_allclose(population_theta0(theta, 0.0, add_constant=add_constant), theta, atol=1e-9)


def test_theta0_in_higher_dimension_is_consistent_across_node_counts():
    rng = np.random.default_rng(5)
    theta = rng.normal(size=41) * 0.5
    for loss, h in [("logistic", None), ("huber", 0.5)]:
        a = population_theta0(theta, 1e-3, loss=loss, h=h, n_nodes=48)
        b = population_theta0(theta, 1e-3, loss=loss, h=h, n_nodes=128)
        np.testing.assert_allclose(a, b, atol=1e-9)
        # theta0 is parallel to theta in the non-constant coordinates (symmetry reduction)
        w, w0 = theta[:-1], a[:-1]
        assert abs(w @ w0) == pytest.approx(np.linalg.norm(w) * np.linalg.norm(w0), rel=1e-12)


def _sandwich_se(X, y, est, c, loss, h):
    z = y * (X @ est)
    if loss == "logistic":
        d1, d2 = -expit(-z), expit(z) * expit(-z)
    else:
        d1 = _dloss(z, "huber", h)
        d2 = ((z >= 1 - h) & (z <= 1 + h)) / (2 * h)
    G = X * (d1 * y)[:, None] + 2 * c * est
    Sigma = np.cov(G, rowvar=False, bias=True)
    H = (X * d2[:, None]).T @ X / len(X) + 2 * c * np.eye(X.shape[1])
    Hi = np.linalg.inv(H)
    return Hi @ Sigma @ Hi / len(X)


def test_theta0_matches_large_logistic_fit():
    c, n = 0.01, 2_000_000
    X, y = make_synthetic_logistic(n, THETA, random_state=20261122)
    # sklearn minimises 0.5||w||^2 + C sum log(1 + exp(-y w.x)); C = 1/(2cn) gives eq. 3.1
    fit = LogisticRegression(C=1 / (2 * c * n), fit_intercept=False, tol=1e-10, max_iter=1000).fit(X, y)
    est = fit.coef_.ravel()
    theta0 = population_theta0(THETA, c)
    V = _sandwich_se(X, y, est, c, "logistic", None)
    diff = est - theta0
    assert np.all(np.abs(diff) < 4.5 * np.sqrt(np.diag(V)))
    assert diff @ np.linalg.solve(V, diff) < stats.chi2.ppf(0.9999, df=3)
    # power: the unregularised truth theta is rejected by the same test
    far = est - THETA
    assert far @ np.linalg.solve(V, far) > 1e3


def test_theta0_matches_large_huber_fit():
    c, h, n = 0.01, 0.5, 1_000_000
    X, y = make_synthetic_logistic(n, THETA, random_state=7)

    def objective(t):
        z = y * (X @ t)
        u = np.clip(1 + h - z, 0, 2 * h)
        f = np.where(z < 1 - h, 1 - z, u * u / (4 * h))
        g = X.T @ (-u / (2 * h) * y) / n + 2 * c * t
        return f.mean() + c * t @ t, g

    res = optimize.minimize(
        objective, np.zeros(3), jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 1000}
    )
    theta0 = population_theta0(THETA, c, loss="huber", h=h)
    V = _sandwich_se(X, y, res.x, c, "huber", h)
    diff = res.x - theta0
    assert np.all(np.abs(diff) < 4.5 * np.sqrt(np.diag(V)))
    far = res.x - population_theta0(THETA, c)  # the logistic theta0 is a different target
    assert far @ np.linalg.solve(V, far) > 1e2


def test_theta0_from_a_feature_sample():
    X, _ = make_synthetic_logistic(200_000, THETA, random_state=3)
    est, info = population_theta0(THETA, 0.01, X=X, return_info=True)
    assert info["n_points"] == 200_000 and info["gradient_norm"] < 1e-10
    np.testing.assert_allclose(est, population_theta0(THETA, 0.01), atol=1e-2)


def test_synthetic_rows_labels_and_reproducibility():
    X, y = make_synthetic_logistic(5000, THETA, random_state=11)
    assert X.shape == (5000, 3)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-12)
    assert np.all(X[:, -1] >= 1 / np.sqrt(2) - 1e-12)  # constant = 1/sqrt(1 + ||u||^2)
    assert set(np.unique(y)) == {-1.0, 1.0}
    X2, y2 = make_synthetic_logistic(5000, THETA, random_state=np.random.default_rng(11))
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    X3, _ = make_synthetic_logistic(5000, THETA, random_state=12)
    assert not np.array_equal(X, X3)
    Xn, _ = make_synthetic_logistic(5000, THETA, add_constant=False, random_state=1)
    assert Xn.shape == (5000, 3) and np.linalg.norm(Xn, axis=1).max() <= 1
    # labels follow the model: mean of y matches E[2 S(theta.x) - 1] within 5 SE
    assert abs(y.mean() - np.mean(2 * expit(X @ THETA) - 1)) < 5 / np.sqrt(5000)


def test_unit_ball_sampler_is_uniform():
    u = sample_unit_ball(200_000, 3, random_state=0)
    r2 = np.einsum("ij,ij->i", u, u)
    assert r2.max() <= 1
    assert abs(r2.mean() - 3 / 5) < 4 * np.sqrt(np.var(r2) / len(r2))  # E||u||^2 = m/(m+2)
    np.testing.assert_allclose(u.mean(axis=0), 0, atol=0.01)


def test_random_state_and_argument_checks():
    assert isinstance(check_random_state(None), np.random.Generator)
    g = np.random.default_rng(0)
    assert check_random_state(g) is g
    with pytest.raises(ValueError, match="Generator"):
        check_random_state(np.random.RandomState(0))
    with pytest.raises(ValueError, match="Generator"):
        check_random_state(True)
    with pytest.raises(ValueError, match="width h"):
        population_theta0(THETA, 0.1, loss="huber", h=0.0)
    with pytest.raises(ValueError, match="c > 0"):
        population_theta0(THETA, 0.0, loss="huber", h=0.5)
    with pytest.raises(ValueError, match="c must be"):
        population_theta0(THETA, -1.0)
    with pytest.raises(ValueError, match="Unknown loss .hinge."):
        population_theta0(THETA, 0.1, loss="hinge")
    with pytest.raises(ValueError, match="non-constant"):
        make_synthetic_logistic(10, [1.0])
