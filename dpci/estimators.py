"""scikit-learn estimators over :func:`dpci.release.private_confidence_intervals`.

``__init__`` only stores its arguments; ``fit`` validates them (one declarative
table per class, as scikit-learn does), validates the data, runs one private
release and stores what it learned in attributes ending in ``_``. That shared
machinery is in :mod:`dpci.estimator_base`; each estimator here adds its loss.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
from scipy.special import expit

from . import estimator_params as params
from .estimator_base import _PrivateERMClassifier
from .inference import odds_ratio_table
from .losses import HuberLoss, LogisticLoss, coerce_loss


def _then(base_init):
    """For a subclass ``__init__(self, <its own parameters>, *args, **kwargs)`` that passes the rest to
    ``base_init``: give it the signature self, its own parameters, then base_init's (scikit-learn reads
    an estimator's parameters from the signature, so each is still defined once)."""

    def decorate(init):
        self, *own = (p for p in inspect.signature(init).parameters.values() if p.kind is not p.VAR_POSITIONAL)
        own = [p for p in own if p.kind is not p.VAR_KEYWORD]
        rest = list(inspect.signature(base_init).parameters.values())[1:]
        init.__signature__ = inspect.signature(base_init).replace(parameters=[self, *own, *rest])
        return init

    return decorate


class PrivateLogisticRegression(_PrivateERMClassifier):
    """Differentially private logistic regression with private confidence intervals.

    Parameters
    ----------
    mechanism : {"objective", "output"} or another registered method's name
        Objective perturbation (Algorithms 1 and 3) or output perturbation (Algorithms 4 and 5).
    method : str or None
        A registered method's name (``dpci.methods.available()``); overrides ``mechanism``.
    privacy : {"pure", "zcdp"}
        Pure epsilon-DP (``budget`` is epsilon) or rho-zCDP (``budget`` is rho).
    budget : float
        The total privacy budget of the release (coefficients and intervals together).
    split : tuple of 3 floats or None
        Shares (phi1, phi2, phi3) of the budget for the coefficients, the Hessian and the
        covariance; they must be positive and sum to 1. None uses the paper's Table 2.
    c : float, "recommended" or None
        Regularisation coefficient of Eq. 3.1. Objective perturbation needs
        c > t / (2 n (e^epsilon1 - 1)); ``fit`` says the smallest valid c when it is not.
        "recommended": :func:`dpci.recommend_c` chooses it at ``fit`` from n, d and these settings
        (public facts only; kept as ``recommendation_``), for the interval of the default estimand.
        None (default): where that estimand is theta (the paper's methods) the recommended c, but no
        more than the paper's 0.001 where that runs; else the paper's 0.001. The paper's c is above
        the curvature of most designs, and a penalty as strong as the curvature leaves no interval for
        theta (docs/theta.md).
    alpha : float
        1 - confidence level of ``conf_int_``.
    n_samples : int
        Monte Carlo samples m of Algorithms 3 and 5 (unused by the zCDP output closed form).
    random_state : None, int or numpy.random.Generator
        The only source of randomness.
    classes : pair of labels or None
        The public label set (negative, positive): ``classes_`` is exactly it and ``classes[1]`` is
        coded +1. y may then hold only one of them (the release still happens, so one-class data do
        not decide whether it does); a label outside it is refused. None learns the two labels from
        y, which the guarantee does not cover (a ``PrivacyLeakWarning`` says so).
    private_errors : bool
        True: errors about the data say what is wrong without quoting values, row indices or counts
        from it (safe to show to others). False (default): they name what they found.

    Attributes
    ----------
    coef_ : ndarray of shape (d,)
        The private coefficients theta~.
    conf_int_ : ndarray of shape (d, 2)
        The private interval bounds, for the default estimand (:meth:`default_estimand`): theta, the
        coefficients without penalty, whose estimate :meth:`conf_int` gives corrected for the penalty.
    interval_release_ : PrivateRelease
        The release behind ``conf_int_``, ``bse_``, ``zvalues_`` and ``pvalues_``: ``theta_release_`` where
        given, else ``release_``.
    theta_release_ : dpci.theta.ThetaRelease or None
        The interval for theta from the release alone (:mod:`dpci.theta`), simulated once at ``fit``; None
        where the method or loss offers none (the Huberized SVM: its intervals are for theta_0(c)).
    privacy_spent_ : PrivacySpend
        What the release spent: ``.epsilon``, ``.rho``, ``.to_approx_dp(delta)``, ``.steps``.
    hessian_, covariance_ : ndarray of shape (d, d)
        The private matrices of Algorithm 2.
    release_ : PrivateRelease
        Everything released, including the Monte Carlo draws.
    bse_, zvalues_, pvalues_ : ndarray of shape (d,)
        Private standard errors (the standard deviation of the interval's Monte Carlo law), z = coef_ / bse_
        and the p-values of each coefficient being 0 (p < alpha exactly when the (1 - alpha) interval
        excludes 0): post-processing of the release, no extra privacy (docs/inference.md).
    c_ : float
        The c the release used: ``c``, or the one chosen for it (``c`` None or "recommended").
    recommendation_ : dpci.recommend.Recommendation
        With ``c`` "recommended" (or None, for theta): what :func:`dpci.recommend_c` chose and predicted
        (public facts only).
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class (+1).

    Raises
    ------
    DataValidationError
        From ``fit``: X or y breaks the input contract (a row with norm > 1, NaN or infinite values,
        a label outside ``classes``, sparse or complex X, duplicate column names); the message says
        what to change (without quoting the data with ``private_errors=True``).
    RegularisationTooSmall
        From ``fit``: ``c`` too small for objective perturbation; carries ``smallest_c`` and
        ``suggested_c``.
    ValueError
        From ``fit``: a parameter out of range (an unknown method or notion, a split that does not
        sum to 1, ...).
    BudgetExceeded
        From ``fit``: the active ledger refuses the release (nothing was charged, no noise drawn).
    sklearn.exceptions.NotFittedError
        ``predict``, ``conf_int`` and the other readers before ``fit``.

    Warns
    -----
    PrivacyLeakWarning
        ``classes`` not given: the label set is learned from y.
    UnderCoverageWarning
        A valid c so close to its bound that the intervals are likely to under-cover.

    See Also
    --------
    PrivateHuberSVM : the same for the Huberized hinge loss.
    dpci.private_confidence_intervals : the release as a function, for labels coded -1/+1.

    Examples
    --------
    >>> import dpci
    >>> import pandas as pd
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(2_000, [1.0, -0.5], random_state=0)
    >>> frame = pd.DataFrame(X, columns=["age", "const"])  # rows in the unit ball, a constant column
    >>> labels = pd.Series(y).map({-1.0: "no", 1.0: "yes"})
    >>> model = dpci.PrivateLogisticRegression(
    ...     mechanism="objective", privacy="pure", budget=1.0, classes=("no", "yes"), random_state=0
    ... ).fit(frame, labels)  # random_state=0: a public seed, for teaching and tests only
    >>> table = model.conf_int()  # estimate, lower, upper per feature
    >>> list(table.index), list(table.columns)
    (['age', 'const'], ['estimate', 'lower', 'upper'])
    >>> model.privacy_spent_.epsilon
    1.0
    >>> model.predict_proba(frame[:2]).shape
    (2, 2)
    """

    def _loss(self):
        return LogisticLoss()

    def predict_proba(self, X):
        """P(y = classes_[1] | x) = S(theta . x) in the second column."""
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def odds_ratios(self, alpha=None, estimand=None, theta_bound=None) -> pd.DataFrame:
        """exp of each coefficient and of its :meth:`conf_int` bounds (same arguments): the factor by which
        the odds of ``classes_[1]`` change per unit of the design column as fitted (the scaled feature,
        rows in the unit ball), the others fixed. Post-processing, no extra privacy."""
        return odds_ratio_table(self.conf_int(alpha, estimand=estimand, theta_bound=theta_bound))


class PrivateHuberSVM(_PrivateERMClassifier):
    """Differentially private linear SVM (Huberized hinge loss with width ``h``) with private intervals.

    Takes the parameters of :class:`PrivateLogisticRegression` plus ``h`` > 0 (default 0.5,
    as in Chaudhuri et al. 2011); the loss has |f''| <= 1/(2h), so a small h needs a larger c
    under objective perturbation. Its attributes, errors and warnings are those of
    :class:`PrivateLogisticRegression`, without ``predict_proba``.

    Parameters
    ----------
    h : float
        The width of the Huberized hinge loss (:class:`~dpci.losses.HuberLoss`), > 0.
    mechanism : str
        A registered method's name: "objective" or "output" for the paper's.
    method : str or None
        A registered method's name; overrides ``mechanism``.
    privacy : {"pure", "zcdp"}
        Pure epsilon-DP (``budget`` is epsilon) or rho-zCDP (``budget`` is rho).
    budget : float
        The total privacy budget of the release.
    split : tuple of 3 floats or None
        Shares (phi1, phi2, phi3) of the budget; None uses the paper's Table 2.
    c : float, "recommended" or None
        Regularisation coefficient of Eq. 3.1 ("recommended": :func:`dpci.recommend_c` at ``fit``;
        None, the default: as :class:`PrivateLogisticRegression`, so the paper's 0.001 for a loss
        without an interval for theta).
    alpha : float
        1 - confidence level of ``conf_int_``.
    n_samples : int
        Monte Carlo samples m of Algorithms 3 and 5.
    random_state : None, int or numpy.random.Generator
        The only source of randomness (None for a real release).
    classes : pair of labels or None
        The public label set (negative, positive).
    private_errors : bool
        True: errors about the data do not quote it.

    Raises
    ------
    ValueError
        From ``fit``: ``h`` not positive, or any error of :class:`PrivateLogisticRegression`
        (``DataValidationError``, ``RegularisationTooSmall`` and ``BudgetExceeded`` are ValueErrors).

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(2_000, [1.0, -0.5], random_state=0)
    >>> svm = dpci.PrivateHuberSVM(
    ...     h=0.5, mechanism="output", privacy="zcdp", budget=0.5, classes=(-1, 1), random_state=0
    ... ).fit(X, y)
    >>> svm.conf_int_.shape, svm.privacy_spent_.rho
    ((2, 2), 0.5)
    """

    _parameter_constraints = {**_PrivateERMClassifier._parameter_constraints, "h": params.positive_real}

    @_then(_PrivateERMClassifier.__init__)
    def __init__(self, h=0.5, *args, **kwargs):
        self.h = h
        super().__init__(*args, **kwargs)

    def _loss(self):
        return HuberLoss(self.h)


class PrivateERMClassifier(_PrivateERMClassifier):
    """A differentially private linear classifier for any registered margin loss, with private intervals.

    The estimator of a loss added with :func:`dpci.losses.register_loss`: ``loss`` is a loss object
    with its parameters (``get_loss("huber", h=0.3)``) or a registered name (its default parameters).
    :class:`PrivateLogisticRegression` and :class:`PrivateHuberSVM` are this estimator for the paper's
    two losses. Its attributes, errors and warnings are those of :class:`PrivateLogisticRegression`,
    without ``predict_proba``.

    Parameters
    ----------
    loss : Loss or str
        The margin loss (:data:`dpci.losses.LOSSES`), e.g. ``get_loss("huber", h=0.3)``.
    mechanism : str
        A registered method's name: "objective" or "output" for the paper's.
    method : str or None
        A registered method's name; overrides ``mechanism``.
    privacy : {"pure", "zcdp"}
        Pure epsilon-DP (``budget`` is epsilon) or rho-zCDP (``budget`` is rho).
    budget : float
        The total privacy budget of the release.
    split : tuple of floats or None
        One share per step of the method (three for the paper's: phi1, phi2, phi3); None uses the
        method's default (the paper's Table 2).
    c : float, "recommended" or None
        Regularisation coefficient of Eq. 3.1 ("recommended": :func:`dpci.recommend_c` at ``fit``;
        None, the default: as :class:`PrivateLogisticRegression`, so the paper's 0.001 for a loss
        without an interval for theta).
    alpha : float
        1 - confidence level of ``conf_int_``.
    n_samples : int
        Monte Carlo samples m of Algorithms 3 and 5.
    random_state : None, int or numpy.random.Generator
        The only source of randomness (None for a real release; an int is a public seed, not private).
    classes : pair of labels or None
        The public label set (negative, positive).
    private_errors : bool
        True: errors about the data do not quote it.

    Raises
    ------
    ValueError
        From ``fit``: an unknown loss or a parameter it does not declare, or any error of
        :class:`PrivateLogisticRegression` (``DataValidationError``, ``RegularisationTooSmall`` and
        ``BudgetExceeded`` are ValueErrors).

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(2_000, [1.0, -0.5], random_state=0)
    >>> model = dpci.PrivateERMClassifier(
    ...     loss=dpci.get_loss("huber", h=0.3), mechanism="output", privacy="zcdp", budget=0.5,
    ...     classes=(-1, 1), random_state=0,
    ... ).fit(X, y)
    >>> model.conf_int_.shape, model.release_.spend.rho
    ((2, 2), 0.5)
    """

    _parameter_constraints = {**_PrivateERMClassifier._parameter_constraints, "loss": params.loss_param}

    @_then(_PrivateERMClassifier.__init__)
    def __init__(self, loss="logistic", *args, **kwargs):
        self.loss = loss
        super().__init__(*args, **kwargs)

    def _loss(self):
        return coerce_loss(self.loss)
