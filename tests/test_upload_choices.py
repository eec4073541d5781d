"""The upload panel leaves the analyst's choices to the analyst: the target starts unchosen and nothing
is shown or released before it is chosen; a categorical feature is private once its public levels are
declared (typed, or from a JSON schema file), and an undeclared one is flagged by name."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from dpci.data import read_public_levels, read_uploaded_csv
from dpci.exceptions import DataValidationError

ROOT = Path(__file__).resolve().parents[1]
WORKCLASS = ["Private", "Self-emp", "Government"]
RACE = ["White", "Black", "Other"]


def adult_like(n: int = 600, seed: int = 0) -> bytes:
    """Adult's layout in small: sex (two values) comes before income, the outcome."""
    rng = np.random.default_rng(seed)
    rows = [
        f"{rng.integers(17, 91)},{rng.choice(WORKCLASS)},{rng.choice(RACE)},{rng.choice(['Female', 'Male'])},"
        f"{rng.integers(1, 100)},{rng.choice(['<=50K', '>50K'])}"
        for _ in range(n)
    ]
    return "\n".join(["age,workclass,race,sex,hours-per-week,income", *rows]).encode()


def _explorer(data: bytes, **state) -> AppTest:
    from ui.upload import upload_digest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["upload_kept"] = ("adult-like.csv", data, upload_digest(data))
    for name, value in state.items():
        at.session_state[name] = value
    at.query_params.update({"dataset": "upload"})
    at.run()
    return at.run()


def _text(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


def _key(data: bytes) -> str:
    from dpci.ledger import Ledger
    from ui.privacy import canonical_upload

    return Ledger.from_config().key_of(canonical_upload(data))


def test_the_target_starts_unchosen_and_nothing_is_released_before_it_is_chosen():
    from dpci.ledger import Ledger

    data = adult_like(seed=1)
    at = _explorer(data)
    assert not at.exception, [e.value for e in at.exception]
    target = at.selectbox(key="upload_target")
    assert target.value is None  # not sex, the first two-valued column
    assert target.options[:2] == ["sex", "income"]  # two-valued columns first
    assert "Choose the target column" in _text(at.info) and "income" in _text(at.caption)  # suggested in words
    assert "release_on_data" not in [b.key for b in at.button]  # no Release, no preview
    assert not at.dataframe and not at.metric
    assert "upload_result" not in at.session_state
    assert Ledger.from_config().status(_key(data)).releases == 0
    target.set_value("income").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["upload_result"].schema.label == "income"
    assert "income" not in at.multiselect(key="upload_features").options
    at.button(key="release_on_data").click().run()
    assert not at.exception and Ledger.from_config().status(_key(data)).releases == 1


def _not_private(at) -> str:
    return _text(w for w in at.warning if "Not private" in w.value)


@pytest.mark.parametrize("declared", ["typed", "schema file", "none"])
def test_declared_public_levels_make_a_categorical_feature_private(declared):
    data = adult_like(seed=2)
    at = _explorer(data, kept_upload_target="income", kept_labels_public=True)
    assert not at.exception, [e.value for e in at.exception]
    assert "categories of workclass" in _not_private(at) and "categories of race" in _not_private(at)
    if declared == "typed":
        at.text_input(key="upload_levels_workclass").input(", ".join(WORKCLASS)).run()
    elif declared == "schema file":
        at.session_state["kept_levels"] = read_public_levels(json.dumps({"workclass": WORKCLASS}).encode())
        at.session_state["upload_levels_workclass"] = ", ".join(WORKCLASS)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    flagged = _not_private(at)
    assert ("categories of workclass" in flagged) == (declared == "none")
    assert "categories of race" in flagged  # undeclared: still flagged, by name
    result = at.session_state["upload_result"]
    assert ("workclass" in result.data_derived) == (declared == "none")
    if declared != "none":
        assert result.schema.column("workclass").categories == tuple(WORKCLASS)  # the declared order


def test_each_problem_of_an_upload_is_on_its_own_line():
    at = _explorer(adult_like(seed=3), kept_upload_target="income")
    warning = next(w.value for w in at.warning if "Not private" in w.value)
    items = [line for line in warning.splitlines() if line.startswith("- ")]
    assert len(items) == 5, warning  # the bounds, workclass, race, sex, the label values
    assert sum("categories of" in item for item in items) == 3


FRAME_ROWS = 200


def _csv(workclass_values) -> bytes:
    rng = np.random.default_rng(4)
    rows = [f"{rng.integers(17, 91)},{w},{rng.choice(['0', '1'])}" for w in workclass_values]
    return "\n".join(["age,workclass,y", *rows]).encode()


def test_a_level_outside_the_declared_list_gets_no_indicator():
    values = [WORKCLASS[i % 3] for i in range(FRAME_ROWS - 3)] + ["Never-worked"] * 3
    result = read_uploaded_csv(
        _csv(values), "y", categories={"workclass": WORKCLASS}, bounds={"age": (0, 120)}, unknown_levels="ignore"
    )
    assert result.data_derived == [] and result.is_private
    assert any("3 row(s) hold a value outside its public levels" in note for note in result.notes)
    ds = result.to_dataset(normalize="project")
    columns = [i for i, name in enumerate(ds.feature_names) if name.startswith("workclass=")]
    indicators = ds.X[:, columns]
    assert indicators[-3:].sum() == 0 and (indicators[:-3] > 0).sum(axis=1).tolist() == [1] * (FRAME_ROWS - 3)
    with pytest.raises(DataValidationError, match="not in the categories you gave"):
        read_uploaded_csv(_csv(values), "y", categories={"workclass": WORKCLASS}, bounds={"age": (0, 120)})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"workclass: Private", "not JSON"),
        (b'["Private"]', "must hold an object"),
        (b'{"workclass": "Private"}', "non-empty list of levels"),
        (b'{"workclass": []}', "non-empty list of levels"),
        (b'{"workclass": [{"a": 1}]}', "non-empty list of levels"),
    ],
)
def test_a_bad_schema_file_is_refused_with_what_to_write(text, message):
    with pytest.raises(DataValidationError, match=message):
        read_public_levels(text)


def test_a_schema_file_in_the_command_lines_form_is_read_too():
    facts = {"bounds": {"age": [0, 120]}, "categories": {"workclass": WORKCLASS}}
    assert read_public_levels(json.dumps(facts).encode()) == {"workclass": WORKCLASS}


def test_the_same_table_saved_otherwise_meets_the_same_budget_in_the_app():
    from dpci.ledger import Ledger

    data = adult_like(seed=5)
    lines = data.decode().splitlines()
    resaved = "\n".join([lines[0].replace(",", ";"), *reversed([r.replace(",", "; ") for r in lines[1:]])]).encode()
    book = Ledger.from_config()
    for upload in (data, resaved):
        at = _explorer(upload, kept_upload_target="income")
        at.button(key="release_on_data").click().run()
        assert not at.exception, [e.value for e in at.exception]
    assert _key(resaved) == _key(data)
    assert book.status(_key(data)).releases == 2 and book.status(_key(data)).spent == pytest.approx(2.0)


def test_a_file_forgotten_takes_its_target_and_levels_with_it():
    from ui.upload import upload_digest

    data = adult_like(seed=6)
    at = _explorer(data, kept_upload_target="income")
    at.text_input(key="upload_levels_workclass").input(", ".join(WORKCLASS)).run()
    assert "workclass" not in at.session_state["upload_result"].data_derived
    next(b for b in at.button if b.label == "Forget this file").click().run()
    at.session_state["upload_kept"] = ("another.csv", data, upload_digest(data))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="upload_target").value is None and "upload_result" not in at.session_state
    at.selectbox(key="upload_target").set_value("income").run()
    assert at.text_input(key="upload_levels_workclass").value == ""
    assert "workclass" in at.session_state["upload_result"].data_derived  # undeclared for the new file
