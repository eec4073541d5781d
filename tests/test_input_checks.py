"""Bad input to the library gets a clear error saying what to change (issue: reliability), never a
bare numpy/linear-algebra exception, an out-of-memory crash or a silent wrong answer."""

import math

import numpy as np
import pandas as pd
import pytest
from conftest import unit_ball_rows
from scipy import sparse

import dpci
from dpci.experiments.bootstrap import coverage, variability_intervals
from dpci.mechanisms import smallest_valid_c
from dpci.spec import ReleaseSpec


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = np.column_stack([unit_ball_rows(rng, 400, 2), np.ones(400)]) / np.sqrt(2)
    y = np.where(rng.uniform(size=400) < 0.5, 1, -1)
    return X, y


def _fit(X, y, **kw):
    return dpci.PrivateLogisticRegression(random_state=0, **kw).fit(X, y)


def _with_na(X):
    frame = pd.DataFrame(X, columns=list("abc")).astype("Float64")
    frame.iloc[0, 0] = pd.NA
    return frame


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda X: sparse.csr_matrix(X), "sparse matrix.*toarray"),
        (lambda X: _with_na(X), "missing values"),
        (lambda X: X.astype(complex), "complex numbers"),
        (lambda X: pd.DataFrame(X, columns=["a", "a", "c"]), r"duplicate column names \['a'\]"),
    ],
)
def test_unusable_features_are_refused_with_what_to_do(data, make, message):
    X, y = data
    with pytest.raises(dpci.DataValidationError, match=message):
        _fit(make(X), y)


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(random_state=-1), "non-negative int"),
        (dict(n_samples=10**9), "more than 10,000,000"),
        (dict(mechanism="output", budget=1e-300), "below 1e-09"),
    ],
)
def test_unusable_parameters_are_refused(data, kw, message):
    X, y = data
    with pytest.raises(ValueError, match=message):
        dpci.PrivateLogisticRegression(**{"random_state": 0, **kw}).fit(X, y)
    if "n_samples" in kw:  # the function takes the same bound as the estimator
        with pytest.raises(ValueError, match=message):
            dpci.private_confidence_intervals(X, y, dpci.LogisticLoss(), n_samples=10**9, c=0.01)


def test_a_huge_objective_budget_does_not_overflow(data):
    """e^epsilon overflows past 709; the bound on c is then e^-epsilon-small, not an OverflowError."""
    assert smallest_valid_c(2000.0, 400, 0.25) == 0.0
    assert smallest_valid_c(701.0, 10, 0.25) == pytest.approx(0.25 / 20 * math.exp(-701.0))
    assert smallest_valid_c(1.0, 10, 0.25) == 0.25 / (20 * math.expm1(1.0))
    model = _fit(*data, budget=2000.0, c=0.01)
    assert np.isfinite(model.conf_int_).all()


def test_a_split_given_as_a_generator_is_read_once(data):
    model = _fit(*data, split=(s for s in (0.5, 0.25, 0.25)))
    assert model.release_.allocation.shares == (0.5, 0.25, 0.25)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda X, y: (X, (y > 0).astype(int)), "exactly the values -1 and \\+1"),
        (lambda X, y: (5 * X, y), "L2 norm .* > 1"),
        (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 0, np.nan, X), y), "NaN or infinite"),
    ],
)
def test_the_bootstrap_checks_its_input_like_a_release(data, change, message):
    X, y = change(*data)
    with pytest.raises(dpci.DataValidationError, match=message):
        variability_intervals(X, y, ReleaseSpec(loss=dpci.LogisticLoss(), c=0.01), n_replicates=32)


def test_the_bootstrap_refuses_empty_runs_and_too_few_monte_carlo_draws(data):
    X, y = data
    with pytest.raises(ValueError, match="n_replicates must be an integer of at least 1"):
        variability_intervals(X, y, ReleaseSpec(loss=dpci.LogisticLoss()), n_replicates=0)
    with pytest.raises(ValueError, match="n_samples must be an integer of at least 100"):
        coverage(X, y, ReleaseSpec(loss=dpci.LogisticLoss(), n_samples=1, c=0.01), n_replicates=8)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", [(0, 0), (399, 2), (123, 1)])
def test_a_non_finite_entry_is_found_where_it_is_through_the_row_norms(data, value, where):
    """The finite check reads the rows' squared norms (a NaN or infinite entry makes its row's NaN or
    infinite); the message still names the first bad entry, and comes before the label checks."""
    X, y = data[0].copy(), data[1].astype(float)
    X[where] = value
    message = rf"NaN or infinite values \(first at row {where[0]}, column {where[1]}\)"
    with pytest.raises(dpci.DataValidationError, match=message):
        dpci.private_confidence_intervals(X, y, dpci.LogisticLoss(), c=0.01, random_state=0)
    y[0] = 3.0  # three labels: refused too, but after the features
    with pytest.raises(dpci.DataValidationError, match=message):
        _fit(X, y)
    with pytest.raises(dpci.DataValidationError, match=message):
        dpci.private_confidence_intervals(X, y, dpci.LogisticLoss(), c=0.01, random_state=0)


def test_finite_rows_whose_squared_norm_overflows_are_outside_the_ball_not_missing(data):
    X, y = data[0].copy(), data[1]
    X[7] = 1e200  # each entry finite; its squared norm is infinite
    with pytest.raises(dpci.DataValidationError, match=r"row 7 has L2 norm inf > 1"):
        dpci.private_confidence_intervals(X, y, dpci.LogisticLoss(), c=0.01, random_state=0)
    with pytest.raises(dpci.DataValidationError, match=r"row 7 has L2 norm inf > 1"):
        _fit(X, y)
