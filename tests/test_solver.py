"""The Newton solver reaches the exact minimiser: gradient norm below 1e-9 and
agreement with scikit-learn to 1e-6."""

import numpy as np
import pytest
from conftest import logistic_labels, unit_ball_rows
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from dpci.losses import HuberLoss, LogisticLoss
from dpci.solver import ConvergenceError, minimise_erm


def _sklearn_theta(X, y, c):
    n = len(X)
    model = LogisticRegression(C=1 / (2 * c * n), fit_intercept=False, tol=1e-10, max_iter=10000)
    return model.fit(X, y).coef_[0]


def _gradient(A, loss, c, theta, b=None):
    n = len(A)
    g = A.T @ loss.derivatives(A @ theta)[0] / n + 2 * c * theta
    return g if b is None else g + b / n


@pytest.mark.parametrize(
    "n, d, c, scale",
    [(30_000, 11, 1e-3, 1.0), (2_000, 4, 1e-3, 5.0), (500, 20, 1e-2, 2.0), (100, 2, 1e-4, 20.0)],
)
def test_logistic_agrees_with_sklearn(n, d, c, scale):
    rng = np.random.default_rng(n + d)
    X = unit_ball_rows(rng, n, d)
    y = logistic_labels(rng, X, scale * rng.standard_normal(d))
    result = minimise_erm(X * y[:, None], LogisticLoss(), c)
    assert result.grad_norm < 1e-9
    assert np.linalg.norm(_gradient(X * y[:, None], LogisticLoss(), c, result.theta)) < 1e-9
    np.testing.assert_allclose(result.theta, _sklearn_theta(X, y, c), atol=1e-6, rtol=0)


def test_logistic_agrees_with_sklearn_on_adult():
    data = pytest.importorskip("dpci.data")
    ds = data.load_adult(d=10)
    c = 1e-3
    result = minimise_erm(ds.X * ds.y[:, None], LogisticLoss(), c)
    assert result.grad_norm < 1e-9
    np.testing.assert_allclose(result.theta, _sklearn_theta(ds.X, ds.y, c), atol=1e-6, rtol=0)


@pytest.mark.parametrize("h", [0.1, 0.5, 1.0])
def test_huber_reaches_the_minimiser(h):
    rng = np.random.default_rng(int(h * 10))
    n, d, c = 3_000, 5, 1e-3
    X = unit_ball_rows(rng, n, d)
    y = logistic_labels(rng, X, 4 * rng.standard_normal(d))
    A = X * y[:, None]
    loss = HuberLoss(h)
    result = minimise_erm(A, loss, c)
    assert result.grad_norm < 1e-9

    def objective(th):
        return loss.value(A @ th).mean() + c * th @ th

    ref = minimize(
        objective,
        np.zeros(d),
        jac=lambda th: _gradient(A, loss, c, th),
        method="L-BFGS-B",
        options=dict(gtol=1e-12, ftol=1e-15, maxiter=10_000),
    )
    np.testing.assert_allclose(result.theta, ref.x, atol=1e-5, rtol=0)
    assert objective(result.theta) <= objective(ref.x) + 1e-14


def test_linear_term_and_weights():
    rng = np.random.default_rng(5)
    n, d, c = 400, 3, 1e-2
    X = unit_ball_rows(rng, n, d)
    y = rng.choice([-1.0, 1.0], size=n)
    A = X * y[:, None]
    b = rng.standard_normal(d) * 3
    res = minimise_erm(A, LogisticLoss(), c, linear=b)
    assert np.linalg.norm(_gradient(A, LogisticLoss(), c, res.theta, b)) < 1e-10
    # integer weights = repeated rows (the objective divides by the same n in both)
    w = rng.integers(0, 3, size=n).astype(float)
    w *= n / w.sum()
    w = np.round(w)
    rows = np.repeat(np.arange(n), w.astype(int))
    # (1/n) sum w_i f_i + c |theta|^2 is (n'/n) times the objective of the n' repeated rows with c n / n'
    weighted = minimise_erm(A, LogisticLoss(), c, weights=w)
    repeated = minimise_erm(A[rows], LogisticLoss(), c * n / len(rows))
    np.testing.assert_allclose(weighted.theta, repeated.theta, atol=1e-8)


class _Counted:
    """A loss that counts how often the solver asks for J's terms f(z) (not the derivatives)."""

    def __init__(self, loss):
        self.loss, self.values = loss, 0

    def __getattr__(self, name):
        return getattr(self.loss, name)

    def value(self, z):
        self.values += 1
        return self.loss.value(z)

    def value_and_derivatives(self, z):
        self.values += 1
        return self.loss.value_and_derivatives(z)


def test_steps_that_convexity_proves_good_need_no_objective_value():
    """On Adult's shape every Newton step of logistic regression is accepted from gradients alone (J's
    slope along the step, still well below 0 at its end, proves the Armijo decrease: J is convex), so
    f(z), a logarithm per row, is never computed; the minimiser is still exact."""
    rng = np.random.default_rng(11)
    X = unit_ball_rows(rng, 30_000, 11)
    A = X * logistic_labels(rng, X, 2.0 * rng.standard_normal(11))[:, None]
    loss = _Counted(LogisticLoss())
    result = minimise_erm(A, loss, 1e-3, linear=3.0 * rng.standard_normal(11))
    assert loss.values == 0 and result.grad_norm <= 1e-10


@pytest.mark.parametrize("loss", [LogisticLoss(), HuberLoss(0.1)], ids=repr)
def test_a_step_that_overshoots_is_cut_back_by_the_objective(loss):
    """From a start far out, full Newton steps overshoot: the line search then compares J and cuts them,
    and the solver still ends at the exact minimiser (the one found from the cold start)."""
    rng = np.random.default_rng(12)
    X = unit_ball_rows(rng, 2_000, 4)
    A = X * logistic_labels(rng, X, 3.0 * rng.standard_normal(4))[:, None]
    counted = _Counted(loss)
    far = minimise_erm(A, counted, 1e-3, theta_init=np.array([40.0, -40.0, 40.0, -40.0]))
    assert counted.values > 0 and far.grad_norm <= 1e-10
    np.testing.assert_allclose(far.theta, minimise_erm(A, loss, 1e-3).theta, atol=1e-8, rtol=0)


def test_nonconvergence_raises_instead_of_returning_an_approximation():
    rng = np.random.default_rng(6)
    X = unit_ball_rows(rng, 200, 3)
    y = rng.choice([-1.0, 1.0], size=200)
    with pytest.raises(ConvergenceError, match="exact minimiser"):
        minimise_erm(X * y[:, None], LogisticLoss(), 1e-3, max_iter=1)


def _textbook(loss, z):
    """(f, f', f'') written plainly (the formulas of Section 3.3), for the in-place versions to match."""
    if isinstance(loss, LogisticLoss):
        e = np.exp(-np.abs(z))
        inv = 1.0 / (1.0 + e)
        return np.log1p(e) + np.maximum(-z, 0.0), -np.where(z >= 0.0, e * inv, inv), e * inv * inv
    h = loss.h
    u = np.clip(1.0 + h - z, 0.0, 2.0 * h)
    value = u * u / (4.0 * h) + np.maximum(1.0 - h - z, 0.0)
    return value, -u / (2.0 * h), np.where(np.abs(1.0 - z) <= h, 1.0 / (2.0 * h), 0.0)


@pytest.mark.parametrize("loss", [LogisticLoss(), HuberLoss(0.5), HuberLoss(0.1)], ids=repr)
def test_value_and_derivatives_are_the_textbook_formulas_bit_for_bit(loss):
    """The solver's hot path is written in place and without branches per element; it must still be
    the plain formulas to the last bit (signed zeros included), at the kinks and far out too."""
    z = np.random.default_rng(0).standard_normal(5_000) * 4.0
    special = [0.0, -0.0, 1e-300, -1e-300, 40.0, -40.0, 800.0, -800.0, 1e308, -1e308, np.inf, -np.inf]
    kinks = [
        k + s for k in (1.0 - getattr(loss, "h", 0.0), 1.0, 1.0 + getattr(loss, "h", 0.0)) for s in (-1e-16, 0, 1e-16)
    ]
    z = np.concatenate([z, special, kinks])
    with np.errstate(all="ignore"):
        got, want = loss.value_and_derivatives(z), _textbook(loss, z)
        alone = (loss.value(z), *loss.derivatives(z))  # what the solver calls: f only when a step needs it
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
    for a, w in zip(alone, want):
        np.testing.assert_array_equal(a, w)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(w))


@pytest.mark.parametrize("loss", [LogisticLoss(), HuberLoss(0.5)], ids=repr)
@pytest.mark.parametrize("d", [31, 32, 80])
def test_single_precision_steps_reach_the_same_minimiser(monkeypatch, loss, d):
    """From SINGLE_PRECISION_STEPS_D coefficients on, the steps' Hessians are single precision; the stopping
    rule is not: the gradient is <= tol in double precision, and J being 2c-strongly convex, both solves
    lie within tol / (2c) of the minimiser, so within tol / c of each other (with a linear term and weights)."""
    from dpci import solver

    rng = np.random.default_rng(d)
    n, c, tol = 5_000, 1e-3, 1e-10
    X = unit_ball_rows(rng, n, d)
    A = X * logistic_labels(rng, X, 2.0 * rng.standard_normal(d) / np.sqrt(d))[:, None]
    b, w = 3.0 * rng.standard_normal(d), rng.integers(0, 3, size=n).astype(float)
    fast = minimise_erm(A, loss, c, linear=b, weights=w, tol=tol)
    monkeypatch.setattr(solver, "SINGLE_PRECISION_STEPS_D", 10**9)
    exact = minimise_erm(A, loss, c, linear=b, weights=w, tol=tol)
    assert fast.grad_norm <= tol and exact.grad_norm <= tol
    np.testing.assert_allclose(fast.theta, exact.theta, atol=tol / c, rtol=0)


@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize("loss", [LogisticLoss(), HuberLoss(0.5), HuberLoss(0.02)], ids=repr)
@pytest.mark.parametrize("c", [1e-4, 1e-2])
def test_quasi_newton_reaches_the_same_minimiser(monkeypatch, loss, c, warm):
    """From QUASI_NEWTON_D coefficients on, the solve forms one Hessian and then BFGS updates; the stopping
    rule is the same (||grad J|| <= tol in double precision), so it lies within tol / (2c) of the minimiser,
    as Newton's solve does: within tol / c of it, from a cold and a warm start, with a linear term and
    weights. And it forms one Gram product, and one more every QUASI_NEWTON_RESTART steps at most."""
    from dpci import solver

    rng = np.random.default_rng(7)
    n, d, tol = 5_000, 40, 1e-10
    X = unit_ball_rows(rng, n, d)
    A = X * logistic_labels(rng, X, 2.0 * rng.standard_normal(d) / np.sqrt(d))[:, None]
    b, w = 3.0 * rng.standard_normal(d), rng.integers(0, 3, size=n).astype(float)
    start = rng.standard_normal(d) / np.sqrt(d) if warm else None
    quasi = minimise_erm(A, loss, c, linear=b, weights=w, tol=tol, theta_init=start)
    monkeypatch.setattr(solver, "QUASI_NEWTON_D", 10**9)
    newton = minimise_erm(A, loss, c, linear=b, weights=w, tol=tol, theta_init=start)
    assert quasi.grad_norm <= tol and newton.grad_norm <= tol
    assert quasi.n_hessians <= min(1 + quasi.n_iter // solver.QUASI_NEWTON_RESTART, newton.n_hessians)
    np.testing.assert_allclose(quasi.theta, newton.theta, atol=tol / c, rtol=0)


@pytest.mark.parametrize("d", [3, 50, 200])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("zero", [False, True])
def test_one_pass_loss_gradient_equals_the_two_products(d, weighted, zero):
    """The gradient pass a block of rows at a time (several blocks at d = 200) gives sum_i w_i f'(z_i) a_i
    and w_i f''(z_i) as the two whole products do, to 1e-12 and 1e-14 relative (only the order of the
    sums differs, in the margins too)."""
    from dpci.solver import _loss_gradient

    rng = np.random.default_rng(d)
    n, loss = 7_000, LogisticLoss()
    A = np.asfortranarray(unit_ball_rows(rng, n, d))
    theta = np.zeros(d) if zero else rng.standard_normal(d)
    w = rng.integers(0, 3, size=n).astype(float) if weighted else None
    d1, d2 = loss.derivatives(A @ theta)
    if w is not None:
        d1, d2 = d1 * w, d2 * w
    total, curvature = _loss_gradient(A.T, loss, theta, w)
    np.testing.assert_allclose(total, A.T @ d1, rtol=1e-12, atol=1e-12 * np.abs(d1).sum())
    np.testing.assert_allclose(curvature, d2, rtol=1e-14, atol=0)
