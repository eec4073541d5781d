"""UCI Adult: shipped sample, public schema, Section 7.1 preprocessing."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpci.data import ADULT_SCHEMA, CONSTANT_NAME, load_adult, load_adult_frame, scale_numeric
from dpci.data.adult import ADULT_SAMPLE_PATH, write_adult_sample
from dpci.data.paths import shared_data_dir

RAW_DIR = shared_data_dir()


@pytest.fixture(scope="module")
def adult():
    return load_adult()


def test_adult_has_paper_row_count_and_labels(adult):
    # Section 7.1 / Table 1: 30,162 records after dropping missing values
    assert adult.n == 30_162 == len(adult.frame)
    assert set(np.unique(adult.y)) == {-1.0, 1.0}
    # 7,508 of the 30,162 complete training rows earn >50K (24.89%)
    assert int((adult.y == 1).sum()) == 7_508
    assert np.array_equal(adult.y == 1, (adult.frame["income"] == ">50K").to_numpy())


def test_adult_rows_in_unit_ball_with_constant_last(adult):
    norms = np.linalg.norm(adult.X, axis=1)
    assert norms.max() <= 1 + 1e-12
    # the paper divides each row by its norm: all norms are 1
    np.testing.assert_allclose(norms, 1.0, atol=1e-12)
    assert adult.feature_names[-1] == CONSTANT_NAME and adult.has_constant
    const = adult.X[:, -1]
    # ERRATA: the constant is added before normalising, so it equals 1/||x_i|| (< 1 here)
    assert np.all(const > 0) and np.all(const < 1)
    assert adult.d == 105 and adult.X.shape == (30_162, 106)


def test_feature_names_line_up_with_columns(adult):
    names = adult.feature_names
    assert len(names) == adult.X.shape[1] == len(set(names))
    assert names == ADULT_SCHEMA.feature_names() + [CONSTANT_NAME]
    assert names[:6] == ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
    fx = adult.frame_X
    assert list(fx.columns) == names and np.array_equal(fx.to_numpy(), adult.X)
    # row 0: 39, State-gov, ..., Male, capital-gain 2174 -- check columns by name
    row, raw = adult.X[0], adult.frame.iloc[0]
    scale = row[-1]  # 1/||x_0|| before normalisation
    col = {n: j for j, n in enumerate(names)}
    assert raw["age"] == 39 and raw["workclass"] == "State-gov"
    assert row[col["age"]] == pytest.approx(scale * scale_numeric([39], 17, 90)[0])
    assert row[col["capital-gain"]] == pytest.approx(scale * scale_numeric([2174], 0, 99_999)[0])
    assert row[col["workclass=State-gov"]] == pytest.approx(scale)
    assert row[col["sex=Male"]] == pytest.approx(scale) and row[col["sex=Female"]] == 0
    block = [j for n, j in col.items() if n.startswith("workclass=")]
    assert np.count_nonzero(row[block]) == 1


def test_first_d_features_and_named_subset():
    ds = load_adult(d=10)
    assert ds.X.shape == (30_162, 11) and ds.d == 10
    assert ds.feature_names[6:] == [
        "workclass=Private",
        "workclass=Self-emp-not-inc",
        "workclass=Self-emp-inc",
        "workclass=Federal-gov",
        CONSTANT_NAME,
    ]
    sub = load_adult(features=["sex", "age", "race=Black"], add_constant=False)
    assert sub.feature_names == ["sex=Female", "sex=Male", "age", "race=Black"]
    np.testing.assert_allclose(np.linalg.norm(sub.X, axis=1), 1.0, atol=1e-12)


def test_schema_bounds_are_documented_not_observed():
    frame = load_adult_frame()
    for col in ADULT_SCHEMA.numeric_columns:
        assert col.public and col.source
        # data inside the public range (nothing is clipped on the shipped file)
        assert col.lower <= frame[col.name].min() and frame[col.name].max() <= col.upper
    # the bounds are not simply the observed extremes of every column
    observed = {c.name: (frame[c.name].min(), frame[c.name].max()) for c in ADULT_SCHEMA.numeric_columns}
    assert any(ADULT_SCHEMA.bounds()[k] != v for k, v in observed.items())


@pytest.mark.skipif(not (RAW_DIR / "adult.names").exists(), reason="adult.names not in the shared data dir")
def test_schema_categories_match_adult_names():
    text = (RAW_DIR / "adult.names").read_text()
    documented = {}
    for line in text.splitlines():
        m = re.match(r"^([a-z-]+): (.*)\.$", line)
        if m and m.group(2) != "continuous":
            documented[m.group(1)] = tuple(s.strip() for s in m.group(2).split(","))
    ours = {c.name: c.categories for c in ADULT_SCHEMA.categorical_columns}
    assert ours == documented
    numeric_doc = [m.group(1) for m in re.finditer(r"^([a-z-]+): continuous\.$", text, re.MULTILINE)]
    assert [c.name for c in ADULT_SCHEMA.numeric_columns] == numeric_doc


@pytest.mark.skipif(not (RAW_DIR / "adult.data.gz").exists(), reason="raw adult.data.gz not in the shared data dir")
def test_shipped_sample_is_reproducible_from_raw(tmp_path: Path):
    out = write_adult_sample(RAW_DIR / "adult.data.gz", tmp_path / "adult.csv.gz")
    assert out.read_bytes() == ADULT_SAMPLE_PATH.read_bytes()
    assert ADULT_SAMPLE_PATH.stat().st_size < 1_000_000  # "keep it small"
    raw = pd.read_csv(RAW_DIR / "adult.data.gz", header=None)
    assert len(raw) == 32_561  # 2,399 rows with '?' were dropped
