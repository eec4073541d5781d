"""The samplers follow their laws: spherical Laplace (Eq. 3.2) and the Gaussian."""

import numpy as np
import pytest
from scipy import stats

from dpci.noise import check_random_state, gaussian, spherical_laplace

P_MIN = 1e-3  # fixed seeds make each test deterministic; a correct sampler passes at this level


@pytest.mark.parametrize("d", [1, 11, 121])
def test_spherical_laplace_norm_is_gamma(d):
    gamma = 0.7
    draws = spherical_laplace(np.random.default_rng(d), d, gamma, size=20_000)
    assert draws.shape == (20_000, d)
    norms = np.linalg.norm(draws, axis=1)
    assert stats.kstest(norms, stats.gamma(a=d, scale=1 / gamma).cdf).pvalue > P_MIN


@pytest.mark.parametrize("d", [1, 11, 121])
def test_spherical_laplace_direction_is_uniform(d):
    draws = spherical_laplace(np.random.default_rng(100 + d), d, 2.0, size=20_000)
    u = draws / np.linalg.norm(draws, axis=1, keepdims=True)
    # Projection on any fixed unit vector v: (v.u + 1)/2 ~ Beta((d-1)/2, (d-1)/2) for d > 1.
    v = np.random.default_rng(7).standard_normal(d)
    v /= np.linalg.norm(v)
    proj = u @ v
    if d == 1:
        assert stats.binomtest(int((proj > 0).sum()), len(proj)).pvalue > P_MIN
    else:
        law = stats.beta((d - 1) / 2, (d - 1) / 2)
        assert stats.kstest((proj + 1) / 2, law.cdf).pvalue > P_MIN
    # Norm and direction are independent: the direction does not correlate with the norm.
    r = stats.spearmanr(proj if d == 1 else np.abs(proj), np.linalg.norm(draws, axis=1))
    assert r.pvalue > P_MIN


def test_spherical_laplace_in_one_dimension_is_laplace():
    draws = spherical_laplace(np.random.default_rng(3), 1, 0.5, size=20_000)[:, 0]
    assert stats.kstest(draws, stats.laplace(scale=2.0).cdf).pvalue > P_MIN


def test_gaussian_variance_matches():
    sigma, n, d = 0.3, 20_000, 5
    draws = gaussian(np.random.default_rng(11), d, sigma, size=n)
    # sum of squares / sigma^2 ~ chi^2(n d): two-sided test.
    chi2 = (draws**2).sum() / sigma**2
    cdf = stats.chi2(n * d).cdf(chi2)
    assert P_MIN < cdf < 1 - P_MIN
    assert stats.kstest(draws[:, 0], stats.norm(scale=sigma).cdf).pvalue > P_MIN


def test_same_seed_same_draws_and_bad_scales_refused():
    a = spherical_laplace(check_random_state(5), 3, 1.0, size=4)
    b = spherical_laplace(check_random_state(5), 3, 1.0, size=4)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="gamma"):
        spherical_laplace(np.random.default_rng(0), 3, 0.0)
    with pytest.raises(ValueError, match="sigma"):
        gaussian(np.random.default_rng(0), 3, -1.0)
    with pytest.raises(ValueError, match="random_state"):
        check_random_state("seed")
