"""One private release: coefficients, private Hessian and covariance, intervals.

:func:`private_confidence_intervals` is Algorithm 3 (objective perturbation) and
Algorithm 5 (output perturbation) for pure DP and zCDP, with the budget split of
:mod:`dpci.accounting`. :func:`nonprivate_confidence_intervals` is the reference
users compare against: the exact minimiser theta-hat of Eq. 3.1 and the sandwich
interval from H^{-1} Sigma H^{-1} / n.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import methods
from .intervals import (
    MAX_SAMPLES,
    MIN_SAMPLES,
    check_alpha,
    check_count,
    hessian_and_covariance,
    normal_interval,
    sandwich_covariance,
)
from .ledger.hooks import admit_release, note_not_private
from .methods import PrivateRelease
from .noise import check_random_state
from .settings import ReleaseSettings, spread
from .solver import margin_rows, minimise_erm
from .validation import check_signed_data

__all__ = [
    "NonPrivateFit",
    "PrivateRelease",
    "intervals_at",
    "nonprivate_confidence_intervals",
    "private_confidence_intervals",
]


@spread(ReleaseSettings)
def private_confidence_intervals(X, y, loss, settings: ReleaseSettings, closed_form=True) -> PrivateRelease:
    """Private (1 - alpha) confidence intervals for the coefficients (Algorithms 3 and 5).

    Takes the fields of :class:`dpci.settings.ReleaseSettings` after ``loss``: ``mechanism="objective",
    privacy="pure", budget=1.0, split=None, c=1e-3, alpha=0.05, n_samples=10_000, random_state=None``.
    ``mechanism`` names a registered method (:mod:`dpci.methods`; the paper's are "objective" and
    "output"). X must hold finite rows with ||x_i|| <= 1 and y exactly the labels -1/+1; anything
    else voids the guarantee (Section 3) and raises DataValidationError (an O(n d) check).
    The estimators accept any two labels. ``closed_form`` uses Algorithm 5's normal
    interval for zCDP + output perturbation; False uses Monte Carlo there too.
    """
    X, y = check_signed_data(X, y)
    return _release(X, y, loss, settings, closed_form)


def _release(X, y, loss, settings: ReleaseSettings, closed_form=True):
    """:func:`private_confidence_intervals` on data already validated (the estimators check theirs)."""
    s = settings
    alpha = check_alpha(s.alpha)
    n_samples = check_count("n_samples", s.n_samples, MIN_SAMPLES, MAX_SAMPLES, "the paper uses 10,000")
    method = methods.get(s.mechanism)
    alloc = method.allocate(s.budget, s.split, s.privacy)
    method.coefficient_noise_law(alloc, X.shape[0], s.c, loss)  # an invalid c raises here, before any charge
    spec = dict(
        function="private_confidence_intervals",
        loss=repr(loss),
        method=method.name,
        privacy=s.privacy,
        budget=s.budget,
        split=list(alloc.shares),
        c=s.c,
        alpha=alpha,
        n_samples=n_samples,
    )
    A = margin_rows(X, y)
    admit_release(A, alloc.spend, spec, s.random_state, f"release: {method.describe(s.privacy)}, budget {s.budget:g}")
    rng = check_random_state(s.random_state)  # the noise is drawn only after the ledger admitted it
    return method.release(A, loss, s.c, alloc, alpha, n_samples, rng, closed_form=closed_form)


def intervals_at(A, loss, theta, c, alloc, coef_noise, alpha, n_samples, rng, weights=None, closed_form=True):
    """The interval of a paper method once its coefficients theta~ are released (Algorithms 3 and 5;
    :meth:`dpci.methods.PaperMethod.interval_at`)."""
    return methods.get(alloc.mechanism).interval_at(
        A, loss, theta, c, alloc, coef_noise, alpha, n_samples, rng, weights, closed_form
    )


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
    spec = dict(function="nonprivate_confidence_intervals", loss=repr(loss), c=c, alpha=alpha)
    note_not_private(A, spec, "non-private intervals (no privacy)")
    result = minimise_erm(A, loss, c, tol=tol)
    hessian, covariance = hessian_and_covariance(A, loss, result.theta, c)
    sandwich = sandwich_covariance(hessian, covariance, A.shape[0])
    conf = normal_interval(result.theta, sandwich, alpha)
    return NonPrivateFit(result.theta, hessian, covariance, sandwich, conf, alpha, result.n_iter)
