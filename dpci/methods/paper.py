"""The paper's methods: objective perturbation (Algorithms 1 and 3) and output perturbation
(Algorithms 4 and 5), each under pure epsilon-DP or rho-zCDP, with the budget split into
phi1 (coefficients), phi2 (Hessian) and phi3 (gradient covariance).
"""

from __future__ import annotations

import numpy as np

from ..accounting import TABLE2_SPLITS
from ..batch import minimise_erm_batch
from ..intervals import (
    hessian_and_covariance,
    normal_interval,
    objective_offsets,
    output_offsets,
    output_zcdp_covariance,
    quantile_interval,
)
from ..mechanisms import (
    EPSILON_PRIME_SHARE,
    matrix_noise_law,
    objective_epsilon_prime,
    objective_noise_law,
    objective_perturbation,
    output_noise_law,
    output_perturbation,
    priv_spd_mat,
    safe_c,
    smallest_valid_c,
    warn_if_near_bound,
)
from .base import Advice, Method, OffsetLaw, PrivateRelease


def private_matrices(measurement, A, theta, rng, weights=None):
    """Algorithm 3, lines 3-6 and Algorithm 5, lines 2-5: the Hessian (Eq. 4.2) and the gradient
    covariance (Eq. 4.3) at the released theta~, each through PrivSPDMat (Algorithm 2) with
    phi2 and phi3 and the loss's sensitivities (Lemmas 2-5). ``weights``: row multiplicities."""
    n, loss, c, alloc = A.shape[0], measurement.loss, measurement.c, measurement.allocation
    phi2, phi3 = alloc.phi[1], alloc.phi[2]  # a method with more steps spends the others itself
    hessian, covariance = hessian_and_covariance(A, loss, theta, c, weights)
    hessian = priv_spd_mat(hessian, loss.hessian_sensitivity(n), phi2, c, alloc.privacy, rng)
    covariance = priv_spd_mat(covariance, loss.covariance_sensitivity(n, theta), phi3, c, alloc.privacy, rng)
    return hessian, covariance


def solve_replicates(A, loss, c, weights, linear, start, block) -> np.ndarray:
    """Exact minimisers of the replicates' objectives, ``block`` replicates per batched solve
    (blocks start at multiples of ``block``, so chunking never changes a bit; :mod:`dpci.batch`)."""
    theta = np.empty((len(weights), A.shape[1]))
    for b in range(0, len(weights), block):
        blk = slice(b, min(b + block, len(weights)))
        theta[blk] = minimise_erm_batch(A, loss, c, weights[blk], None if linear is None else linear[blk], start=start)
    return theta


class PaperMethod(Method):
    """What Algorithms 3 and 5 share: coefficients first, then the private matrices at them, then
    the interval. A subclass gives the coefficient mechanism and the interval's last step."""

    releases_hessian = True
    corrects_penalty = True  # dpci.theta

    def hessian_noise(self, measurement, n):
        """Algorithm 2's noise on the Hessian: phi2 and Lemma 3's (or 5's) sensitivity, as :func:`private_matrices`."""
        alloc = measurement.allocation
        return matrix_noise_law(measurement.loss.hessian_sensitivity(n), alloc.phi[1], alloc.privacy)

    def variability_key(self, measurement):
        """A replicate's coefficients use the coefficients' budget only (phi1; Section 7.2)."""
        alloc = measurement.allocation
        return (alloc.privacy, round(alloc.phi[0], 12))

    def perturb(self, measurement, A, rng):
        """The coefficient mechanism (Algorithm 1 or 4) of ``measurement`` on A: a
        :class:`~dpci.mechanisms.PerturbedFit`."""
        raise NotImplementedError

    def finish(self, measurement, theta, hessian, covariance, n, coef_noise, rng, closed_form):
        """The interval from the private pieces, at the measurement's alpha and m: (conf_int, offsets,
        normal_cov)."""
        raise NotImplementedError

    def release(self, measurement, A, rng, closed_form=True) -> PrivateRelease:
        self.check_settings(measurement, A.shape[0])
        fit = self.perturb(measurement, A, rng)
        return self.interval_at(measurement, A, fit.theta, fit.noise_law, rng, closed_form=closed_form)

    def interval_at(self, measurement, A, theta, coef_noise, rng, weights=None, closed_form=True) -> PrivateRelease:
        """Algorithms 3 (lines 3-16) and 5 (lines 2-24) of ``measurement`` after the coefficients theta~
        are released with noise law ``coef_noise``.

        ``weights`` (row multiplicities) let a bootstrap replicate be processed without copying
        rows; n stays the number of rows, as in the replicate.
        """
        n, m = A.shape[0], measurement
        hessian, covariance = private_matrices(m, A, theta, rng, weights)
        conf, offsets, normal_cov = self.finish(m, theta, hessian, covariance, n, coef_noise, rng, closed_form)
        return PrivateRelease(
            theta, hessian, covariance, conf, m.alpha, n, m.c, m.allocation, coef_noise, offsets, normal_cov
        )

    def replicate_interval(self, measurement, A, theta, law, rng, weights) -> np.ndarray:
        return self.interval_at(measurement, A, theta, law, rng, weights).conf_int

    def noise_transform(self, hessian, n: int) -> np.ndarray:
        """The matrix M by which the coefficient mechanism's noise beta reaches theta~ (to first order)."""
        raise NotImplementedError

    def offset_law(self, measurement, hessian, covariance, n):
        """Eq. 4.1 (Algorithm 3) and Eq. 5.2 (Algorithm 5): H^-1 G / sqrt(n) with G ~ N(0, Sigma), plus the
        coefficient noise through :meth:`noise_transform`."""
        h_inv = np.linalg.inv(hessian)  # also a stack of matrices, (draws, d, d): then each row a draw
        sampling = np.sqrt(np.clip(np.einsum("...ij,...jk,...ik->...i", h_inv, covariance, h_inv) / n, 0.0, None))
        weight = np.linalg.norm(self.noise_transform(hessian, n), axis=-1)
        return OffsetLaw(sampling, weight, self.coefficient_noise_law(measurement, n))

    def interval_matrices(self, measurement, hessian, covariance, theta, n, rng, draws):
        """Algorithm 2 applied ``draws`` times to the given matrices, as :func:`private_matrices` does."""
        loss, c, alloc = measurement.loss, measurement.c, measurement.allocation
        return (
            priv_spd_mat(hessian, loss.hessian_sensitivity(n), alloc.phi[1], c, alloc.privacy, rng, draws),
            priv_spd_mat(covariance, loss.covariance_sensitivity(n, theta), alloc.phi[2], c, alloc.privacy, rng, draws),
        )

    def replicate_noise(self, measurement, A, rngs):
        """Each replicate's coefficient noise, drawn from its own stream after its weights."""
        law = self.coefficient_noise_law(measurement, A.shape[0])
        return np.array([law.sample(rng, A.shape[1]) for rng in rngs])


class ObjectivePerturbation(PaperMethod):
    """Algorithm 1 (coefficients) and Algorithm 3 (interval). A pure epsilon1-DP mechanism under
    both notions: under zCDP it runs at epsilon1 = sqrt(2 rho1) (Proposition 1, Theorem 2)."""

    name = "objective"
    label = "objective perturbation"
    short = "objective"
    colors = {"pure": "#E69F00", "zcdp": "#D55E00"}
    pure_steps = (True, False, False)
    splits = {p: TABLE2_SPLITS[(p, "objective")] for p in ("pure", "zcdp")}  # Table 2 (see dpci.accounting)
    description = "Noise added to the training objective (Algorithm 1); interval by Monte Carlo (Algorithm 3)."
    how_it_trains = "adds β·θ/n to the training objective and takes its exact minimiser"

    def smallest_c(self, measurement, n):
        return smallest_valid_c(measurement.allocation.coef_epsilon, n, measurement.loss.t)

    def coefficient_noise_law(self, measurement, n):
        m = measurement
        return objective_noise_law(m.allocation.coef_epsilon, n, m.c, m.loss.t)

    remedy = "give the coefficients more budget (a larger total or φ1), use more rows, or switch to output perturbation"

    def check_settings(self, measurement, n):
        m = measurement
        warn_if_near_bound(m.allocation.coef_epsilon, n, m.c, m.loss.t)  # raises RegularisationTooSmall below the bound

    def advice(self, measurement, n):
        eps1, c, t = measurement.allocation.coef_epsilon, measurement.c, measurement.loss.t
        if objective_epsilon_prime(eps1, n, c, t) >= EPSILON_PRIME_SHARE * eps1:
            return None
        return Advice(
            f"Intervals may under-cover: with c = {c:g}, objective perturbation keeps little of its budget for "
            "the coefficients (ε′ < ε₁/2), and its intervals then contain the truth less often than their level "
            "says (measured: 0.80 instead of 0.95 at n = 150, c = 1e-3, ε = 1).",
            safe_c(eps1, n, t),
        )

    def perturb(self, measurement, A, rng):
        m = measurement
        return objective_perturbation(A, m.loss, m.c, m.allocation.coef_epsilon, rng)

    def noise_transform(self, hessian, n):
        return np.linalg.inv(hessian) / n  # Algorithm 3, line 10: H^-1 beta / n

    def finish(self, measurement, theta, hessian, covariance, n, coef_noise, rng, closed_form):
        offsets = objective_offsets(hessian, covariance, n, coef_noise, int(measurement.n_samples), rng)
        return quantile_interval(theta, offsets, measurement.alpha), offsets, None

    def replicate_coefficients(self, measurement, A, weights, rngs, start, block):
        noise = self.replicate_noise(measurement, A, rngs)
        m = measurement
        return solve_replicates(A, m.loss, m.c, weights, noise, start, block)  # Algorithm 1's beta in the objective


class OutputPerturbation(PaperMethod):
    """Algorithm 4 (coefficients) and Algorithm 5 (interval; a closed form under zCDP)."""

    name = "output"
    label = "output perturbation"
    short = "output"
    colors = {"pure": "#56B4E9", "zcdp": "#0072B2"}
    splits = {p: TABLE2_SPLITS[(p, "output")] for p in ("pure", "zcdp")}  # Table 2
    description = "Noise added to the trained coefficients (Algorithm 4); interval by Algorithm 5."
    how_it_trains = "trains normally and adds the noise to the result"
    noise_reducible = True  # Algorithm 4 adds its noise to the minimiser, a fixed query

    def coefficient_noise_law(self, measurement, n):
        alloc = measurement.allocation
        return output_noise_law(n, measurement.c, alloc.phi[0], alloc.privacy)

    def perturb(self, measurement, A, rng):
        m, alloc = measurement, measurement.allocation
        return output_perturbation(A, m.loss, m.c, alloc.phi[0], alloc.privacy, rng)

    def noise_transform(self, hessian, n):
        return np.broadcast_to(np.eye(hessian.shape[-1]), hessian.shape)  # Algorithm 4: theta~ = theta^ + beta

    def finish(self, measurement, theta, hessian, covariance, n, coef_noise, rng, closed_form):
        alpha = measurement.alpha
        if coef_noise.kind == "gaussian" and closed_form:  # zCDP: Algorithm 5, lines 18-23
            normal_cov = output_zcdp_covariance(hessian, covariance, n, coef_noise.scale)
            return normal_interval(theta, normal_cov, alpha), None, normal_cov
        offsets = output_offsets(hessian, covariance, n, coef_noise, int(measurement.n_samples), rng)
        return quantile_interval(theta, offsets, alpha), offsets, None

    def replicate_coefficients(self, measurement, A, weights, rngs, start, block):
        noise = self.replicate_noise(measurement, A, rngs)
        m = measurement
        return solve_replicates(A, m.loss, m.c, weights, None, start, block) + noise  # Algorithm 4
