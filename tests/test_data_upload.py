"""CSV upload validation: every malformed file gives a clear DataValidationError."""

import io
import warnings

import numpy as np
import pytest

from dpci.data import Schema, UnitBallPreprocessor, guess_separator, inspect_uploaded_csv, read_uploaded_csv
from dpci.exceptions import DataValidationError, PrivacyLeakWarning


def _csv(rows, header="age,color,income,label"):
    return ("\n".join([header, *rows]) + "\n").encode("utf-8")


def _good_rows(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return [
        f"{rng.integers(18, 80)},{rng.choice(['red', 'blue', 'green'])},{rng.normal(5e4, 1e4):.0f},"
        f"{rng.choice(['yes', 'no'])}"
        for _ in range(n)
    ]


PUBLIC = {"bounds": {"age": (18, 100), "income": (0, 200_000)}, "categories": {"color": ["red", "green", "blue"]}}


def _refused(data, phrase, **kwargs):
    kwargs.setdefault("target", "label")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(DataValidationError) as err:
            read_uploaded_csv(data, **kwargs)
    assert phrase in str(err.value), str(err.value)
    assert err.value.__cause__ is None  # no raw pandas/numpy traceback chained
    return str(err.value)


def test_valid_file_with_public_bounds_is_private_and_preprocessable():
    rows = _good_rows()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no PrivacyLeakWarning when everything is public
        res = read_uploaded_csv(io.BytesIO(_csv(rows)), "label", **PUBLIC)
    assert res.is_private and res.n_dropped == 0 and res.n_rows_read == 300
    assert isinstance(res.schema, Schema)
    assert res.schema.column("age").lower == 18 and res.schema.column("color").categories == ("red", "green", "blue")
    assert (res.schema.positive_class, res.schema.negative_class) == ("yes", "no")
    assert any("positive_class not given" in n for n in res.notes)
    ds = res.to_dataset()
    assert ds.feature_names == ["age", "income", "color=red", "color=green", "color=blue", "const"]
    assert np.linalg.norm(ds.X, axis=1).max() <= 1 + 1e-12 and set(np.unique(ds.y)) == {-1.0, 1.0}
    # the same transformer applies to the inferred schema as to the built-in ones
    X = UnitBallPreprocessor(res.schema, d=2).fit_transform(res.frame)
    assert X.shape == (300, 3)


def test_data_derived_bounds_warn_visibly():
    with pytest.warns(PrivacyLeakWarning, match="not differentially private"):
        res = read_uploaded_csv(_csv(_good_rows()), "label")
    assert not res.is_private and set(res.data_derived) == {"age", "income", "color"}
    assert not res.schema.column("age").public and "observed" in res.schema.column("age").source
    assert any(n.startswith("Not private") for n in res.notes)


def test_missing_values_are_reported_and_dropped():
    rows = _good_rows()
    rows[3] = "33,,41000,yes"  # missing color
    rows[8] = "NA,red,39000,no"  # missing age
    rows[9] = "40,red,39000,?"  # missing target
    res = read_uploaded_csv(_csv(rows), "label", **PUBLIC)
    assert res.n_dropped == 3 and len(res.frame) == 297
    assert any("Dropped 3 of 300 rows with missing values" in n for n in res.notes)
    assert not res.frame.isna().any().any()


def test_nans_leaving_too_few_rows_are_refused():
    rows = _good_rows(150)
    rows = [r if i % 2 else "," + r.split(",", 1)[1] for i, r in enumerate(rows)]  # half without age
    msg = _refused(_csv(rows), "usable row(s)", **PUBLIC)
    assert "75 of 150 dropped for missing values; missing cells: 'age': 75" in msg


def test_non_binary_target():
    rows = [r.replace(",yes", ",maybe") if i % 3 == 0 else r for i, r in enumerate(_good_rows())]
    _refused(_csv(rows), "must be binary (exactly 2 distinct values) but has 3")
    rows = [r.rsplit(",", 1)[0] + ",yes" for r in _good_rows()]
    _refused(_csv(rows), "but has 1")


def test_text_in_numeric_column():
    rows = _good_rows()
    rows[41] = "forty,red,50000,yes"
    _refused(_csv(rows), "Column 'age' looks numeric but has 1 non-numeric value(s), e.g. 'forty' (data row 42)")
    _refused(_csv(rows), "Column 'age' was chosen as numeric", numeric=["age"])
    # treating it as categorical is allowed but too many levels are refused
    _refused(_csv(rows), "distinct values, more than the 50 allowed", categorical=["age"])


def test_empty_file():
    _refused(b"", "The file is empty")
    _refused(b"  \n\n", "The file is empty")
    _refused(b"age,label\n", "header but no data rows")


def test_single_column():
    _refused(b"label\n1\n0\n", "Only one column was found")
    msg = _refused(b"age;label\n1;0\n", "Only one column was found")
    assert "try sep=';'" in msg


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_the_separator_is_read_from_the_header(sep):
    rows = [r.replace(",", sep) for r in _good_rows()]
    data = _csv(rows, header=sep.join(["age", "color", "income", "label"]))
    assert guess_separator(data) == sep
    result = read_uploaded_csv(data, "label", sep=guess_separator(data), **PUBLIC)
    assert list(result.frame.columns[:3]) == ["age", "color", "income"] and len(result.frame) == 300
    assert guess_separator(b"label\n1\n") == ","  # nothing to go by: the comma
    assert guess_separator(b"a;b,c;d\n") == ";"


def test_row_and_byte_limits():
    data = _csv(_good_rows(300))
    _refused(data, "more than 250 data rows", max_rows=250)
    _refused(data, "larger than the limit of 1,000 bytes", max_bytes=1000)
    _refused(io.BytesIO(data), "larger than the limit", max_bytes=1000)


def test_too_few_rows():
    _refused(_csv(_good_rows(99)), "Only 99 usable row(s); at least 100 complete rows")


def test_malformed_csv_and_binary_files():
    _refused(_csv(_good_rows()[:150] + ["1,red,2,yes,extra"]), "could not be parsed as CSV")
    _refused(b'age,label\n"1,0\n', "could not be parsed as CSV")
    _refused(b"PK\x03\x04\x14\x00\x06\x00", "looks like a ZIP archive")
    _refused("age,label\n\xe9,1\n".encode("latin-1"), "not valid utf-8 text")
    _refused("age,label\n1,0\n".encode("utf-16"), "NUL bytes")
    _refused(b"age,age,label\n1,2,0\n", "Duplicate column names")
    _refused("age,label", "bytes", target="label")  # a str is refused, not read as a path
    _refused(12345, "Expected the uploaded file as bytes")


def test_target_feature_and_bounds_choices():
    data = _csv(_good_rows())
    _refused(data, "Target column 'salary' not found", target="salary")
    _refused(data, "Unknown column(s) in features: ['height']", features=["age", "height"])
    _refused(data, "cannot also be a feature", features=["age", "label"])
    _refused(data, "positive_class 'maybe' is not a value of the target", positive_class="maybe")
    _refused(data, "lower bound of 'age' (50) is above its upper bound (10): swap them", bounds={"age": (50, 10)})
    _refused(data, "pair (lower, upper)", bounds={"age": "wide"})
    _refused(data, "which is categorical", bounds={"color": (0, 1)})
    _refused(data, "not in the categories you gave", categories={"color": ["red"]})
    constant_age = ["7" + r[r.index(",") :] for r in _good_rows()]
    _refused(_csv(constant_age), "Column 'age' is constant", bounds={"income": (0, 1e6)})


def test_numeric_target_and_positive_class_matching():
    rows = [f"{i % 50},{'1.0' if i % 3 else '0'}" for i in range(200)]
    data = _csv(rows, header="x,y")
    with pytest.warns(PrivacyLeakWarning):
        res = read_uploaded_csv(data, "y", positive_class=0)
    assert (res.schema.positive_class, res.schema.negative_class) == ("0", "1")
    assert (res.to_dataset().y == 1).sum() == sum(1 for i in range(200) if i % 3 == 0)
    with pytest.warns(PrivacyLeakWarning):
        assert read_uploaded_csv(data, "y").schema.positive_class == "1"


def test_out_of_bound_values_are_noted():
    rows = _good_rows()
    rows[0] = "120,red,50000,yes"
    res = read_uploaded_csv(_csv(rows), "label", **PUBLIC)
    assert any("clipped to the bounds ('age': 1)" in n for n in res.notes)
    assert res.to_dataset(add_constant=False, normalize="project").X[0, 0] > 0


def test_inspect_lists_columns_kinds_and_target_candidates():
    rows = _good_rows()
    rows[2] = "33,,41000,yes"
    s = inspect_uploaded_csv(_csv(rows))
    assert s.columns == ["age", "color", "income", "label"] and s.n_rows == 300
    assert s.kinds == {"age": "numeric", "color": "categorical", "income": "numeric", "label": "categorical"}
    assert s.n_missing["color"] == 1 and s.binary_columns == ["label"]


def test_a_very_wide_header_is_refused_at_once():
    import time

    k = 100_000
    data = (
        ",".join(["label"] + [f"c{i}" for i in range(k)])
        + "\n"
        + "\n".join(",".join(["yes" if r % 2 else "no"] + ["1"] * k) for r in range(3))
        + "\n"
    ).encode()
    start = time.perf_counter()
    message = _refused(data, "100,001 columns, more than the 1,000")
    assert time.perf_counter() - start < 2.0 and len(message) < 300


def test_messages_quote_only_an_excerpt_of_a_huge_cell():
    rows = _good_rows(150)
    rows[7] = "x" * 1_000_000 + ",red,1,yes"
    message = _refused(_csv(rows), "non-numeric value", bounds=PUBLIC["bounds"], categories=PUBLIC["categories"])
    assert len(message) < 600 and "xxxx…'" in message


def test_a_line_break_in_a_quoted_header_cannot_hide_duplicate_names():
    data = _csv(_good_rows(150), header='"age\nx",color,income,label,"age\nx"')
    _refused(data, "Duplicate column names")


def test_the_server_accepts_no_larger_upload_than_the_app_states():
    tomllib = pytest.importorskip("tomllib")
    from pathlib import Path

    from dpci.data.csv_text import DEFAULT_MAX_BYTES

    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit/config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 2**20 == DEFAULT_MAX_BYTES
