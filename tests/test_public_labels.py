"""The label set as a public parameter (classes=) and error messages that quote no data (private_errors=)."""

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import logistic_labels, unit_ball_rows
from scipy import sparse
from sklearn.base import clone
from sklearn.utils import estimator_checks

import dpci.estimator_base
import dpci.estimators
from dpci import (
    DataValidationError,
    PrivacyLeakWarning,
    PrivateHuberSVM,
    PrivateLogisticRegression,
    private_confidence_intervals,
)
from dpci.losses import HuberLoss, LogisticLoss
from dpci.solver import ConvergenceError
from dpci.validation import check_features, check_labels, check_signs, check_unit_ball

N, ROW = 400, 137  # ROW: where the bad value sits, so a message quoting the row index would show "137"
NUMBER, LABEL = 987654.321, "SECRET_LABEL"  # sentinels that no private message may quote
NEVER_SAID = ("987654", LABEL, str(ROW))


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(16)
    X = np.column_stack([unit_ball_rows(rng, N, 2) * 0.8, np.full(N, 0.6)])
    y = np.where(logistic_labels(rng, X, np.array([2.0, -1.0, 0.5])) > 0, "yes", "no")
    return X, y


def _loss(cls):
    return LogisticLoss() if cls is PrivateLogisticRegression else HuberLoss(0.5)


@pytest.mark.parametrize("cls", [PrivateLogisticRegression, PrivateHuberSVM])
@pytest.mark.parametrize("classes", [("no", "yes"), ("yes", "no")])
def test_classes_are_kept_and_their_order_picks_the_positive_class(data, cls, classes):
    X, y = data
    model = cls(classes=classes, mechanism="output", random_state=3).fit(X, y)
    assert model.classes_.tolist() == list(classes)
    signs = np.where(y == classes[1], 1.0, -1.0)
    release = private_confidence_intervals(X, signs, _loss(cls), mechanism="output", c=model.c_, random_state=3)
    np.testing.assert_array_equal(model.release_.conf_int, release.conf_int)
    positive = model.decision_function(X) > 0
    np.testing.assert_array_equal(model.predict(X), np.where(positive, classes[1], classes[0]))


@pytest.mark.parametrize("cls", [PrivateLogisticRegression, PrivateHuberSVM])
@pytest.mark.parametrize("mechanism, privacy", [("objective", "pure"), ("output", "zcdp")])
@pytest.mark.parametrize("only", ["no", "yes"])
def test_one_class_y_still_releases_when_the_classes_are_public(data, cls, mechanism, privacy, only):
    X, _ = data
    y = np.full(N, only)
    model = cls(classes=("no", "yes"), mechanism=mechanism, privacy=privacy, c=0.01, random_state=5).fit(X, y)
    assert model.classes_.tolist() == ["no", "yes"]
    theta0 = model.release_.conf_int  # theta_0(c) exists whatever the labels
    assert np.isfinite(theta0).all() and np.all(theta0[:, 0] < theta0[:, 1])
    if model.theta_release_ is not None:  # one class is separable: theta does not exist, and the release says so
        table = model.conf_int()
        assert not table.attrs["valid"] and np.isinf(model.conf_int_).all()
        assert any("separable" in caveat for caveat in table.attrs["caveats"])
    spent = model.privacy_spent_.epsilon if privacy == "pure" else model.privacy_spent_.rho
    assert spent == pytest.approx(1.0)  # the whole budget (epsilon = 1, or rho = 1), as on two-class data
    # the same mechanism as on any other labels: the release of the coded signs with the same seed
    signs = np.full(N, 1.0 if only == "yes" else -1.0)
    release = private_confidence_intervals(
        X, signs, _loss(cls), mechanism=mechanism, privacy=privacy, c=0.01, random_state=5
    )
    np.testing.assert_array_equal(model.release_.conf_int, release.conf_int)


def test_without_classes_one_class_y_is_still_refused(data):
    X, _ = data
    with pytest.raises(DataValidationError, match="exactly two distinct labels.*classes="):
        PrivateLogisticRegression(random_state=0).fit(X, np.full(N, "yes"))


def test_a_label_outside_the_classes_is_refused(data):
    X, y = data
    y = y.copy().astype(object)
    y[ROW] = "maybe"
    with pytest.raises(DataValidationError, match=rf"outside classes=\('no', 'yes'\): y\[{ROW}\] = 'maybe' \(1 of"):
        PrivateLogisticRegression(classes=("no", "yes"), random_state=0).fit(X, y)
    with pytest.raises(DataValidationError, match=r"outside classes=\(0, 1\)"):  # "yes"/"no" are not 0/1
        PrivateLogisticRegression(classes=(0, 1), random_state=0).fit(X, data[1])


@pytest.mark.parametrize(
    "y",
    [
        np.array([1.0, -1.0, -1.0, 1.0]),
        np.array([3, 1, 3]),
        np.array([True, False, False]),
        np.array(["yes", "no", "no"]),
        np.array([b"b", b"a"]),
        np.array([200, 3], dtype=np.uint8),
        np.array([-0.0, 0.0, 1.0]),  # -0.0 and 0.0 are one label
        np.array(["b", "b", "b"]),  # one label
        np.array([1, 2, 3, 1]),  # three
        np.array([2, "a", 2], dtype=object),  # not comparable: np.unique's TypeError
    ],
)
def test_learned_labels_are_those_of_np_unique(y):
    """Two labels are found by comparisons, not a sort (a fit's hot path): the same classes, in the
    same order and dtype, and the same coding, as np.unique gives; everything else as before."""
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError:
        with pytest.raises(DataValidationError, match="cannot be compared"):
            check_labels(y, len(y))
        return
    if len(classes) != 2:
        with pytest.raises(DataValidationError, match="exactly two distinct labels"):
            check_labels(y, len(y))
        return
    signs, learned = check_labels(y, len(y))
    assert learned.dtype == classes.dtype and learned.tolist() == classes.tolist()
    np.testing.assert_array_equal(signs, np.where(codes == 1, 1.0, -1.0))


def test_numeric_classes_code_numeric_labels(data):
    X, y = data
    numeric = np.where(y == "yes", 1, 0)
    a = PrivateLogisticRegression(classes=(0, 1), random_state=2).fit(X, numeric)
    b = PrivateLogisticRegression(classes=("no", "yes"), random_state=2).fit(X, y)
    np.testing.assert_array_equal(a.conf_int_, b.conf_int_)
    assert a.classes_.tolist() == [0, 1] and set(a.predict(X)) <= {0, 1}


def test_learned_classes_are_warned_about_and_public_ones_are_not(data):
    X, y = data
    with pytest.warns(PrivacyLeakWarning, match=r"learned from y.*classes=\(negative, positive\)"):
        PrivateLogisticRegression(random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        PrivateLogisticRegression(classes=("no", "yes"), random_state=0).fit(X, y)


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(classes="ab"), "classes must be a pair"),
        (dict(classes=("no", "yes", "maybe")), "classes must be a pair"),
        (dict(classes=("no", "no")), "two distinct labels"),
        (dict(classes=(None, "yes")), "two distinct labels"),
        (dict(private_errors="yes"), "private_errors must be True or False"),
    ],
)
def test_bad_classes_and_flags_are_refused_in_fit_not_init(data, params, message):
    model = PrivateLogisticRegression(**params)  # stored as given
    assert all(model.get_params()[k] is v for k, v in params.items())
    with pytest.raises(ValueError, match=message):
        model.fit(*data)


@pytest.mark.parametrize("cls", [PrivateLogisticRegression, PrivateHuberSVM])
def test_the_new_parameters_follow_the_scikit_learn_conventions(cls, data):
    classes = ("no", "yes")
    model = cls(classes=classes, private_errors=True, random_state=0)
    assert model.get_params()["classes"] is classes and model.get_params()["private_errors"] is True
    twin = clone(model)
    assert twin.get_params()["classes"] == classes
    assert model.set_params(classes=("yes", "no")).classes == ("yes", "no")
    name = cls.__name__
    estimator_checks.check_parameters_default_constructible(name, cls())
    estimator_checks.check_no_attributes_set_in_init(name, cls())
    estimator_checks.check_get_params_invariance(name, model)
    estimator_checks.check_set_params(name, cls())


# --- private_errors: every DataValidationError of dpci.validation, on inputs carrying the sentinels ---


def _rows(value=None, at=(ROW, 0)):
    X = unit_ball_rows(np.random.default_rng(0), N, 3) * 0.5
    if value is not None:
        X = X.astype(object if isinstance(value, str) else np.result_type(X, value))
        X[at] = value
    return X


def _labels(value, numeric=False):
    y = np.where(np.arange(N) % 2 == 0, 1.0, -1.0) if numeric else np.where(np.arange(N) % 2 == 0, "yes", "no")
    y = y.astype(object)
    y[ROW] = value
    return y.astype(float) if numeric else y


def _with_na():
    frame = pd.DataFrame(_rows(NUMBER, (5, 0)), columns=list("abc")).astype("Float64")
    frame.iloc[ROW, 1] = pd.NA
    return frame


def _mixed():
    y = _labels(LABEL)
    y[ROW + 1] = 3
    return y


# (what it is about, the call, what the default message quotes): one row per raise in dpci/validation.py
CASES = [
    ("sparse", lambda p: check_features(sparse.csr_matrix(_rows(NUMBER)), private_errors=p), None),
    (
        "duplicate names",
        lambda p: check_features(pd.DataFrame(_rows(NUMBER), columns=list("aac")), private_errors=p),
        None,
    ),
    ("missing", lambda p: check_features(_with_na(), private_errors=p), None),
    ("complex", lambda p: check_features(_rows(complex(NUMBER, 1)), private_errors=p), None),
    ("not numbers", lambda p: check_features(_rows(LABEL), private_errors=p), None),
    ("1-D", lambda p: check_features(_rows(NUMBER)[:, 0], private_errors=p), None),
    ("empty", lambda p: check_features(np.empty((0, 3)), private_errors=p), None),
    ("d", lambda p: check_features(_rows(NUMBER), n_features=4, private_errors=p), None),
    ("nan", lambda p: check_features(_rows(np.nan, (ROW, 2)), private_errors=p), f"row {ROW}"),
    ("norm", lambda p: check_unit_ball(_rows(NUMBER), private_errors=p), f"row {ROW} has L2 norm 987654"),
    ("y 2-D", lambda p: check_labels(np.column_stack([_labels(LABEL)] * 2), N, private_errors=p), None),
    ("y length", lambda p: check_labels(_labels(LABEL)[:-1], N, private_errors=p), None),
    ("y nan", lambda p: check_labels(_labels(np.nan, numeric=True), N, private_errors=p), None),
    ("y missing", lambda p: check_labels(_labels(None), N, private_errors=p), None),
    ("y mixed", lambda p: check_labels(_mixed(), N, private_errors=p), None),
    ("y three labels", lambda p: check_labels(_labels(LABEL), N, private_errors=p), LABEL),
    (
        "y outside",
        lambda p: check_labels(_labels(LABEL), N, ("no", "yes"), private_errors=p),
        f"y[{ROW}] = '{LABEL}'",
    ),
    ("signs", lambda p: check_signs(_labels(NUMBER, numeric=True), N, private_errors=p), f"y[{ROW}] = 987654"),
]


def test_every_refusal_of_the_validation_module_has_a_case():
    source = (Path(dpci.estimators.__file__).parent / "validation.py").read_text()
    assert source.count("raise DataValidationError") == len(CASES)


def _message(call, private):
    with pytest.raises(DataValidationError) as caught:
        call(private)
    return str(caught.value)


@pytest.mark.parametrize("about, call, detail", CASES, ids=[c[0] for c in CASES])
def test_private_errors_quote_no_data(about, call, detail):
    said = _message(call, True)
    assert said and not any(s in said for s in NEVER_SAID), said
    if detail is not None:  # the default message still names what it found
        assert detail in _message(call, False)
        assert detail not in said


def test_the_cases_reach_distinct_refusals():
    heads = {re.split(r"[:;(.]", _message(call, True))[0] for _, call, _ in CASES}
    assert len(heads) == len(CASES)


def test_the_estimator_passes_private_errors_down(data):
    X, y = data
    X = X.copy()
    X[ROW, 0] = NUMBER
    for private in (True, False):
        model = PrivateLogisticRegression(classes=("no", "yes"), private_errors=private, random_state=0)
        with pytest.raises(DataValidationError, match="L2 norm") as caught:
            model.fit(X, y)
        assert ("987654" in str(caught.value)) is not private
    model = PrivateLogisticRegression(classes=("no", "yes"), private_errors=True, random_state=0).fit(*data)
    X_new = data[0].copy()
    X_new[ROW, 1] = np.nan
    with pytest.raises(DataValidationError, match="NaN") as caught:
        model.predict(X_new)
    assert str(ROW) not in str(caught.value)


def test_a_solver_failure_quotes_no_data_under_private_errors(data, monkeypatch):
    def fail(*args, **kwargs):
        raise ConvergenceError(f"Newton solver stopped with gradient norm {NUMBER} > tol")

    monkeypatch.setattr(dpci.estimator_base, "release_spec", fail)  # where fit looks it up
    with pytest.raises(ConvergenceError, match="987654"):
        PrivateLogisticRegression(classes=("no", "yes")).fit(*data)
    with pytest.raises(ConvergenceError, match="did not reach the exact minimiser") as caught:
        PrivateLogisticRegression(classes=("no", "yes"), private_errors=True).fit(*data)
    assert "987654" not in str(caught.value)
