"""Algorithms 3 and 5: the Monte Carlo draws have the covariance Eq. 4.1 / 5.2 imply,
the zCDP closed form agrees with Monte Carlo, and the non-private sandwich is right."""

import numpy as np
import pytest
from scipy import stats

from dpci import LogisticLoss, nonprivate_confidence_intervals, private_confidence_intervals
from dpci.intervals import column_quantiles, hessian_and_covariance, objective_offsets, output_offsets
from dpci.mechanisms import NoiseLaw


def _random_spd(rng, d, scale):
    B = rng.standard_normal((d, d))
    return B @ B.T * scale + np.eye(d) * scale


def _check_covariance(draws, expected, tol_se=4.5):
    """Each entry of the sample covariance within tol_se Monte Carlo standard errors.

    The standard errors come from 40 batch means, so heavy (Laplace) tails are accounted for.
    """
    batches = np.array([np.cov(b, rowvar=False) for b in np.array_split(draws, 40)])
    sample = batches.mean(axis=0)
    se = batches.std(axis=0, ddof=1) / np.sqrt(len(batches))
    assert np.all(np.abs(sample - expected) <= tol_se * se), (sample, expected, se)


@pytest.mark.parametrize("kind", ["spherical_laplace", "gaussian"])
def test_objective_offsets_have_the_covariance_of_eq_4_1(kind):
    rng = np.random.default_rng(0)
    d, n = 3, 400
    H, S = _random_spd(rng, d, 0.2), _random_spd(rng, d, 0.1)
    law = NoiseLaw(kind, 0.5 if kind == "spherical_laplace" else 2.0)
    draws = objective_offsets(H, S, n, law, 200_000, rng)
    Hi = np.linalg.inv(H)
    expected = Hi @ (S + law.coordinate_variance(d) / n * np.eye(d)) @ Hi / n
    _check_covariance(draws, expected)


def test_output_offsets_have_the_covariance_of_eq_5_2():
    rng = np.random.default_rng(1)
    d, n = 4, 1000
    H, S = _random_spd(rng, d, 0.3), _random_spd(rng, d, 0.2)
    law = NoiseLaw("spherical_laplace", 40.0)
    draws = output_offsets(H, S, n, law, 200_000, rng)
    Hi = np.linalg.inv(H)
    expected = Hi @ S @ Hi / n + law.coordinate_variance(d) * np.eye(d)
    _check_covariance(draws, expected)
    assert np.abs(draws.mean(axis=0)).max() < 5 * np.sqrt(np.diag(expected).max() / len(draws))


def test_zcdp_output_closed_form_matches_monte_carlo(small_problem):
    X, y = small_problem
    kw = dict(loss=LogisticLoss(), mechanism="output", privacy="zcdp", budget=0.5, random_state=11)
    closed = private_confidence_intervals(X, y, **kw)
    mc = private_confidence_intervals(X, y, closed_form=False, n_samples=400_000, **kw)
    np.testing.assert_array_equal(closed.theta, mc.theta)  # same seed: same release up to the intervals
    sd = np.sqrt(np.diag(closed.normal_cov))
    # se of a 97.5% normal quantile from m draws: sqrt(p (1 - p) / m) / phi(z) * sd
    se = np.sqrt(0.025 * 0.975 / 400_000) / stats.norm.pdf(1.959964) * sd
    assert np.all(np.abs(mc.conf_int - closed.conf_int) <= 4 * se[:, None])


def test_interval_at_another_alpha_is_nested(small_problem):
    X, y = small_problem
    for mechanism in ("objective", "output"):
        rel = private_confidence_intervals(X, y, LogisticLoss(), mechanism=mechanism, random_state=3)
        narrow, wide = rel.interval(0.2), rel.interval(0.01)
        assert np.all(wide[:, 0] <= rel.conf_int[:, 0]) and np.all(rel.conf_int[:, 0] <= narrow[:, 0])
        assert np.all(narrow[:, 1] <= rel.conf_int[:, 1]) and np.all(rel.conf_int[:, 1] <= wide[:, 1])
        np.testing.assert_array_equal(rel.interval(), rel.conf_int)


def test_nonprivate_sandwich_by_hand():
    rng = np.random.default_rng(2)
    n, d, c = 50, 2, 0.01
    X = rng.uniform(-0.7, 0.7, size=(n, d))
    y = rng.choice([-1.0, 1.0], size=n)
    fit = nonprivate_confidence_intervals(X, y, LogisticLoss(), c=c, alpha=0.1)
    th = fit.theta
    H = np.eye(d) * 2 * c
    S = np.zeros((d, d))
    for x, yi in zip(X, y):
        z = yi * th @ x
        s = 1 / (1 + np.exp(z))  # S(-z)
        H += s * (1 - s) * np.outer(x, x) / n  # Eq. 4.2
        g = -yi * s * x
        S += np.outer(g, g) / n
    S -= 4 * c**2 * np.outer(th, th)  # Eq. 4.3
    np.testing.assert_allclose(fit.hessian, H, atol=1e-12)
    np.testing.assert_allclose(fit.covariance, S, atol=1e-12)
    V = np.linalg.inv(H) @ S @ np.linalg.inv(H) / n
    half = stats.norm.ppf(0.95) * np.sqrt(np.diag(V))
    np.testing.assert_allclose(fit.conf_int, np.column_stack([th - half, th + half]), atol=1e-12)
    # the covariance of Eq. 4.3 at theta-hat is the empirical covariance of the gradients
    grads = -(y / (1 + np.exp(y * (X @ th))))[:, None] * X
    np.testing.assert_allclose(S, np.cov(grads, rowvar=False, bias=True), atol=1e-12)


def test_hessian_and_covariance_shapes():
    rng = np.random.default_rng(0)
    A = rng.uniform(-0.5, 0.5, size=(30, 3))
    H, S = hessian_and_covariance(A, LogisticLoss(), np.zeros(3), 0.1)
    assert H.shape == S.shape == (3, 3)
    np.testing.assert_allclose(H, A.T @ A / 4 / 30 + 0.2 * np.eye(3))


def _sorted_quantiles(draws, probs):
    """The definition column_quantiles keeps: (1 - g) x_(j) + g x_(j+1) from a full sort."""
    ordered = np.sort(draws, axis=0)
    m = len(ordered)
    pos = np.asarray(probs) * (m - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, m - 1)
    g = (pos - lo)[:, None]
    return ordered[lo] * (1.0 - g) + ordered[hi] * g


@pytest.mark.parametrize("m", [1, 2, 3, 7, 100, 2_001])
@pytest.mark.parametrize("ties", [False, True])
def test_column_quantiles_place_the_order_statistics_a_sort_would(m, ties):
    """The partition-based quantiles: bit for bit those of a full sort, and np.quantile's (linear, the
    default) to rounding, for any m (a single draw too), ties and levels at the ends of the range."""
    rng = np.random.default_rng(m)
    draws = rng.standard_normal((m, 4)) * [1.0, 1e-3, 1e3, 1.0]
    if ties:
        draws = np.round(draws, 0)  # most draws tied
    probs = [0.0, 0.025, 0.3, 0.5, 0.975, 1.0]
    got = column_quantiles(draws, probs)
    np.testing.assert_array_equal(got, _sorted_quantiles(draws, probs))
    np.testing.assert_allclose(got, np.quantile(draws, probs, axis=0), rtol=1e-12, atol=1e-12 * np.abs(draws).max())
    f_ordered = np.asfortranarray(draws)  # its transpose is C-contiguous: still partitioned in a copy
    column_quantiles(f_ordered, probs)
    np.testing.assert_array_equal(f_ordered, draws)


@pytest.mark.parametrize("kind", ["normal", "cauchy", "ascending", "descending", "ties", "inf"])
@pytest.mark.parametrize("probs", [[0.025, 0.975], [0.0, 1.0], [0.001], [0.95, 0.999], [0.09, 0.91]], ids=str)
def test_tail_quantiles_of_many_draws_are_those_of_a_sort(kind, probs):
    """From 2,000 draws on, tail ranks are selected among the draws past a sampled threshold: bit for bit
    a full sort's, for heavy tails, ordered draws (the even sample still places the threshold), ties and
    infinities; with few draws past a threshold the row falls back to a whole partition."""
    rng = np.random.default_rng(len(kind) + int(1000 * probs[0]))
    for m in (2_000, 10_000, 25_013):
        draws = rng.standard_normal((m, 3)) * [1.0, 1e-3, 1e3]
        if kind == "cauchy":
            draws = rng.standard_cauchy((m, 3))
        elif kind in ("ascending", "descending"):
            draws = np.sort(draws, axis=0)[:: 1 if kind == "ascending" else -1]
        elif kind == "ties":
            draws = np.round(draws, 0)
        elif kind == "inf":
            draws[rng.choice(m, 40, replace=False), 0] = np.inf
            draws[rng.choice(m, 300, replace=False), 1] = -np.inf
            draws[rng.choice(m, 300, replace=False), 2] = np.inf
        with np.errstate(invalid="ignore"):  # at p = 0 or 1 an infinite end times g = 0 is NaN, in both
            np.testing.assert_array_equal(column_quantiles(draws, probs), _sorted_quantiles(draws, probs))


def test_a_tail_threshold_that_keeps_too_few_draws_falls_back_to_the_whole_row():
    from dpci.intervals import order_statistics

    m = 10_000
    row = np.arange(m, dtype=float)
    row[:: m // 500] = -1.0  # every sampled draw is the least: the lower threshold keeps no draw
    lanes = np.vstack([row, np.random.default_rng(0).permutation(m).astype(float)])
    ranks = np.array([249, 250, 9749, 9750])
    np.testing.assert_array_equal(order_statistics(lanes.copy(), ranks), np.sort(lanes, axis=1)[:, ranks])


def test_column_quantiles_put_nan_last_like_a_sort():
    draws = np.array([[np.nan, 1.0], [2.0, np.nan], [0.0, 3.0], [np.nan, np.nan]])
    probs = [0.0, 0.4, 0.5, 1.0]
    np.testing.assert_array_equal(column_quantiles(draws, probs), _sorted_quantiles(draws, probs))


@pytest.mark.parametrize("kind", ["spherical_laplace", "gaussian"])
@pytest.mark.parametrize("d", [3, 11, 200])
def test_offsets_are_those_of_the_whole_draws_bit_for_bit(kind, d):
    """The draws are made, multiplied and added a block at a time: the same numbers as drawing all m x d
    at once and multiplying (Algorithm 3 and 5, lines 7-11)."""
    from dpci.intervals import _times, gaussian_factor

    rng = np.random.default_rng(d)
    a = rng.standard_normal((d, d))
    hessian, covariance, n, m, law = a @ a.T + d * np.eye(d), np.eye(d) + 0.1, 500, 1_001, NoiseLaw(kind, 2.0)

    def whole(seed, output):
        rng, h_inv = np.random.default_rng(seed), np.linalg.inv(hessian)
        gauss = _times(rng.standard_normal((m, d)), (h_inv @ gaussian_factor(covariance) / np.sqrt(n)).T)
        noise = law.sample(rng, d, m)
        return gauss - noise if output else gauss + _times(noise, h_inv.T / n)

    got = objective_offsets(hessian, covariance, n, law, m, np.random.default_rng(1))
    np.testing.assert_array_equal(got, whole(1, False))
    got = output_offsets(hessian, covariance, n, law, m, np.random.default_rng(2))
    np.testing.assert_array_equal(got, whole(2, True))
