"""The scikit-learn style API: attributes, labels, refusals with clear messages."""

import numpy as np
import pandas as pd
import pytest
from conftest import logistic_labels, unit_ball_rows
from sklearn.base import clone

from dpci import DataValidationError, PrivateHuberSVM, PrivateLogisticRegression, private_confidence_intervals
from dpci.losses import LogisticLoss


@pytest.fixture
def frame():
    rng = np.random.default_rng(8)
    X = unit_ball_rows(rng, 3000, 3) * 0.8
    X = np.column_stack([X, np.full(3000, 0.6)])
    y = logistic_labels(rng, X, np.array([2.0, -1.0, 0.0, 0.5]))
    df = pd.DataFrame(X, columns=["age", "hours", "education", "const"])
    return df, np.where(y > 0, ">50K", "<=50K")


@pytest.mark.parametrize("cls", [PrivateLogisticRegression, PrivateHuberSVM])
def test_fit_exposes_the_documented_attributes(cls, frame):
    X, y = frame
    model = cls(random_state=0)
    assert model.fit(X, y) is model
    assert model.coef_.shape == (4,)
    assert model.conf_int_.shape == (4, 2)
    assert np.all(model.conf_int_[:, 0] < model.conf_int_[:, 1])
    table = model.conf_int()
    assert list(table.index) == ["age", "hours", "education", "const"]
    assert list(table.columns) == ["estimate", "lower", "upper"]
    np.testing.assert_array_equal(table[["lower", "upper"]].to_numpy(), model.conf_int_)
    assert list(model.classes_) == ["<=50K", ">50K"]
    assert set(model.predict(X)) <= {"<=50K", ">50K"}
    assert model.privacy_spent_.epsilon == pytest.approx(1.0)
    assert "privacy spent" in str(model.summary(delta=1e-6))
    assert np.all(np.linalg.eigvalsh(model.hessian_) >= 2 * model.c_ * (1 - 1e-12))


def test_predict_proba_and_accuracy(frame):
    X, y = frame
    model = PrivateLogisticRegression(budget=5.0, random_state=1).fit(X, y)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(model.predict(X), model.classes_[(proba[:, 1] > 0.5).astype(int)])
    assert model.score(X, y) > 0.6
    assert not hasattr(PrivateHuberSVM(), "predict_proba")


def test_same_seed_same_release_and_matches_the_pure_function(frame):
    X, y = frame
    a = PrivateLogisticRegression(mechanism="output", random_state=3).fit(X, y)
    b = clone(a).fit(X, y)
    np.testing.assert_array_equal(a.conf_int_, b.conf_int_)
    signs = np.where(y == ">50K", 1.0, -1.0)
    rel = private_confidence_intervals(X.to_numpy(), signs, LogisticLoss(), "output", c=a.c_, random_state=3)
    np.testing.assert_array_equal(a.release_.conf_int, rel.conf_int)  # the theta_0(c) interval: the function's
    np.testing.assert_array_equal(a.conf_int(estimand="regularised")[["lower", "upper"]], rel.conf_int)
    c = PrivateLogisticRegression(mechanism="output", random_state=4).fit(X, y)
    assert not np.array_equal(a.coef_, c.coef_)


def test_conf_int_alpha_is_post_processing(frame):
    X, y = frame
    model = PrivateLogisticRegression(privacy="zcdp", budget=0.5, random_state=2).fit(X, y)
    narrow, wide = model.conf_int(alpha=0.5), model.conf_int(alpha=0.01)
    assert np.all(wide["upper"] - wide["lower"] > narrow["upper"] - narrow["lower"])
    np.testing.assert_array_equal(model.theta_release_.theta, narrow["estimate"])  # theta's corrected estimate
    regular = model.conf_int(alpha=0.5, estimand="regularised")
    np.testing.assert_array_equal(model.coef_, regular["estimate"])  # theta_0(c)'s is the private fit itself


def test_rows_outside_the_unit_ball_are_refused(frame):
    X, y = frame
    X = X.copy()
    X.iloc[17, 0] = 1.5
    with pytest.raises(DataValidationError, match="row 17 has L2 norm .* > 1"):
        PrivateLogisticRegression().fit(X, y)


def test_rounding_just_outside_the_ball_is_projected():
    rng = np.random.default_rng(0)
    X = unit_ball_rows(rng, 500, 2)
    X[0] = [1.0 + 1e-12, 0.0]
    y = rng.choice([0, 1], size=500)
    before = X.copy()
    model = PrivateLogisticRegression(random_state=0, classes=(0, 1)).fit(X, y)
    assert np.all(np.isfinite(model.coef_)) and model.conf_int_.shape == (2, 2)
    np.testing.assert_array_equal(X, before)  # the caller's array is not changed by the projection


def test_rows_are_projected_as_the_margin_rows_are_built_bit_for_bit():
    """A release divides the rows just outside the ball by their norm while it builds y_i x_i (no copy
    of X): the same bits as projecting X first, and the same release by every entry point."""
    import dpci
    from dpci.solver import margin_rows
    from dpci.spec import release_spec
    from dpci.validation import check_unit_ball, unit_ball_divisors

    rng = np.random.default_rng(1)
    X = unit_ball_rows(rng, 5_000, 3)
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # on the sphere: about a fifth end an ulp or so outside
    X[:7] *= 1.0 + 1e-12
    y = rng.choice([-1.0, 1.0], size=len(X))
    divisors = unit_ball_divisors(X)
    assert divisors is not None and (divisors > 1).sum() > 7
    fused, projected = margin_rows(X, y, divisors), margin_rows(check_unit_ball(X), y)
    np.testing.assert_array_equal(fused, projected)
    assert fused.flags.f_contiguous
    spec = dpci.ReleaseSpec("output", "pure", 1.0, n_samples=200, seed=3)
    releases = [
        dpci.private_confidence_intervals(X, y, dpci.LogisticLoss(), "output", n_samples=200, random_state=3),
        spec.release(X, y),
        release_spec(check_unit_ball(X), y, spec),
        PrivateLogisticRegression(mechanism="output", c=1e-3, n_samples=200, random_state=3, classes=(-1, 1))
        .fit(X, y)
        .release_,
    ]
    for release in releases[1:]:
        np.testing.assert_array_equal(release.conf_int, releases[0].conf_int)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda X, y: (X, np.where(np.arange(len(y)) % 3 == 0, "a", np.where(np.arange(len(y)) % 3 == 1, "b", "c"))),
            "exactly two distinct labels",
        ),
        (lambda X, y: (X, np.full(len(y), "a")), "exactly two distinct labels"),
        (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X), y), "NaN or infinite"),
        (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 5, np.inf, X), y), "NaN or infinite"),
        (lambda X, y: (X, np.where(np.arange(len(y)) == 3, np.nan, 1.0 * (y == ">50K"))), "NaN"),
        (lambda X, y: (X, y[:-1]), "rows but y has"),
        (lambda X, y: (X[:, 0], y), "2-D"),
        (lambda X, y: (np.full(X.shape, "x"), y), "only numbers"),
    ],
)
def test_bad_data_is_refused_clearly(frame, mutate, message):
    X, y = frame
    X, y = mutate(X.to_numpy(), y)
    with pytest.raises(DataValidationError, match=message):
        PrivateLogisticRegression().fit(X, y)


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(mechanism="input"), "mechanism must be one of"),
        (dict(privacy="approx"), "privacy must be one of"),
        (dict(budget=0), "budget must be a positive number"),
        (dict(c=-1.0), "c must be a positive number"),
        (dict(alpha=1.5), "alpha must lie strictly between 0 and 1"),
        (dict(n_samples=10), "n_samples must be an integer of at least 100"),
        (dict(split=(0.9, 0.1, 0.0)), "every share"),
        (dict(random_state="x"), "random_state"),
    ],
)
def test_bad_parameters_are_refused_clearly(frame, params, message):
    X, y = frame
    with pytest.raises(ValueError, match=message):
        PrivateLogisticRegression(**params).fit(X, y)
    with pytest.raises(ValueError, match="h must be a positive number"):
        PrivateHuberSVM(h=0).fit(X, y)


def test_too_small_c_names_the_smallest_valid_c(frame):
    X, y = frame
    # n = 3000, epsilon1 = 0.65: smallest c = 0.25 / (2 * 3000 * (e^0.65 - 1)) = 4.551e-05; the suggestion keeps
    # epsilon' >= epsilon1/2: 0.25 / (2 * 3000 * (e^0.325 - 1)) = 1.085e-04, rounded up to 0.00011
    with pytest.raises(ValueError, match=r"c > .*4\.551e-05.* at least 0\.00011"):
        PrivateLogisticRegression(c=1e-5).fit(X, y)
    PrivateLogisticRegression(c=1e-5, mechanism="output").fit(X, y)  # output perturbation has no such limit


def test_unfitted_model_says_so():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="fit"):
        PrivateLogisticRegression().conf_int()


def test_the_non_private_reference_takes_the_loss_by_name_as_the_private_functions_do():
    from dpci import nonprivate_confidence_intervals
    from dpci.data import make_synthetic_logistic

    X, y = make_synthetic_logistic(1_000, [1.0, -0.5], random_state=0)
    by_name = nonprivate_confidence_intervals(X, y, "logistic")
    np.testing.assert_array_equal(by_name.conf_int, nonprivate_confidence_intervals(X, y, LogisticLoss()).conf_int)
    with pytest.raises(ValueError, match="huberr"):
        nonprivate_confidence_intervals(X, y, "huberr")


@pytest.mark.parametrize("budget", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("n", [500, 2_000, 20_000])
def test_the_default_c_serves_the_default_estimand(n, budget):
    """c left at None: for theta (logistic regression) the recommended c, never above the paper's 0.001 where
    that runs, chosen from public facts without a ReferenceWarning (nobody asked for a prediction), and above
    it only with an UnderCoverageWarning; asked for by name, the recommendation warns as recommend_c does. The
    Huberized SVM, for theta_0(c), keeps 0.001."""
    import warnings

    from dpci.data import make_synthetic_logistic
    from dpci.exceptions import ReferenceWarning, RegularisationTooSmall, UnderCoverageWarning

    X, y = make_synthetic_logistic(n, [1.0, -0.5, 0.5], random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = PrivateLogisticRegression(budget=budget, classes=(-1, 1), random_state=0).fit(X, y)
    assert not [w for w in caught if issubclass(w.category, ReferenceWarning)]
    assert model.c is None and model.c_ == model.release_.c
    recommended = model.recommendation_.c
    try:
        PrivateLogisticRegression(budget=budget, c=1e-3, classes=(-1, 1)).fit(X, y)
        paper_runs = True
    except RegularisationTooSmall:
        paper_runs = False
    assert model.c_ == (min(recommended, 1e-3) if paper_runs else recommended)
    above = [
        w for w in caught if issubclass(w.category, UnderCoverageWarning) and "above the paper's" in str(w.message)
    ]
    assert bool(above) == (model.c_ > 1e-3), "a default c above the paper's says its intervals may under-cover"
    with pytest.warns(ReferenceWarning):
        asked = PrivateLogisticRegression(budget=budget, c="recommended", classes=(-1, 1), random_state=0).fit(X, y)
    assert asked.c_ == recommended
    svm = PrivateHuberSVM(budget=budget, classes=(-1, 1))
    assert svm.c is None and svm._default_c() == 1e-3 == svm._spec(n, 3)[0].c
