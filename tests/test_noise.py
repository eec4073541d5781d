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


class ZeroRowStream:
    """A Generator whose normals at stream positions [d r, d (r + 1)) are zero: a zero row (probability 0
    with a real stream) at the same place however the draws are cut into calls."""

    def __init__(self, seed, d, row):
        self.rng, self.zero, self.drawn = np.random.default_rng(seed), range(d * row, d * (row + 1)), 0

    def standard_gamma(self, shape, size):
        return self.rng.standard_gamma(shape, size=size)

    def standard_normal(self, size=None, out=None):
        z = self.rng.standard_normal(size, out=out)
        flat = z.reshape(-1)
        for k in range(flat.size):
            if self.drawn + k in self.zero:
                flat[k] = 0.0
        self.drawn += flat.size
        return z


@pytest.mark.parametrize("kind, scale", [("spherical_laplace", 3.0), ("gaussian", 0.7)])
@pytest.mark.parametrize("m, d, rows", [(1000, 11, 64), (1003, 200, 6), (7, 3, 100)])
def test_noise_in_blocks_is_the_whole_draw_bit_for_bit(kind, scale, m, d, rows):
    from dpci.mechanisms import NoiseLaw

    law = NoiseLaw(kind, scale)
    before, rng = np.random.default_rng(5), np.random.default_rng(5)
    whole = law.sample(before, d, m)
    total = np.zeros((m, d))
    for where, block in law.sample_blocks(rng, d, m, rows):
        total[where] += block
    np.testing.assert_array_equal(total, whole)
    assert rng.standard_normal() == before.standard_normal()  # the stream is left where it was


@pytest.mark.parametrize("row", [0, 70, 999])
def test_a_zero_row_is_redrawn_last_in_blocks_as_in_the_whole_draw(row):
    from dpci.noise import spherical_laplace_blocks

    m, d = 1000, 5
    whole = spherical_laplace(ZeroRowStream(2, d, row), d, 2.0, m)
    stream = ZeroRowStream(2, d, row)
    total = np.zeros((m, d))
    for where, block in spherical_laplace_blocks(stream, d, 2.0, m, 64):
        total[where] += block
    np.testing.assert_array_equal(total, whole)
    assert np.all(np.linalg.norm(total, axis=1) > 0)
