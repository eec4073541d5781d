"""Algorithms 1, 2 and 4: hand-computed constants, refusals and the identities of the proofs."""

import copy
import math

import numpy as np
import pytest
from scipy import stats

from dpci.losses import HuberLoss, LogisticLoss
from dpci.mechanisms import (
    objective_epsilon_prime,
    objective_perturbation,
    output_noise_law,
    output_perturbation,
    priv_spd_mat,
    smallest_valid_c,
)
from dpci.noise import spherical_laplace
from dpci.solver import minimise_erm


def test_epsilon_prime_matches_hand_value():
    # epsilon' = 1 - log(1 + 0.25 / (2 * 1000 * 0.001)) = 1 - log(1.125)
    assert objective_epsilon_prime(1.0, 1000, 1e-3, 0.25) == pytest.approx(0.8822169643, abs=1e-9)
    # Huber with h = 0.5: t = 1, epsilon' = 0.5 - log(1 + 1 / (2 * 500 * 0.01)) = 0.5 - log(1.1)
    assert objective_epsilon_prime(0.5, 500, 0.01, HuberLoss(0.5).t) == pytest.approx(0.4046898202, abs=1e-9)


def test_too_small_c_is_refused_with_the_smallest_valid_c():
    bound = smallest_valid_c(1.0, 1000, 0.25)
    assert bound == pytest.approx(0.25 / (2000 * (math.e - 1)))  # 7.275e-05
    with pytest.raises(ValueError, match=r"c > .*7\.275e-05") as err:
        objective_epsilon_prime(1.0, 1000, 5e-5, 0.25)
    # the suggestion keeps epsilon' >= epsilon/2: t / (2 n (e^0.5 - 1)) = 1.926e-4, rounded up (+1%) to 2 digits
    assert "Use c of at least 0.00020" in str(err.value) or "Use c of at least 0.0002 " in str(err.value)
    with pytest.raises(ValueError, match="too small"):
        objective_epsilon_prime(1.0, 1000, bound, 0.25)  # equality is not enough
    assert objective_epsilon_prime(1.0, 1000, bound * 1.0001, 0.25) > 0


@pytest.mark.parametrize("loss", [LogisticLoss(), HuberLoss(0.5)], ids=["logistic", "huber"])
def test_objective_perturbation_solves_the_perturbed_objective(loss, small_problem):
    """Appendix A.1: at theta~, beta = -2nc theta~ - sum_i y_i f'(z_i) x_i exactly."""
    X, y = small_problem
    A = X * y[:, None]
    n, c = len(A), 1e-3
    fit = objective_perturbation(A, loss, c, 1.0, np.random.default_rng(0))
    d1 = loss.derivatives(A @ fit.theta)[0]
    implied_beta = -2 * n * c * fit.theta - A.T @ d1
    # the solver stops at ||grad J|| <= 1e-10, so n * grad J = beta - implied_beta is below n * 1e-10
    np.testing.assert_allclose(implied_beta, fit.noise, rtol=0, atol=n * 1e-10)
    assert fit.noise_law.kind == "spherical_laplace"
    assert fit.noise_law.scale == pytest.approx(fit.epsilon_prime / 2)


def test_objective_noise_norm_follows_gamma_with_epsilon_prime_over_two(small_problem):
    X, y = small_problem
    A = X * y[:, None]
    rng = np.random.default_rng(1)
    norms, gamma = [], None
    for _ in range(300):
        fit = objective_perturbation(A, LogisticLoss(), 1e-3, 0.8, rng)
        norms.append(np.linalg.norm(fit.noise))
        gamma = fit.noise_law.scale
    assert gamma == pytest.approx((0.8 - math.log1p(0.25 / (2 * len(A) * 1e-3))) / 2)
    assert stats.kstest(norms, stats.gamma(a=A.shape[1], scale=1 / gamma).cdf).pvalue > 1e-3


@pytest.mark.parametrize("privacy", ["pure", "zcdp"])
def test_output_perturbation_adds_the_calibrated_noise(privacy, small_problem):
    X, y = small_problem
    A = X * y[:, None]
    n, c, phi = len(A), 1e-2, 0.7
    theta_hat = minimise_erm(A, LogisticLoss(), c).theta
    rng = np.random.default_rng(2)
    offsets = np.array(
        [output_perturbation(A, LogisticLoss(), c, phi, privacy, rng).theta - theta_hat for _ in range(300)]
    )
    law = output_noise_law(n, c, phi, privacy)
    if privacy == "pure":
        assert law.scale == pytest.approx(n * c * phi)  # gamma = n c phi (Algorithm 4)
        ref = stats.gamma(a=A.shape[1], scale=1 / law.scale).cdf
        assert stats.kstest(np.linalg.norm(offsets, axis=1), ref).pvalue > 1e-3
    else:
        assert law.scale**2 == pytest.approx(1 / (2 * phi * (n * c) ** 2))  # Algorithm 4, line 6
        assert stats.kstest(offsets.ravel() / law.scale, "norm").pvalue > 1e-3


@pytest.mark.parametrize("privacy", ["pure", "zcdp"])
def test_priv_spd_mat_is_symmetric_with_eigenvalues_at_least_2c(privacy):
    rng = np.random.default_rng(3)
    c = 0.01
    for d in (1, 2, 5, 11):
        for _ in range(20):
            B = rng.standard_normal((d, d))
            M = B @ B.T * rng.uniform(0, 0.05)
            out = priv_spd_mat(M, sensitivity=0.05, phi=0.1, c=c, privacy=privacy, rng=rng)
            np.testing.assert_allclose(out, out.T, atol=1e-15)
            assert np.linalg.eigvalsh(out).min() >= 2 * c * (1 - 1e-12)


def test_priv_spd_mat_noise_scale():
    """With a huge floor-free matrix the off-diagonal error has the calibrated Gaussian variance."""
    rng = np.random.default_rng(4)
    d, sens, phi = 4, 0.2, 0.5
    M = np.eye(d) * 100.0
    errs = np.array([priv_spd_mat(M, sens, phi, 1e-3, "zcdp", rng)[0, 1] for _ in range(2000)])
    # symmetrised off-diagonal = (eta_ij + eta_ji)/2 has variance sigma^2 / 2, sigma^2 = sens^2 / (2 phi)
    assert stats.kstest(errs / np.sqrt(sens**2 / (2 * phi) / 2), "norm").pvalue > 1e-3


def test_priv_spd_mat_pure_noise_norm_is_gamma_over_d_squared_entries():
    """Pure DP (Algorithm 2, line 2): eta ~ exp(-(phi/Sens) ||eta||) on vec(M), so ||eta|| ~ Gamma(d^2, Sens/phi).

    The output only shows the symmetrised noise, so the raw eta is read by replaying the
    generator (as dpci.teaching does) and checked to give exactly the released matrix.
    """
    rng = np.random.default_rng(5)
    d, sens, phi = 4, 0.2, 0.5
    M = np.eye(d) * 100.0  # noise norms are ~6, so the 2c eigenvalue floor never acts
    norms = []
    for _ in range(2000):
        replay = copy.deepcopy(rng)
        out = priv_spd_mat(M, sens, phi, 1e-3, "pure", rng)
        eta = spherical_laplace(replay, d * d, phi / sens).reshape(d, d)
        np.testing.assert_allclose(out, M + (eta + eta.T) / 2, rtol=0, atol=1e-10)
        assert replay.bit_generator.state == rng.bit_generator.state  # no other draw
        norms.append(np.linalg.norm(eta))
    # d^2 = 16 entries, not d = 4: the shape of the Gamma law tells them apart
    assert stats.kstest(norms, stats.gamma(a=d * d, scale=sens / phi).cdf).pvalue > 1e-3
