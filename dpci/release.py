"""One private release: coefficients, private Hessian and covariance, intervals.

:func:`private_confidence_intervals` is Algorithm 3 (objective perturbation) and
Algorithm 5 (output perturbation) for pure DP and zCDP, with the budget split of
:mod:`dpci.accounting`. :func:`nonprivate_confidence_intervals` is the reference
users compare against: the exact minimiser theta-hat of Eq. 3.1 and the sandwich
interval from H^{-1} Sigma H^{-1} / n.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .accounting import Allocation, PrivacySpend, allocate
from .intervals import (
    check_alpha,
    hessian_and_covariance,
    normal_interval,
    objective_offsets,
    output_offsets,
    output_zcdp_covariance,
    quantile_interval,
    sandwich_covariance,
)
from .mechanisms import NoiseLaw, objective_perturbation, output_perturbation, priv_spd_mat
from .noise import check_random_state
from .sensitivity import covariance_sensitivity, hessian_sensitivity
from .solver import margin_rows, minimise_erm
from .validation import check_signed_data


@dataclass(frozen=True)
class PrivateRelease:
    """Everything one run of Algorithm 3 or 5 releases (all of it differentially private).

    ``offsets`` are the Monte Carlo draws of theta_0 - theta~ (None for the zCDP
    closed form, which keeps the covariance ``normal_cov`` instead); both are
    post-processing, so an interval at another alpha costs no budget.
    """

    theta: np.ndarray
    hessian: np.ndarray
    covariance: np.ndarray
    conf_int: np.ndarray
    alpha: float
    n: int
    c: float
    allocation: Allocation
    coef_noise: NoiseLaw
    offsets: np.ndarray | None = field(default=None, repr=False)
    normal_cov: np.ndarray | None = field(default=None, repr=False)

    @property
    def spend(self) -> PrivacySpend:
        return self.allocation.spend

    def interval(self, alpha=None) -> np.ndarray:
        """The (1 - alpha) interval, recomputed from the released draws (post-processing)."""
        alpha = self.alpha if alpha is None else check_alpha(alpha)
        if self.offsets is not None:
            return quantile_interval(self.theta, self.offsets, alpha)
        return normal_interval(self.theta, self.normal_cov, alpha)


def private_confidence_intervals(
    X,
    y,
    loss,
    mechanism="objective",
    privacy="pure",
    budget=1.0,
    split=None,
    c=1e-3,
    alpha=0.05,
    n_samples=10_000,
    random_state=None,
    closed_form=True,
) -> PrivateRelease:
    """Private (1 - alpha) confidence intervals for the coefficients (Algorithms 3 and 5).

    X must hold finite rows with ||x_i|| <= 1 and y exactly the labels -1/+1; anything
    else voids the guarantee (Section 3) and raises DataValidationError (an O(n d) check).
    The estimators accept any two labels. ``closed_form`` uses Algorithm 5's normal
    interval for zCDP + output perturbation; False uses Monte Carlo there too.
    """
    X, y = check_signed_data(X, y)
    return _release(X, y, loss, mechanism, privacy, budget, split, c, alpha, n_samples, random_state, closed_form)


def _release(X, y, loss, mechanism, privacy, budget, split, c, alpha, n_samples, random_state, closed_form=True):
    """:func:`private_confidence_intervals` on data already validated (the estimators check theirs)."""
    alpha = check_alpha(alpha)
    alloc = allocate(budget, split, mechanism, privacy)
    rng = check_random_state(random_state)
    A = margin_rows(X, y)
    if mechanism == "objective":
        # Algorithm 3, line 1: under zCDP, alloc.coef_epsilon = sqrt(2 phi1) (Theorem 2).
        fit = objective_perturbation(A, loss, c, alloc.coef_epsilon, rng)
    else:
        fit = output_perturbation(A, loss, c, alloc.phi[0], privacy, rng)  # Algorithm 5, line 1
    return intervals_at(A, loss, fit.theta, c, alloc, fit.noise_law, alpha, n_samples, rng, closed_form=closed_form)


def intervals_at(A, loss, theta, c, alloc, coef_noise, alpha, n_samples, rng, weights=None, closed_form=True):
    """Algorithms 3 (lines 3-16) and 5 (lines 2-24) after the coefficients theta~ are released.

    ``weights`` (row multiplicities) let a bootstrap replicate be processed without copying rows;
    n stays the number of rows, as in the replicate.
    """
    n = A.shape[0]
    _, phi2, phi3 = alloc.phi
    privacy = alloc.privacy
    # Both matrices at the released theta~ (Algorithm 3, lines 3-6; Algorithm 5, lines 2-5).
    hessian, covariance = hessian_and_covariance(A, loss, theta, c, weights)
    hessian = priv_spd_mat(hessian, hessian_sensitivity(loss, n), phi2, c, privacy, rng)
    covariance = priv_spd_mat(covariance, covariance_sensitivity(loss, n, theta), phi3, c, privacy, rng)

    offsets = normal_cov = None
    if alloc.mechanism == "output" and privacy == "zcdp" and closed_form:
        normal_cov = output_zcdp_covariance(hessian, covariance, n, coef_noise.scale)
        conf = normal_interval(theta, normal_cov, alpha)
    else:
        draw = objective_offsets if alloc.mechanism == "objective" else output_offsets
        offsets = draw(hessian, covariance, n, coef_noise, int(n_samples), rng)
        conf = quantile_interval(theta, offsets, alpha)
    return PrivateRelease(theta, hessian, covariance, conf, alpha, n, c, alloc, coef_noise, offsets, normal_cov)


@dataclass(frozen=True)
class NonPrivateFit:
    """The non-private reference: theta-hat, H, Sigma, the sandwich covariance and interval."""

    theta: np.ndarray
    hessian: np.ndarray
    covariance: np.ndarray
    sandwich: np.ndarray
    conf_int: np.ndarray
    alpha: float
    n_iter: int

    def interval(self, alpha=None) -> np.ndarray:
        return normal_interval(self.theta, self.sandwich, self.alpha if alpha is None else alpha)


def nonprivate_confidence_intervals(X, y, loss, c=1e-3, alpha=0.05, tol=1e-10) -> NonPrivateFit:
    """Exact theta-hat of Eq. 3.1 and theta-hat -/+ z sqrt(diag(H^{-1} Sigma H^{-1} / n)). NOT private.

    Same input contract as :func:`private_confidence_intervals` (so the two compare like for like).
    """
    X, y = check_signed_data(X, y)
    alpha = check_alpha(alpha)
    A = margin_rows(X, y)
    result = minimise_erm(A, loss, c, tol=tol)
    hessian, covariance = hessian_and_covariance(A, loss, result.theta, c)
    sandwich = sandwich_covariance(hessian, covariance, A.shape[0])
    conf = normal_interval(result.theta, sandwich, alpha)
    return NonPrivateFit(result.theta, hessian, covariance, sandwich, conf, alpha, result.n_iter)
