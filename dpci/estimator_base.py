"""The shared machinery of dpci's scikit-learn estimators (:mod:`dpci.estimators`): the parameters
and their checks, ``fit`` (one private release) and what a fitted estimator reads of its release
(intervals, a summary, predictions), all post-processing after ``fit``.

``__init__`` only stores its arguments; ``fit`` validates them (one declarative table per class, as
scikit-learn does), validates the data, runs one private release and stores what it learned in
attributes ending in ``_``. A concrete estimator adds its loss (``_loss``) and its own parameters.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from . import estimator_params as params
from . import methods
from .accounting import PRIVACY_NOTIONS, Split
from .exceptions import PrivacyLeakWarning, ReferenceWarning, UnderCoverageWarning, warn
from .inference import p_values, standard_errors, z_statistics
from .ledger.hooks import is_public_seed
from .solver import ConvergenceError
from .spec import ReleaseSpec, keyword_spec, release_spec
from .summary import Summary, release_summary
from .theta import offers_theta, theta_release
from .validation import check_data, check_features

LEARNED_CLASSES = (
    "classes_ were learned from y: which labels occur (and that there are two) is a fact about the data "
    "that the privacy guarantee does not cover, and one-class data would be refused. Pass "
    "classes=(negative, positive) to make the label set a public parameter."
)

THETA_REFUSED = (
    "{method} with the {loss} loss gives no interval for theta (the coefficients without penalty) from its "
    "release alone: use estimand='regularised' for theta_0(c), or state a public bound theta_bound=B on ||theta||."
)


#: Where the default c for theta exceeds the paper's (objective perturbation does not run at 0.001: few rows
#: or a small budget), the correction is large and its simulated law reads the released Hessian as exact.
ABOVE_PAPER_C = (
    "The interval for theta is at c = {c:.2g}, above the paper's 0.001, which objective perturbation cannot run "
    "at with these rows and this budget. At such c the intervals given were measured to cover less than their "
    "level: on Awan and Wang's design at n = 500, eps = 0.3, the worst coefficient 0.86 at 95% (docs/theta.md). "
    "More rows or budget let c = 0.001 run."
)


class _PrivateERMClassifier(ClassifierMixin, BaseEstimator):
    """Shared machinery of the private ERM classifiers (no intercept: X carries its constant column)."""

    _parameter_constraints = {
        "mechanism": params.one_of(methods.available),
        "method": params.method_name,
        "privacy": params.one_of(PRIVACY_NOTIONS),
        "budget": params.positive_real,
        "split": params.any_split,
        "c": params.c_value,
        "alpha": params.open_unit,
        "n_samples": params.sample_count,
        "random_state": params.random_state,
        "classes": params.label_set,
        "private_errors": params.flag,
    }

    def __init__(
        self,
        mechanism="objective",
        privacy="pure",
        budget=1.0,
        split=None,
        c=None,
        alpha=0.05,
        n_samples=10_000,
        random_state=None,
        method=None,
        classes=None,
        private_errors=False,
    ):
        """Store the parameters as given (``fit`` checks them): the keywords of
        :func:`dpci.private_confidence_intervals`, then ``method``, ``classes`` and ``private_errors``."""
        self.mechanism = mechanism
        self.privacy = privacy
        self.budget = budget
        self.split = split
        self.c = c
        self.alpha = alpha
        self.n_samples = n_samples
        self.random_state = random_state
        self.method = method
        self.classes = classes
        self.private_errors = private_errors

    def __sklearn_tags__(self):
        """What scikit-learn's checks may assume: two classes only; a fit is repeatable only with an
        integer random_state (otherwise each fit is a fresh random release)."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.non_deterministic = not is_public_seed(self.random_state)
        return tags

    def _validate_params(self):
        for name, check in self._parameter_constraints.items():
            check(name, getattr(self, name))
        method = self._method()
        method.check_notion(self.privacy)

    def _method(self):
        """The registered method: ``method`` if given, else ``mechanism`` (the paper's name for it)."""
        default = type(self)().mechanism  # "mechanism" left at its default does not disagree with "method"
        if self.method is not None and self.mechanism not in (default, self.method):
            raise ValueError(f"method={self.method!r} and mechanism={self.mechanism!r} disagree; give only method.")
        return methods.get(self.method if self.method is not None else self.mechanism)

    def _spec(self, n: int = 0, d: int = 0) -> tuple[ReleaseSpec, object]:
        """The release these parameters ask for (the method resolved, the split coerced once, and
        c="recommended" resolved from the public facts n and d), and the randomness to draw from
        (:func:`dpci.spec.keyword_spec`)."""
        split = None if self.split is None else Split.coerce(self.split, len(self._method().steps))
        c = self._default_c() if self.c is None else self.c
        if c == params.RECOMMENDED:
            with warnings.catch_warnings():
                if self.c is None:  # chosen by default, not asked for: its width is no promise to warn about
                    warnings.simplefilter("ignore", ReferenceWarning)
                c = self._recommend(n, d, split).c
        if self.c is None and c != params.PAPER_C and self._paper_c_runs(n, split):
            c = min(c, params.PAPER_C)
        return keyword_spec(
            self._loss(),
            mechanism=self._method().name,
            privacy=self.privacy,
            budget=self.budget,
            split=split,
            c=c,
            alpha=self.alpha,
            n_samples=self.n_samples,
            random_state=self.random_state,
        )

    def _default_c(self):
        """c left at None: the c that serves the default estimand. For theta (a loss and method that
        :func:`~dpci.theta.offers_theta`) that is :func:`dpci.recommend_c`'s, capped at the paper's where
        that runs (:meth:`_paper_c_runs`): the paper's c = 0.001 is above the curvature of most designs and
        leaves no interval for theta there. For theta_0(c) it is the paper's."""
        return params.RECOMMENDED if offers_theta(self._method(), self._loss()) else params.PAPER_C

    def _paper_c_runs(self, n: int, split) -> bool:
        """Whether the paper's c runs here (objective perturbation has a least c). The default c is the
        recommended one, but no more than the paper's where that runs: a larger c makes the correction for
        the penalty large, and its simulated law reads the released Hessian as exact. On Awan and Wang's
        design at eps = 0.3, n = 1,000 the recommended 0.0052 covered beta1 0.926 (500 data sets), the
        paper's 0.001 0.946 (docs/theta.md)."""
        spec = ReleaseSpec(self._method().name, self.privacy, self.budget, split, loss=self._loss())
        bound = self._method().smallest_c(spec.measure(), n)
        return bound is None or bound < params.PAPER_C

    def _recommend(self, n: int, d: int, split):
        """:func:`dpci.recommend_c` for these settings on n rows and d coefficients (no data read, no
        privacy spent); kept as ``recommendation_``. A method that takes no c is given the default."""
        from .recommend import recommend_c

        method = self._method()
        if not method.uses_c:
            self.recommendation_ = None
            return ReleaseSpec()  # the default c: the method takes none
        self.recommendation_ = recommend_c(
            n,
            d,
            method=method.name,
            privacy=self.privacy,
            budget=self.budget,
            loss=self._loss(),
            split=split,
            alpha=self.alpha,
        )
        return self.recommendation_

    def _loss(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def fit(self, X, y):
        """Fit privately and compute private (1 - alpha) intervals. Rows of X must have norm <= 1."""
        self._validate_params()
        X, signs, classes, names, divisors = check_data(X, y, self.classes, private_errors=self.private_errors)
        if self.classes is None:
            warn(LEARNED_CLASSES, PrivacyLeakWarning, stacklevel=2)
        try:
            spec, randomness = self._spec(*X.shape)  # c="recommended" reads n and d only (public facts)
            release = release_spec(X, signs, spec, random_state=randomness, divisors=divisors)  # data checked already
        except ConvergenceError:
            if not self.private_errors:
                raise
            raise ConvergenceError(  # the solver's message quotes a gradient norm computed from the data
                "The Newton solver did not reach the exact minimiser objective perturbation needs; try a larger c."
            ) from None
        if self.c is None and spec.c > params.PAPER_C and offers_theta(self._method(), self._loss()):
            warn(ABOVE_PAPER_C.format(c=spec.c), UnderCoverageWarning, stacklevel=2)
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        if names is not None:
            self.feature_names_in_ = names
        self.n_samples_fit_ = X.shape[0]
        self.release_ = release
        self.c_ = release.c  # the c the release used (c=None or "recommended": the one chosen)
        self.coef_ = release.theta
        self.intercept_ = 0.0
        self.hessian_ = release.hessian
        self.covariance_ = release.covariance
        self.privacy_spent_ = release.spend
        # The interval for theta (dpci.theta): post-processing of the release, simulated once here so that
        # every reader of this fit sees the same draws.
        method, loss = self._method(), self._loss()
        self.theta_release_ = (
            theta_release(release, loss, self._simulation_rng()) if offers_theta(method, loss) else None
        )
        shown = self.interval_release_ = self._estimand_release(None)
        self.conf_int_ = shown.conf_int  # for the default estimand, as SE, z and p
        self.bse_ = standard_errors(shown)  # post-processing of the release (dpci.inference)
        self.zvalues_ = z_statistics(shown)
        self.pvalues_ = p_values(shown)
        return self

    def _simulation_rng(self):
        """The randomness of the simulation behind the interval for theta: a stream of its own from an integer
        seed (so it never replays the mechanism's noise), the caller's Generator, or fresh."""
        if is_public_seed(self.random_state):
            return np.random.default_rng(np.random.SeedSequence(int(self.random_state), spawn_key=(1,)))
        return self.random_state if isinstance(self.random_state, np.random.Generator) else np.random.default_rng()

    def _estimand_release(self, estimand):
        """The release whose intervals, SE, z and p are for ``estimand`` (None: the default, theta where the
        method and loss offer it, else the method's own)."""
        if estimand is None:
            estimand = "unregularised" if self.theta_release_ is not None else None
        if estimand == "unregularised" and self._method().uses_c:
            if self.theta_release_ is None:
                raise ValueError(THETA_REFUSED.format(method=self._method().label, loss=self._loss().name))
            return self.theta_release_
        return self.release_

    def _feature_labels(self):
        if hasattr(self, "feature_names_in_"):
            return list(self.feature_names_in_)
        return [f"x{j}" for j in range(self.n_features_in_)]

    def _check_fitted(self):
        """Raise sklearn's NotFittedError (a ValueError and an AttributeError) before ``fit``."""
        check_is_fitted(self, "release_", msg="This %(name)s is not fitted yet; call fit(X, y) first.")

    def default_estimand(self) -> str:
        """What :meth:`conf_int` and :meth:`summary` are for by default: "unregularised" (theta, the
        coefficients without penalty) where the method and loss offer it (:func:`dpci.theta.offers_theta`:
        logistic regression by the paper's methods, or a method without c), else "regularised" (theta_0(c);
        the Huberized SVM, whose unpenalised minimiser need not be unique)."""
        self._check_fitted()
        return "unregularised" if self.theta_release_ is not None or not self._method().uses_c else "regularised"

    def conf_int(self, alpha=None, estimand=None, theta_bound=None) -> pd.DataFrame:
        """Estimates and (1 - alpha) private intervals as a DataFrame (post-processing, no extra budget).

        ``estimand`` (default :meth:`default_estimand`): "unregularised", the interval is for theta, the
        coefficients without penalty, from the release alone (:mod:`dpci.theta`: the estimate corrected for
        the penalty, its law simulated from the release; ``estimate`` is the corrected one); with
        ``theta_bound`` (B, a bound on ||theta|| you state as public) it is instead the theta_0(c) interval
        widened by the proven :func:`dpci.bias_bound`. "regularised": for theta_0(c), the coefficients of the
        model fitted with the penalty c ||theta||^2, which the paper's intervals cover. The frame's
        ``attrs["estimand"]`` says which in words, ``attrs["valid"]`` whether an interval was given (False:
        unbounded, ``attrs["caveats"]`` says why) and ``attrs["bias_bound"]`` the proven bound, if used."""
        from .recommend import describe_estimand, estimand_bias, interval_estimand, theta_interval

        self._check_fitted()
        method = self._method()
        estimand = interval_estimand(method, self.default_estimand() if estimand is None else estimand)
        bias = None
        if theta_bound is not None or estimand == "regularised" or not method.uses_c:
            bias = estimand_bias(method, estimand, self.release_, self._loss(), theta_bound, alpha)
            shown, bounds = self.release_, theta_interval(self.release_, bias, alpha)
        else:
            shown = self._estimand_release(estimand)
            bounds = shown.interval(alpha)
        table = pd.DataFrame(
            {"estimate": shown.theta, "lower": bounds[:, 0], "upper": bounds[:, 1]},
            index=pd.Index(self._feature_labels(), name="feature"),
        )
        table.attrs["estimand"] = describe_estimand(estimand)
        table.attrs["bias_bound"] = bias
        table.attrs["valid"] = bool(getattr(shown, "valid", True))
        table.attrs["caveats"] = tuple(shown.caveats)
        return table

    def summary(self, delta: float | None = None, alpha: float | None = None) -> Summary:
        """The release as a publishable :class:`~dpci.summary.Summary`: a header (method, notion and
        privacy spent, n, d, c, split, estimand, randomness) and estimate, SE, z, p and the (1 - alpha)
        interval per coefficient; ``str()`` of it is the text, ``.as_html()``, ``.as_latex()`` the others.
        ``delta`` adds the (epsilon, delta)-DP the spend implies. No extra privacy (post-processing)."""
        self._check_fitted()
        title = f"{type(self).__name__} (private coefficients, SE, z, p and intervals)"
        caveats = (LEARNED_CLASSES,) if self.classes is None else ()
        return release_summary(
            self._estimand_release(None),
            self._feature_labels(),
            title=title,
            random_state=self.random_state,
            delta=delta,
            alpha=alpha,
            caveats=caveats,
        )

    def decision_function(self, X):
        """theta . x for each row (post-processing of the private coefficients)."""
        self._check_fitted()
        X, _ = check_features(X, self.n_features_in_, private_errors=self.private_errors)
        return X @ self.coef_

    def predict(self, X):
        """``classes_[1]`` where theta . x > 0, else ``classes_[0]``."""
        scores = self.decision_function(X)  # checks first that the model is fitted
        return self.classes_[(scores > 0).astype(int)]
