"""UnitBallPreprocessor and Schema: public bounds, clipping, selection, normalisation."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from dpci.data import (
    ADULT_SCHEMA,
    Column,
    Schema,
    UnitBallPreprocessor,
    count_out_of_bounds,
    encode_labels,
    load_adult_frame,
    scale_numeric,
)
from dpci.exceptions import DataValidationError


@pytest.fixture(scope="module")
def frame():
    return load_adult_frame().iloc[:2000].reset_index(drop=True)


def _fitted_state(pre):
    return {
        "lower": pre.lower_,
        "upper": pre.upper_,
        "categories": pre.categories_,
        "names": list(pre.feature_names_out_),
        "max_norm": pre.max_norm_,
        "selection": pre.selection_,
    }


@pytest.mark.parametrize("column, value", [("age", 85), ("fnlwgt", 1_450_000), ("capital-gain", 50_000)])
def test_changing_one_row_changes_no_scaling_factor(frame, column, value):
    frame = frame[frame[column] < value].reset_index(drop=True)
    changed = frame.copy()
    i = int(frame[column].idxmin())
    changed.loc[i, column] = value  # a new observed maximum, still within the public bound
    assert changed[column].max() == value > frame[column].max()
    a = UnitBallPreprocessor(ADULT_SCHEMA).fit(frame)
    b = UnitBallPreprocessor(ADULT_SCHEMA).fit(changed)
    assert _fitted_state(a) == _fitted_state(b)
    Xa, Xb = a.transform(frame), b.transform(changed)
    others = np.arange(len(frame)) != i
    assert np.array_equal(Xa[others], Xb[others])  # bit-for-bit: no other row moves
    assert not np.array_equal(Xa[i], Xb[i])


def test_scale_numeric_clips_to_public_bounds():
    np.testing.assert_allclose(scale_numeric([0, 17, 53.5, 90, 200], 17, 90), [-1, -1, 0, 1, 1])
    lo, hi = 0.0, 2.0**32 - 1
    mid = np.expm1(0.5 * np.log1p(hi))
    np.testing.assert_allclose(scale_numeric([-5, 0, mid, 1e12], lo, hi, log1p=True), [-1, -1, 0, 1])
    with pytest.raises(DataValidationError, match="NaN or infinite"):
        scale_numeric([1.0, np.inf], 0, 1)


def test_out_of_bounds_values_are_clipped_and_counted(frame):
    f = frame.copy()
    f.loc[0, "age"] = 120  # outside the public bound 90
    f.loc[1, "hours-per-week"] = 0
    assert count_out_of_bounds(f, ADULT_SCHEMA) == {"age": 1, "hours-per-week": 1}
    one = UnitBallPreprocessor(ADULT_SCHEMA, features=["age"], add_constant=False, normalize="project")
    X = one.fit_transform(f)
    assert X[0, 0] == 1.0  # 120 clipped to the upper bound 90, scaled to +1
    assert X[0, 0] == one.transform(f.assign(age=90))[0, 0]
    hours = UnitBallPreprocessor(
        ADULT_SCHEMA, features=["hours-per-week"], add_constant=False, normalize="project"
    ).fit_transform(f)
    assert hours[1, 0] == -1.0 and np.all(np.abs(hours) <= 1)


@pytest.mark.parametrize("normalize", ["unit", "project", "global"])
def test_normalisation_modes_keep_rows_in_ball(frame, normalize):
    pre = UnitBallPreprocessor(ADULT_SCHEMA, normalize=normalize).fit(frame)
    X = pre.transform(frame)
    norms = np.linalg.norm(X, axis=1)
    assert norms.max() <= 1 + 1e-12
    if normalize == "unit":
        np.testing.assert_allclose(norms, 1, atol=1e-12)
    if normalize == "global":
        # 6 numeric + 8 one-hot blocks + constant: public maximum norm sqrt(15)
        assert pre.max_norm_ == pytest.approx(np.sqrt(15))
        np.testing.assert_allclose(X[:, -1], 1 / np.sqrt(15))
    if normalize == "project":
        assert np.all(norms > 1 - 1e-12)  # these rows all had norm > 1 before


def test_feature_selection_rules(frame):
    pre = UnitBallPreprocessor(ADULT_SCHEMA, d=7).fit(frame)
    assert list(pre.get_feature_names_out()) == [
        "age",
        "fnlwgt",
        "education-num",
        "capital-gain",
        "capital-loss",
        "hours-per-week",
        "workclass=Private",
        "const",
    ]
    assert pre.transform(frame).shape == (len(frame), 8)
    with pytest.raises(DataValidationError, match="between 1 and 105"):
        UnitBallPreprocessor(ADULT_SCHEMA, d=106).fit(frame)
    with pytest.raises(DataValidationError, match="either d or features"):
        UnitBallPreprocessor(ADULT_SCHEMA, d=3, features=["age"]).fit(frame)
    with pytest.raises(DataValidationError, match="Unknown feature 'salary'"):
        UnitBallPreprocessor(ADULT_SCHEMA, features=["salary"]).fit(frame)
    # only the needed raw columns are required
    small = frame[["age", "sex"]]
    X = UnitBallPreprocessor(ADULT_SCHEMA, features=["sex=Male", "age"]).fit_transform(small)
    assert X.shape == (len(frame), 3)


def test_one_hot_uses_public_category_list(frame):
    only_private = frame[frame["workclass"] == "Private"]
    pre = UnitBallPreprocessor(ADULT_SCHEMA, features=["workclass"], add_constant=False).fit(only_private)
    X = pre.transform(only_private)
    assert X.shape[1] == 8  # all 8 documented levels, though one is observed
    assert np.all(X[:, 0] == 1) and np.all(X[:, 1:] == 0)
    bad = frame.copy()
    bad.loc[3, "workclass"] = "Astronaut"
    with pytest.raises(DataValidationError, match="not in the schema's public category list"):
        UnitBallPreprocessor(ADULT_SCHEMA).fit(bad).transform(bad)
    X = (
        UnitBallPreprocessor(ADULT_SCHEMA, features=["workclass"], add_constant=False, handle_unknown="ignore")
        .fit(bad)
        .transform(bad)
    )
    assert np.all(X[3] == 0) and np.all(X.sum(axis=1)[np.arange(len(bad)) != 3] == 1)


def test_missing_values_and_wrong_input_are_refused(frame):
    f = frame.copy()
    f["age"] = f["age"].astype(float)
    f.loc[5, "age"] = np.nan
    with pytest.raises(DataValidationError, match="Missing values in 'age': 1"):
        UnitBallPreprocessor(ADULT_SCHEMA).fit(f)
    with pytest.raises(DataValidationError, match="needs a pandas DataFrame"):
        UnitBallPreprocessor(ADULT_SCHEMA).fit(np.zeros((3, 3)))
    with pytest.raises(DataValidationError, match="lack column"):
        UnitBallPreprocessor(ADULT_SCHEMA).fit(frame.drop(columns=["race"]))


def test_sklearn_conventions(frame):
    pre = UnitBallPreprocessor(ADULT_SCHEMA, d=12, normalize="global")
    twin = clone(pre)
    assert twin.get_params() == pre.get_params()
    np.testing.assert_array_equal(pre.fit_transform(frame), twin.fit(frame).transform(frame))
    assert pre.get_feature_names_out().dtype == object


def test_encode_labels():
    y = encode_labels(pd.Series([">50K", "<=50K", ">50K"]), ">50K", "<=50K")
    np.testing.assert_array_equal(y, [1.0, -1.0, 1.0])
    with pytest.raises(DataValidationError, match="found also"):
        encode_labels(["a", "b", "c"], "a", "b")
    with pytest.raises(DataValidationError, match="missing"):
        encode_labels(["a", None], "a", "b")


def test_schema_validation():
    with pytest.raises(DataValidationError, match="needs public bounds"):
        Column("x", "numeric")
    with pytest.raises(DataValidationError, match="The bounds of 'x' are both 1: give a range"):
        Column("x", "numeric", lower=1, upper=1)
    with pytest.raises(
        DataValidationError, match=r"The lower bound of 'x' \(18\) is above its upper bound \(12\): swap"
    ):
        Column("x", "numeric", lower=18, upper=12)
    with pytest.raises(DataValidationError, match="public list of categories"):
        Column("c", "categorical")
    x = Column("x", "numeric", lower=0, upper=1)
    with pytest.raises(DataValidationError, match="duplicate columns"):
        Schema("s", (x, x), label="y", positive_class="1", negative_class="0")
    with pytest.raises(DataValidationError, match="cannot also be a feature"):
        Schema("s", (x,), label="x", positive_class="1", negative_class="0")
    s = Schema(
        "s", [x, Column("c", "categorical", categories=["a", "b"])], label="y", positive_class=1, negative_class=0
    )
    assert s.feature_names() == ["x", "c=a", "c=b"] and s.positive_class == "1"
    assert (
        s.is_public
        and not Schema(
            "t",
            (Column("x", "numeric", lower=0, upper=1, public=False),),
            label="y",
            positive_class="1",
            negative_class="0",
        ).is_public
    )
