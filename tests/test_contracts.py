"""Contract tests: every registered loss and every registered method, checked by what they claim.

A new loss (:func:`dpci.losses.register_loss`) or method (:func:`dpci.methods.register`) is tested
by adding it: these tests are parametrised over :data:`dpci.losses.LOSSES` and
:func:`dpci.methods.pairs`, read when the tests are collected.

* a loss: its derivatives against finite differences, |f'| <= 1 and 0 <= f'' <= t (Theorems 1 and
  3), and its sensitivities against a brute-force worst case over neighbouring datasets (Lemmas 2-5);
* a method: its specification as data (JSON and the printed Python call), its privacy map against
  what the ledger charges, its noise law by a Kolmogorov-Smirnov test, and a small coverage check.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpci
from dpci import methods
from dpci.data import make_synthetic_logistic, population_theta0
from dpci.intervals import hessian_and_covariance
from dpci.losses import LOSSES, get_loss, loss_parameters
from dpci.spec import ReleaseSpec


def _losses():
    """Every registered loss at its defaults, and at another value of each parameter it declares."""
    cases = []
    for name in LOSSES:
        cases.append(get_loss(name))
        for param, default in loss_parameters(name).items():
            cases.append(get_loss(name, **{param: default * 0.4}))
    return cases


LOSS_CASES = _losses()
LOSS_IDS = [repr(loss) for loss in LOSS_CASES]


def _away_from_kinks(loss, z, gap=1e-3):
    return z[np.all(np.abs(z[:, None] - np.asarray(loss.kinks or [np.inf])[None, :]) > gap, axis=1)]


@pytest.mark.parametrize("loss", LOSS_CASES, ids=LOSS_IDS)
def test_a_loss_derivatives_match_finite_differences(loss):
    z = _away_from_kinks(loss, np.linspace(-6.0, 6.0, 2401))
    f, d1, d2 = loss.value_and_derivatives(z)
    step = 1e-5
    fd1 = (loss.value(z + step) - loss.value(z - step)) / (2 * step)
    up, down = loss.value_and_derivatives(z + step)[1], loss.value_and_derivatives(z - step)[1]
    fd2 = (up - down) / (2 * step)
    # central differences: error O(step^2 f''') plus rounding O(eps / step) ~ 1e-10 at this step
    np.testing.assert_allclose(d1, fd1, atol=1e-7)
    np.testing.assert_allclose(d2, fd2, atol=1e-5)
    np.testing.assert_allclose(f, loss.value(z), rtol=1e-14, atol=1e-15)
    # every fast path agrees with the plain one
    first, second = loss.derivatives(z)
    np.testing.assert_allclose(first, d1, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(second, d2, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(loss.first_derivative(z), d1, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(loss.second_derivative(z), d2, rtol=1e-12, atol=1e-15)
    w = np.random.default_rng(0).uniform(0.0, 3.0, z.size)
    wd1, wd2 = loss.weighted_derivatives(z.copy(), w, second=True)
    np.testing.assert_allclose(wd1, w * d1, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(wd2, w * d2, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(loss.first_derivative(z, weights=w), w * d1, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("loss", LOSS_CASES, ids=LOSS_IDS)
def test_a_loss_meets_the_bounds_the_proofs_use(loss):
    z = np.linspace(-50.0, 50.0, 200_001)
    _, d1, d2 = loss.value_and_derivatives(z)
    assert np.all(np.abs(d1) <= 1.0 + 1e-12)  # |f'| <= 1 (Theorem 1)
    assert np.all(d2 >= -1e-15) and np.all(d2 <= loss.t + 1e-12)  # convex, |f''| <= t
    assert d2.max() >= 0.95 * loss.t  # t is the bound, not a loose one (the noise scales with it)


def _unit_rows(count):
    angles = np.linspace(0.0, 2 * np.pi, count, endpoint=False)
    return np.column_stack([np.cos(angles), np.sin(angles)])


@pytest.mark.parametrize("loss", LOSS_CASES, ids=LOSS_IDS)
@pytest.mark.parametrize("theta_norm", [0.5, 3.0])
def test_a_loss_sensitivities_bound_the_brute_force_worst_case(loss, theta_norm):
    """Replace-one neighbours differ in one margin row a = y x (Section 3): H and Sigma of Eqs. 4.2-4.3
    change by (f''(z) a a' - f''(z') b b') / n and (f'(z)^2 a a' - f'(z')^2 b b') / n, z = theta.a.
    The worst case over all pairs of rows of a fine grid of the unit circle (and its inside) must stay
    within the declared sensitivity; the library's own matrices are checked to differ by exactly that."""
    n = 50
    theta = np.array([theta_norm, 0.0])
    rows = np.vstack([r * _unit_rows(181) for r in (1.0, 0.6, 0.2)])
    z = rows @ theta
    _, d1, d2 = loss.value_and_derivatives(z)
    outer = np.einsum("ki,kj->kij", rows, rows).reshape(len(rows), -1)
    worst_h = worst_s = 0.0
    for i in range(len(rows)):  # ||f''(z_i) a_i a_i' - f''(z_k) a_k a_k'||_F over every k
        worst_h = max(worst_h, np.linalg.norm(d2[i] * outer[i] - d2[:, None] * outer, axis=1).max() / n)
        worst_s = max(worst_s, np.linalg.norm(d1[i] ** 2 * outer[i] - (d1**2)[:, None] * outer, axis=1).max() / n)
    declared_h, declared_s = loss.hessian_sensitivity(n), loss.covariance_sensitivity(n, theta)
    assert worst_h <= declared_h * (1 + 1e-12)
    assert worst_s <= declared_s * (1 + 1e-12)
    if d2.max() >= 0.95 * loss.t:  # the margins reach where f'' peaks: the bound is not loose there
        assert worst_h >= 0.5 * declared_h
    # the library's matrices move by exactly the one-row change
    rng = np.random.default_rng(1)
    A = rows[rng.integers(0, len(rows), n)]
    B = A.copy()
    B[0] = rows[rng.integers(0, len(rows))]
    H_a, S_a = hessian_and_covariance(A, loss, theta, 1e-3)
    H_b, S_b = hessian_and_covariance(B, loss, theta, 1e-3)
    za, zb = A[0] @ theta, B[0] @ theta
    first, second = loss.value_and_derivatives(np.array([za, zb]))[1:]
    expect_h = (second[0] * np.outer(A[0], A[0]) - second[1] * np.outer(B[0], B[0])) / n
    np.testing.assert_allclose(H_a - H_b, expect_h, atol=1e-14)
    expect_s = (first[0] ** 2 * np.outer(A[0], A[0]) - first[1] ** 2 * np.outer(B[0], B[0])) / n
    np.testing.assert_allclose(S_a - S_b, expect_s, atol=1e-14)


# ---------------------------------------------------------------------------------------- methods
PAIRS = methods.pairs()


def _spec(method, notion, **changes):
    budget = 2.0 if notion == "pure" else 1.0
    return ReleaseSpec(method, notion, budget, **{"c": 1e-2, "n_samples": 1_000, **changes})


@pytest.mark.parametrize(("method", "notion"), PAIRS)
def test_a_method_spec_is_data_and_prints_as_the_call_that_makes_it(method, notion):
    for loss in LOSS_CASES:
        spec = _spec(method, notion, loss=loss, seed=7)
        assert ReleaseSpec.from_json(spec.to_json()) == spec
        assert ReleaseSpec.from_json(spec.to_json()).key == spec.key
        namespace: dict = {}
        exec(f"from dpci import ReleaseSpec, get_loss\nspec = {spec!r}", namespace)
        assert namespace["spec"] == spec
        assert list(spec.to_dict()["split"]) == list(methods.get(method).steps)
    assert _spec(method, notion).noise_key == _spec(method, notion, alpha=0.1, n_samples=2_000).noise_key
    assert _spec(method, notion).noise_key != _spec(method, notion, c=2e-2).noise_key


@pytest.mark.parametrize(("method", "notion"), PAIRS)
def test_a_method_privacy_map_is_what_the_ledger_charges(method, notion, tmp_path):
    from dpci.ledger import Budget, Ledger

    spec = _spec(method, notion)
    measurement = spec.measure()
    spend = measurement.spend
    steps = methods.get(method).steps
    assert [s.step for s in spend.steps] == list(steps) and len(spec.split) == len(steps)
    # each step's amount is its share of the budget (Proposition 4 composes them)
    for step, share in zip(spend.steps, spec.split):
        amount = step.epsilon if notion == "pure" else step.rho
        assert amount == pytest.approx(share * spec.budget, rel=1e-12)
    assert spend.rho == pytest.approx(math.fsum(s.rho for s in spend.steps), rel=1e-12)
    X, y = make_synthetic_logistic(3_000, np.array([1.0, -0.5, 0.2]), random_state=3)
    budget = Budget.pure(10.0) if notion == "pure" else Budget.zcdp(10.0, 1e-6)
    ledger = Ledger(f"sqlite:///{tmp_path / 'ledger.sqlite3'}", budget=budget)
    with ledger.watching() as watch:
        spec.release(X, y)
        spec.release(X, y)
    status = watch.status()
    charged = spend.epsilon if notion == "pure" else spend.rho
    assert status.releases == 2 and status.spent == pytest.approx(2 * charged, rel=1e-12)
    with ledger.watching() as watch:  # a public seed is noted, never counted as privacy
        spec.replace(seed=1).release(X, y)
    assert watch.status().spent == pytest.approx(2 * charged, rel=1e-12)


def _norm_law(law, d):
    """The law of ||b|| for the method's noise: Gamma(d, 1/gamma) for the spherical Laplace of Eq. 3.2,
    sigma * chi(d) for a Gaussian."""
    if law.kind == "spherical_laplace":
        return stats.gamma(d, scale=1.0 / law.scale)
    return stats.chi(d, scale=law.scale)


@pytest.mark.parametrize(("method", "notion"), PAIRS)
def test_a_method_noise_law_by_a_ks_test(method, notion):
    """The coefficients' noise a method declares is the law its sampler draws (KS on 4,000 norms), and
    its scale is the declared coordinate variance."""
    spec = _spec(method, notion)
    measurement = spec.measure()
    law = measurement.check(3_000)
    d = 3
    draws = law.sample(np.random.default_rng(11), d, 4_000)
    assert draws.shape == (4_000, d)
    assert stats.kstest(np.linalg.norm(draws, axis=1), _norm_law(law, d).cdf).pvalue > 1e-3
    assert np.var(draws) == pytest.approx(law.coordinate_variance(d), rel=0.1)


# a method whose replicate is slow (a posterior each: it caps the app's replicates) is checked in the slow run
COVERAGE_PAIRS = [
    pytest.param(m, p, marks=pytest.mark.slow) if methods.get(m).max_replicates is not None else (m, p)
    for m, p in PAIRS
]


@pytest.mark.parametrize(("method", "notion"), COVERAGE_PAIRS)
def test_a_method_small_coverage_check(method, notion):
    """20 releases on fresh samples from a logistic model (n = 4,000, a generous budget): the 90%
    intervals cover the theta_0 the method targets in at least 44 of 60 coordinates (a binomial(60, 0.9)
    falls below 45 with probability < 1e-4)."""
    m = methods.get(method)
    theta = np.array([1.0, -0.5, 0.2])
    n = 4_000
    spec = ReleaseSpec(method, notion, 5.0, c=1e-2, alpha=0.1, n_samples=1_000, seed=None)
    target_c = m.estimand_c(spec.measure(), n, len(theta) - 1)
    theta0 = population_theta0(theta, target_c)
    rng = np.random.default_rng(5)
    covered = 0
    for _ in range(20):
        X, y = make_synthetic_logistic(n, theta, random_state=rng)
        bounds = spec.release(X, y, random_state=rng).conf_int
        covered += int(np.sum((bounds[:, 0] <= theta0) & (theta0 <= bounds[:, 1])))
    assert covered >= 44, f"{method}, {notion}: {covered} of 60"


def test_the_printed_call_gives_the_same_release_for_the_same_seed():
    X, y = make_synthetic_logistic(2_000, np.array([1.0, -0.5, 0.2]), random_state=2)
    for method, notion in PAIRS:
        spec = _spec(method, notion, loss=get_loss("logistic"), seed=12)
        namespace: dict = {}
        exec(f"from dpci import ReleaseSpec, get_loss\nspec = {spec!r}", namespace)
        again = namespace["spec"].release(X, y)
        np.testing.assert_array_equal(again.conf_int, spec.release(X, y).conf_int)
    assert dpci.ReleaseSpec is ReleaseSpec


def test_a_loss_is_stored_with_plain_float_parameters():
    """A parameter given as an int or a NumPy scalar is the same loss: the same JSON, key and printed call."""
    from dpci.losses import HuberLoss

    plain = _spec("output", "zcdp", loss=HuberLoss(0.25))
    for given in (np.float32(0.25), np.float64(0.25)):
        spec = _spec("output", "zcdp", loss=HuberLoss(given))
        assert spec == plain and spec.key == plain.key and repr(spec) == repr(plain)
    assert _spec("output", "zcdp", loss=HuberLoss(1)).key == _spec("output", "zcdp", loss=HuberLoss(1.0)).key


def test_an_unusable_random_state_is_refused_before_the_ledger_charges(tmp_path):
    from dpci.ledger import Budget, Ledger

    X, y = make_synthetic_logistic(1_000, np.array([1.0, -0.5, 0.2]), random_state=3)
    ledger = Ledger(f"sqlite:///{tmp_path / 'ledger.sqlite3'}", budget=Budget.pure(5.0))
    with ledger.watching() as watch:
        with pytest.raises(ValueError, match="random_state must be"):
            _spec("output", "pure").release(X, y, random_state="oops")
    assert not watch.admissions  # nothing charged, nothing noted
