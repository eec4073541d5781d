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

from .intervals import (
    check_alpha,
    hessian_and_covariance,
    normal_interval,
    sandwich_covariance,
)
from .ledger.hooks import note_not_private
from .losses import coerce_loss, loss_to_dict
from .methods import PrivateRelease
from .solver import margin_rows, minimise_erm
from .spec import keyword_spec, release_spec
from .validation import check_signed_data, check_signed_parts

__all__ = [
    "NonPrivateFit",
    "PrivateRelease",
    "intervals_at",
    "nonprivate_confidence_intervals",
    "private_confidence_intervals",
    "release_spec",
]


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

    The keywords are the fields of a :class:`dpci.ReleaseSpec`, with its defaults (``mechanism`` is its
    ``method``; an integer ``random_state`` its public ``seed``): the release is that spec's
    (:meth:`dpci.ReleaseSpec.release`). ``mechanism`` names a registered method (:mod:`dpci.methods`; the paper's are "objective" and
    "output"). X must hold finite rows with ||x_i|| <= 1 and y exactly the labels -1/+1; anything
    else voids the guarantee (Section 3) and raises DataValidationError (an O(n d) check).
    The estimators accept any two labels. ``closed_form`` uses Algorithm 5's normal
    interval for zCDP + output perturbation; False uses Monte Carlo there too.

    Inside ``with dpci.Ledger(...)`` the release is admitted (and charged) by the ledger before its
    noise is drawn.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Finite rows in the unit L2 ball, scaled by public bounds (no intercept is fitted: include a
        constant column).
    y : array-like of shape (n,)
        Labels coded -1.0 / +1.0.
    loss : Loss
        A :mod:`dpci.losses` loss: ``LogisticLoss()``, ``HuberLoss(h)`` or ``get_loss(name, ...)``.
    mechanism : str
        A registered method's name (:func:`dpci.methods.available`): "objective" (Algorithms 1
        and 3) or "output" (Algorithms 4 and 5) for the paper's.
    privacy : {"pure", "zcdp"}
        Pure epsilon-DP (``budget`` is epsilon) or rho-zCDP (``budget`` is rho).
    budget : float
        The release's total budget (coefficients and intervals together).
    split : Split, sequence of float or None
        One share of the budget per step of the method (phi1, phi2, phi3: the coefficients, the
        Hessian, the covariance); None: the paper's Table 2 (:func:`dpci.default_split`).
    c : float
        The regularisation coefficient of Eq. 3.1 (the paper uses 0.001); objective perturbation
        needs c above :func:`dpci.smallest_valid_c`.
    alpha : float
        1 - the confidence level.
    n_samples : int
        The Monte Carlo samples m of Algorithms 3 and 5.
    random_state : None, int or numpy.random.Generator
        The only source of randomness. None (the default) for a real release: an integer is a public
        seed (anyone who knows it can remove the noise) and the ledger records the result as not private.
    closed_form : bool
        Use Algorithm 5's normal interval for zCDP + output perturbation (False: Monte Carlo there too).

    Returns
    -------
    PrivateRelease
        Everything the release publishes: ``theta`` (the private coefficients), ``conf_int``
        ((d, 2) interval bounds), ``hessian`` and ``covariance`` (the private matrices), ``spend``
        (a :class:`~dpci.accounting.PrivacySpend`) and ``interval(alpha)`` for another level
        (post-processing: no extra budget).

    Raises
    ------
    DataValidationError
        X or y breaks the input contract (a row outside the unit ball, NaN, labels other than -1/+1);
        the message says what to change.
    RegularisationTooSmall
        ``c`` too small for objective perturbation; carries ``smallest_c`` and ``suggested_c``.
    ValueError
        An unknown method or notion, a budget, split, alpha or n_samples out of range.
    BudgetExceeded
        The active ledger refuses the release (nothing was charged and no noise was drawn).

    Warns
    -----
    UnderCoverageWarning
        A valid c so close to its bound that the intervals are likely to under-cover.

    See Also
    --------
    PrivateLogisticRegression, PrivateHuberSVM : the same release as a scikit-learn estimator (any
        two labels, DataFrames, ``conf_int()`` as a table).
    nonprivate_confidence_intervals : the non-private reference, on the same input.

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(2_000, [1.0, -0.5], random_state=0)  # rows in the unit ball, y in {-1, +1}
    >>> release = dpci.private_confidence_intervals(
    ...     X, y, dpci.LogisticLoss(), mechanism="output", budget=1.0, random_state=0  # a public seed: teaching only
    ... )
    >>> release.conf_int.shape, release.spend.epsilon
    ((2, 2), 1.0)
    >>> bool((release.conf_int[:, 0] < release.theta).all() and (release.theta < release.conf_int[:, 1]).all())
    True
    """
    X, y, divisors = check_signed_parts(X, y)
    spec, randomness = keyword_spec(
        loss,
        mechanism=mechanism,
        privacy=privacy,
        budget=budget,
        split=split,
        c=c,
        alpha=alpha,
        n_samples=n_samples,
        random_state=random_state,
    )
    return release_spec(X, y, spec, closed_form=closed_form, random_state=randomness, divisors=divisors)


def intervals_at(measurement, A, theta, coef_noise, rng, weights=None, closed_form=True):
    """The interval of a paper method's measurement (``spec.measure()``) once its coefficients theta~
    are released with noise law ``coef_noise`` (Algorithms 3 and 5;
    :meth:`dpci.methods.PaperMethod.interval_at`)."""
    return measurement.method.interval_at(measurement, A, theta, coef_noise, rng, weights, closed_form)


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
    A reference for judging a private interval, never for publishing: inside ``with dpci.Ledger(...)``
    it is recorded as not private.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Finite rows in the unit L2 ball.
    y : array-like of shape (n,)
        Labels coded -1.0 / +1.0.
    loss : Loss or str
        A :mod:`dpci.losses` loss, or a registered loss's name ("logistic", "huber").
    c : float
        The regularisation coefficient of Eq. 3.1.
    alpha : float
        1 - the confidence level.
    tol : float
        The gradient norm the exact Newton solver must reach.

    Returns
    -------
    NonPrivateFit
        ``theta`` (theta-hat), ``hessian`` and ``covariance`` (H and Sigma), ``sandwich`` (the
        covariance of theta-hat), ``conf_int`` ((d, 2) bounds) and ``interval(alpha)``.

    Raises
    ------
    DataValidationError
        X or y breaks the input contract.
    ValueError
        alpha outside (0, 1).
    ConvergenceError
        The solver did not reach ``tol``.

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(2_000, [1.0, -0.5], random_state=0)
    >>> ref = dpci.nonprivate_confidence_intervals(X, y, dpci.LogisticLoss(), c=1e-3)  # NOT private
    >>> ref.conf_int.shape
    (2, 2)
    """
    X, y = check_signed_data(X, y)
    alpha = check_alpha(alpha)
    loss = coerce_loss(loss)  # a loss object or a registered name ("logistic"), as the private functions take
    A = margin_rows(X, y)
    spec = dict(function="nonprivate_confidence_intervals", loss=loss_to_dict(loss), c=c, alpha=alpha)
    note_not_private(A, spec, "non-private intervals (no privacy)")
    result = minimise_erm(A, loss, c, tol=tol)
    hessian, covariance = hessian_and_covariance(A, loss, result.theta, c)
    sandwich = sandwich_covariance(hessian, covariance, A.shape[0])
    conf = normal_interval(result.theta, sandwich, alpha)
    return NonPrivateFit(result.theta, hessian, covariance, sandwich, conf, alpha, result.n_iter)
