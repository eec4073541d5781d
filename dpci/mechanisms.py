"""The private mechanisms: Algorithm 1 (objective perturbation), Algorithm 2
(PrivSPDMat) and Algorithm 4 (output perturbation).

Each returns what it releases plus the law of the noise it used, which the
interval algorithms (3 and 5) need; the noise *draw* itself is secret and is
kept only on the returned object for teaching and tests, never released.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .exceptions import RegularisationTooSmall, UnderCoverageWarning, warn
from .noise import gaussian, gaussian_blocks, spherical_laplace, spherical_laplace_blocks
from .sensitivity import objective_gradient_sensitivity, output_sensitivity
from .solver import minimise_erm


@dataclass(frozen=True)
class NoiseLaw:
    """A noise distribution: spherical Laplace exp(-gamma ||b||) (Eq. 3.2) or N(0, sigma^2 I)."""

    kind: str  # "spherical_laplace" or "gaussian"
    scale: float  # gamma for the spherical Laplace, sigma for the Gaussian

    def sample(self, rng, d, size=None):
        if self.kind == "spherical_laplace":
            return spherical_laplace(rng, d, self.scale, size)
        return gaussian(rng, d, self.scale, size)

    def sample_blocks(self, rng, d, size, rows):
        """``sample(rng, d, size)`` bit for bit, a block of rows at a time: (where, block) pairs that add up
        to the draws (see :func:`~dpci.noise.spherical_laplace_blocks`)."""
        if self.kind == "spherical_laplace":
            return spherical_laplace_blocks(rng, d, self.scale, size, rows)
        return gaussian_blocks(rng, d, self.scale, size, rows)

    def coordinate_variance(self, d: int) -> float:
        """Variance of one coordinate of a d-dimensional draw."""
        if self.kind == "spherical_laplace":
            # E||b||^2 = d (d + 1) / gamma^2 for a Gamma(d, 1/gamma) norm, shared by d coordinates.
            return (d + 1) / self.scale**2
        return self.scale**2


@dataclass(frozen=True)
class PerturbedFit:
    """Output of Algorithm 1 or 4: the private coefficients and the law of their noise."""

    theta: np.ndarray
    noise_law: NoiseLaw
    epsilon_prime: float | None = None  # Algorithm 1 only
    n_iter: int = 0
    noise: np.ndarray | None = field(default=None, repr=False)  # secret: releasing it voids the guarantee


def smallest_valid_c(epsilon: float, n: int, t: float) -> float:
    """Algorithm 1 needs c > t / (2 n (e^epsilon - 1)); this returns that bound.

    Objective perturbation (Algorithm 1) keeps epsilon' = epsilon - log(1 + t / (2 n c)) of the
    coefficients' budget for its noise, which must be positive. Just above the bound epsilon' is
    small and the intervals under-cover (:class:`~dpci.exceptions.UnderCoverageWarning`);
    :func:`safe_c` gives a round c that keeps epsilon' >= epsilon / 2.

    Parameters
    ----------
    epsilon : float
        The coefficients' epsilon (epsilon1: the budget times phi1 under pure DP).
    n : int
        The number of rows.
    t : float
        The loss's bound on |f''| (``loss.t``: 1/4 for the logistic loss, 1/(2h) for the Huber loss).

    Returns
    -------
    float
        The bound; any c strictly above it is valid.

    Raises
    ------
    ZeroDivisionError
        epsilon = 0 or n = 0 (no c is valid).

    Examples
    --------
    >>> import dpci
    >>> bound = dpci.smallest_valid_c(0.65, 30_162, dpci.LogisticLoss().t)  # Adult, epsilon = 1, Table 2's phi1
    >>> f"{bound:.3g}"
    '4.53e-06'
    """
    if epsilon > 700.0:  # e^epsilon overflows: the same bound written with e^-epsilon (0 when it underflows)
        return t * math.exp(-epsilon) / (2.0 * n * -math.expm1(-epsilon))
    return t / (2.0 * n * math.expm1(epsilon))


# epsilon' must keep at least this share of epsilon1: measured on a known-truth logistic model (objective
# perturbation, epsilon = 1, 200-300 repetitions each), c at the bare bound covers 0.74 (n = 150) and 0.86
# (n = 2,000) at nominal 0.95; epsilon' >= epsilon1/4 covers 0.92 at n = 150; epsilon' >= epsilon1/2 covers
# 0.96 at both n (tests/test_coverage.py checks it). See docs/paper-notes.md.
EPSILON_PRIME_SHARE = 0.5


def c_for_epsilon_prime(epsilon: float, n: int, t: float, share: float = EPSILON_PRIME_SHARE) -> float:
    """The c at which epsilon' = share * epsilon: t / (2 n (e^{(1 - share) epsilon} - 1)) (Algorithm 1, line 1)."""
    return smallest_valid_c((1.0 - share) * epsilon, n, t)


def safe_c(epsilon: float, n: int, t: float) -> float:
    """A round c at which epsilon' >= epsilon/2, so the intervals keep their coverage (suggested instead of
    the bare bound, whose intervals under-cover)."""
    return suggest_c(c_for_epsilon_prime(epsilon, n, t))


def warn_if_near_bound(epsilon: float, n: int, c: float, t: float) -> None:
    """UnderCoverageWarning when c is valid but epsilon' < epsilon/2 (see EPSILON_PRIME_SHARE)."""
    eps_prime = objective_epsilon_prime(epsilon, n, c, t)
    if eps_prime < EPSILON_PRIME_SHARE * epsilon:
        warn(
            f"c = {c:.3g} leaves objective perturbation only ε′ = {eps_prime:.3g} of ε₁ = {epsilon:.3g} "
            f"(n = {n}): its intervals are likely to cover less often than their level says. Use c of at least "
            f"{safe_c(epsilon, n, t):.3g} (then ε′ ≥ ε₁/2), give the coefficients more budget, or use "
            "more rows.",
            UnderCoverageWarning,
            stacklevel=3,
        )


def objective_epsilon_prime(epsilon: float, n: int, c: float, t: float) -> float:
    """epsilon' = epsilon - log(1 + t/(2nc)) of Algorithm 1, line 1 (Section 4.1).

    Raises :class:`~dpci.exceptions.RegularisationTooSmall`, carrying the smallest valid c, when epsilon' <= 0.
    """
    bound = smallest_valid_c(epsilon, n, t)
    if not c > bound:
        raise RegularisationTooSmall(
            f"c = {c:.4g} is too small for objective perturbation with n = {n} and ε = {epsilon:.4g} "
            f"(the ε spent on the coefficients): Algorithm 1 needs c > t / (2 n (e^ε − 1)) = "
            f"{bound:.4g} (t = {t:g}). Use c of at least {safe_c(epsilon, n, t):.3g} (there ε′ ≥ "
            f"ε/2; just above the bound the intervals under-cover), give the coefficients more budget, or "
            f"use more rows.",
            bound,
            safe_c(epsilon, n, t),
        )
    return epsilon - math.log1p(t / (2.0 * n * c))


def suggest_c(bound: float) -> float:
    """A round number comfortably above ``bound`` (two significant digits, rounded up, +1%)."""
    target = bound * 1.01
    exponent = math.floor(math.log10(target)) - 1
    return math.ceil(target / 10**exponent) * 10**exponent


def objective_noise_law(epsilon: float, n: int, c: float, t: float) -> NoiseLaw:
    """Noise of Algorithm 1: spherical Laplace with gamma = epsilon'/2 (line 2).

    gamma = epsilon'/2 because the gradient term moves beta by at most 2 (Appendix A.1).
    """
    eps_prime = objective_epsilon_prime(epsilon, n, c, t)
    return NoiseLaw("spherical_laplace", eps_prime / objective_gradient_sensitivity())


def objective_perturbation(A, loss, c, epsilon, rng, tol=1e-10) -> PerturbedFit:
    """Algorithm 1: minimise J_n(theta) + beta.theta / n with beta ~ exp(-(epsilon'/2) ||beta||).

    ``A`` holds the rows y_i x_i, each with ||x_i|| <= 1. epsilon-DP by Theorem 1.
    """
    n, d = A.shape
    law = objective_noise_law(epsilon, n, c, loss.t)
    eps_prime = 2.0 * law.scale
    beta = law.sample(rng, d)
    result = minimise_erm(A, loss, c, linear=beta, tol=tol)
    return PerturbedFit(result.theta, law, eps_prime, result.n_iter, beta)


def output_noise_law(n: int, c: float, phi: float, privacy: str) -> NoiseLaw:
    """Noise of Algorithm 4: spherical Laplace with gamma = n c phi (pure), N(0, 1/(2 phi (nc)^2)) (zCDP)."""
    sens = output_sensitivity(n, c)
    if privacy == "pure":
        return NoiseLaw("spherical_laplace", phi / sens)  # Algorithm 4, line 3
    return NoiseLaw("gaussian", sens / math.sqrt(2.0 * phi))  # Algorithm 4, line 6; Proposition 3


def output_perturbation(A, loss, c, phi, privacy, rng, tol=1e-10) -> PerturbedFit:
    """Algorithm 4: the exact minimiser of Eq. 5.1 plus noise; phi-DP or phi-zCDP (Theorem 3)."""
    n, d = A.shape
    result = minimise_erm(A, loss, c, tol=tol)
    law = output_noise_law(n, c, phi, privacy)
    beta = law.sample(rng, d)
    return PerturbedFit(result.theta + beta, law, None, result.n_iter, beta)


def matrix_noise_law(sensitivity: float, phi: float, privacy: str) -> NoiseLaw:
    """Noise of Algorithm 2 on vec(M): gamma = phi / Sens (pure), sigma = Sens / sqrt(2 phi) (zCDP)."""
    if privacy == "pure":
        return NoiseLaw("spherical_laplace", phi / sensitivity)  # Algorithm 2, line 2
    # Algorithm 2, line 5 writes I_d; the noise vector has d^2 entries (docs/paper-notes.md).
    return NoiseLaw("gaussian", sensitivity / math.sqrt(2.0 * phi))


def noisy_symmetric(M, sensitivity, phi, privacy, rng, size=None) -> np.ndarray:
    """Algorithm 2, lines 1-9: M plus calibrated noise on vec(M), then symmetrised (``size``: that many
    independent draws, stacked)."""
    M = np.asarray(M, dtype=float)
    d = M.shape[0]
    eta = matrix_noise_law(sensitivity, phi, privacy).sample(rng, d * d, size)
    noisy = M + eta.reshape(M.shape if size is None else (size, d, d))
    return (noisy + np.swapaxes(noisy, -1, -2)) / 2.0


def floor_eigenvalues(M, c) -> np.ndarray:
    """Algorithm 2, lines 10-15: every eigenvalue raised to at least 2c (post-processing; M may be a stack)."""
    eigval, eigvec = np.linalg.eigh(M)
    return (eigvec * np.maximum(eigval, 2.0 * c)[..., None, :]) @ np.swapaxes(eigvec, -1, -2)


def priv_spd_mat(M, sensitivity, phi, c, privacy, rng, size=None) -> np.ndarray:
    """Algorithm 2 (PrivSPDMat): noisy, symmetrised, every eigenvalue floored at 2c.

    phi-DP (pure) or phi-zCDP (Lemma 1); everything after the noise is post-processing. ``size``: that
    many independent draws, stacked (a prediction of what the interval would use, :mod:`dpci.recommend`).
    """
    return floor_eigenvalues(noisy_symmetric(M, sensitivity, phi, privacy, rng, size), c)
