"""scikit-learn's own estimator checks (written by no one here) on both estimators.

Every check passes except the ones declared in ``expected_failures``, each with the reason it fails by
design (and ``test_each_declared_failure_fails_for_its_reason`` shows that it fails for that reason):

- the estimators as they are, on the checks' data: rows with ||x|| > 1 are refused (the privacy
  guarantee assumes every row lies in the unit ball, Section 3 of the paper), so every check that
  fits on such rows is declared;
- the same estimators behind a public row map (each row x to x / (1 + ||x||): row by row, no
  constant read from the data, so the privacy is the same), so that the checks that fit and predict
  run on data dpci accepts; once with the labels learned from y, once with the public label set
  ``classes=(0, 1)``, which refuses any other label (the label set is public: reading it from the
  data would leak) and gives one-class data its release.

Each instance has an integer ``random_state``: its fits are repeatable, and a public seed is noted on
the ledger as not private, never charged. Every check runs inside an active ledger to show it: a
check cannot fail because a budget ran out.
"""

import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

from dpci import BudgetExceeded, HuberLoss, Ledger, PrivateERMClassifier, PrivateHuberSVM, PrivateLogisticRegression

# c large enough for objective perturbation at the checks' n (10 rows and up); 100 Monte Carlo draws
# (the fewest accepted) keep each fit fast; a public seed makes the fits repeatable.
SETTINGS = dict(c=1.0, n_samples=100, random_state=0)
PUBLIC_LABELS = (0, 1)


class IntoUnitBall:
    """x / (1 + ||x||) for each row: strictly inside the unit ball, from public constants only (a class
    with a fixed repr, so that the checks' test ids are the same from run to run)."""

    def __call__(self, X):
        return X / (1.0 + np.linalg.norm(X, axis=1, keepdims=True))

    def __repr__(self):
        return "x/(1+|x|)"


def _behind_row_map(estimator):
    return make_pipeline(FunctionTransformer(IntoUnitBall(), validate=True), estimator)


ESTIMATORS = [
    *(cls(**SETTINGS) for cls in (PrivateLogisticRegression, PrivateHuberSVM)),
    PrivateERMClassifier(loss=HuberLoss(0.3), **SETTINGS),  # any registered loss, its parameter given
]
INSTANCES = [
    *ESTIMATORS,
    *(_behind_row_map(est) for est in ESTIMATORS),
    *(_behind_row_map(clone(est).set_params(classes=PUBLIC_LABELS)) for est in ESTIMATORS),
]

# --- the declared failures: {reason: what the failure's message says}, then which checks ---------------
OUTSIDE_THE_UNIT_BALL = (
    "fits rows with ||x|| > 1, which dpci refuses: the privacy guarantee assumes every row lies in the unit ball "
    "(Section 3 of the paper)"
)
ONE_CLASS = (
    "with the public label set a y holding one class still gets its release (whether a release happens must not "
    "depend on the data), and its noisy coefficients may predict either class"
)
PIPELINE_STEPS = (
    "a Pipeline fits its steps in place, so its `steps` parameter changes in fit (scikit-learn's own "
    "make_pipeline(Normalizer(), LogisticRegression()) fails this check too): not a property of dpci's estimator"
)


def _outside_classes(labels):
    return (
        f"fits labels {labels}, outside the public classes={PUBLIC_LABELS}, which dpci refuses: the label set is a "
        "public parameter (reading it from the data would leak which labels occur)"
    )


def cause(reason):
    """A pattern that the message (or its cause's) of a check failing for ``reason`` matches."""
    if reason == OUTSIDE_THE_UNIT_BALL:
        return r"has L2 norm \S+ > 1\. The privacy guarantee assumes every row lies in the unit ball"
    if reason == ONE_CLASS:
        return r"Classifier can't predict when only one class is present"
    if reason == PIPELINE_STEPS:
        return r"(the parameter|but) steps"
    return re.escape(f"outside classes={PUBLIC_LABELS}")


FIT_ON_ROWS_OUTSIDE = [
    "check_fit_score_takes_y",
    "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self",
    "check_readonly_memmap_input",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_estimators_dtypes",
    "check_dtype_object",
    "check_pipeline_consistency",
    "check_estimators_nan_inf",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_classifier_data_not_an_array",
    "check_classifiers_classes",
    "check_classifiers_train",
    "check_supervised_y_2d",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_fit2d_1feature",
    "check_dict_unchanged",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_n_features_in",
    "check_fit2d_predict1d",
]
FIT_ON_OTHER_LABELS = {
    "check_estimators_dtypes": _outside_classes("0, 1 and 2"),
    "check_classifier_data_not_an_array": _outside_classes("1 and 2"),
    "check_classifiers_classes": _outside_classes("'one', 'two', 'three' and 1, 2 (strings and numbers)"),
    "check_fit2d_1feature": _outside_classes("1 and 2"),
    "check_classifiers_one_label": ONE_CLASS,
}


def expected_failures(estimator):
    """{check name: why it fails by design} for one of INSTANCES."""
    if not isinstance(estimator, Pipeline):
        names = FIT_ON_ROWS_OUTSIDE
        if hasattr(estimator, "predict_proba"):  # logistic regression: the SVM has no probabilities
            names = [*names, "check_decision_proba_consistency"]
        return dict.fromkeys(names, OUTSIDE_THE_UNIT_BALL)
    failures = dict.fromkeys(["check_estimators_overwrite_params", "check_dont_overwrite_parameters"], PIPELINE_STEPS)
    if estimator[-1].classes is not None:
        failures.update(FIT_ON_OTHER_LABELS)
    return failures


# --- the checks -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ledger():
    """An in-memory ledger whose datasets get a budget of one default release (epsilon = 1)."""
    ledger = Ledger("sqlite://", budget="epsilon=1", secret=b"sklearn checks")
    yield ledger
    ledger.close()


@pytest.mark.filterwarnings("ignore::dpci.PrivacyLeakWarning")  # labels learned from y warn by design
@parametrize_with_checks(INSTANCES, expected_failed_checks=expected_failures, xfail_strict=True)
def test_scikit_learn_check(estimator, check, ledger, request):
    with ledger.watching(session="scikit-learn checks") as watch:
        try:
            check(estimator)
        except Exception as error:
            if request.node.get_closest_marker("xfail") is None:
                raise
            # A declared failure: pytest reports its reason; formatting its traceback through scikit-learn's
            # 5,000-line module would take ~0.15 s, for each of the 75 (most of this file's time).
            raise error.with_traceback(None) from None
    # A public seed: every fit was noted as not private and nothing was charged (the budget, one release,
    # would have paid for the first charged fit on each dataset, so a charge could not go unseen).
    assert not any(admission.private for admission in watch.admissions)
    assert all(ledger.status(key).spent == 0 for key in {a.dataset for a in watch.admissions})


def _describe(estimator):
    if not isinstance(estimator, Pipeline):
        return type(estimator).__name__
    model = estimator[-1]
    return f"{type(model).__name__} behind x/(1+|x|)" + (f", classes={model.classes}" if model.classes else "")


def _messages(error):
    """The error's message and those of the errors it was raised from."""
    text = []
    while error is not None:
        text.append(f"{type(error).__name__}: {error}")
        error = error.__cause__ or error.__context__
    return "\n".join(text)


@pytest.mark.filterwarnings("ignore::dpci.PrivacyLeakWarning")
@pytest.mark.parametrize("estimator", INSTANCES, ids=_describe)
def test_each_declared_failure_fails_for_its_reason(estimator):
    declared = expected_failures(estimator)
    results = check_estimator(estimator, expected_failed_checks=declared, on_skip=None, on_fail=None)
    assert not [r["check_name"] for r in results if r["status"] == "failed"]
    failed = {r["check_name"]: r["exception"] for r in results if r["status"] == "xfail"}
    assert set(failed) == set(declared)  # each declared check failed (checks run more than once count once)
    for name, error in failed.items():
        assert re.search(cause(declared[name]), _messages(error)), f"{name} failed otherwise: {_messages(error)}"


def test_the_checks_fits_are_noted_not_charged(ledger):
    """What the checks rely on: with an integer seed a fit is noted as not private; with fresh randomness
    the same fit is charged, and the next is refused by this budget."""
    rng = np.random.default_rng(5)
    X = IntoUnitBall()(rng.standard_normal((40, 3)))
    y = np.arange(40) % 2
    with ledger.watching(dataset=ledger.ensure(ledger.key_of(X), "40 rows")) as watch:
        for _ in range(3):
            PrivateLogisticRegression(**SETTINGS, classes=PUBLIC_LABELS).fit(X, y)
        assert watch.status().spent == 0 and watch.status().not_private == 3
        fresh = PrivateLogisticRegression(**dict(SETTINGS, random_state=None), classes=PUBLIC_LABELS)
        fresh.fit(X, y)
        assert watch.status().spent == pytest.approx(1.0) and watch.status().releases == 1
        with pytest.raises(BudgetExceeded):
            fresh.fit(X, y)
