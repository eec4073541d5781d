"""An uploaded table's identity (the ledger's key for its budget) follows the people, not how the file
was saved: reordering, reformatting or re-separating the same table keeps its digest, and the ledger
meets the same rows with an ignored column added, dropped or renamed at the same budget (their columns
nest); one changed cell, a dropped or repeated row names other people."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from dpci.data import upload_identity, upload_table
from dpci.ledger import Ledger
from dpci.ledger.config import canonical_csv
from dpci.ledger.tables import SameRowsTwice
from tests.test_ledger import database, postgres  # noqa: F401 (fixtures: an SQLite file, a PostgreSQL database)


def _table(n: int = 500) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "age": rng.integers(17, 91, n),
            "hours": rng.integers(1, 100, n).astype(float),
            "sex": rng.choice(["Female", "Male"], n),
            "income": rng.choice(["<=50K", ">50K"], n),
        }
    )


def _csv(frame: pd.DataFrame, sep: str = ",", float_format: str | None = None) -> bytes:
    return frame.to_csv(index=False, sep=sep, float_format=float_format).encode()


ORIGINAL = _csv(_table())


def _reversed():
    return _csv(_table().iloc[::-1])


def _shuffled():
    return _csv(_table().sample(frac=1.0, random_state=3))


def _columns_reordered():
    return _csv(_table()[["income", "sex", "hours", "age"]])


def _two_decimals():
    frame = _table()
    frame["age"] = frame["age"].astype(float)
    return _csv(frame, float_format="%.2f")  # 42 written 42.00


def _semicolons():
    return _csv(_table(), sep=";")


def _space_after_commas():
    return ORIGINAL.replace(b",", b", ")


def _windows_lines_and_bom():
    return b"\xef\xbb\xbf" + ORIGINAL.replace(b"\n", b"\r\n")


SAME_TABLE = {
    "rows reversed": _reversed,
    "rows shuffled": _shuffled,
    "columns reordered": _columns_reordered,
    "42 written 42.00": _two_decimals,
    "semicolon separator": _semicolons,
    "a space after each comma": _space_after_commas,
    "Windows line endings and a byte-order mark": _windows_lines_and_bom,
}


@pytest.mark.parametrize("name", list(SAME_TABLE))
def test_the_same_table_however_saved_has_one_identity(name):
    variant = SAME_TABLE[name]()
    assert variant != ORIGINAL  # the bytes differ...
    assert upload_identity(variant) == upload_identity(ORIGINAL)  # ...the people's data does not


def _one_cell_changed():
    frame = _table()
    frame.loc[123, "age"] = frame.loc[123, "age"] + 1
    return _csv(frame)


def _one_label_changed():
    frame = _table()
    frame.loc[0, "income"] = ">50K" if frame.loc[0, "income"] == "<=50K" else "<=50K"
    return _csv(frame)


def _one_row_dropped():
    return _csv(_table().drop(index=10))


def _one_row_twice():
    frame = _table()
    return _csv(pd.concat([frame, frame.iloc[[5]]]))


def _column_renamed():
    return _csv(_table().rename(columns={"hours": "hours-per-week"}))


def _extra_column():
    frame = _table()
    frame["id"] = range(len(frame))
    return _csv(frame)


def _cells_swapped_between_rows():
    frame = _table()  # the same values per column, paired differently: other people
    frame.loc[[0, 1], "age"] = frame.loc[[1, 0], "age"].to_numpy()
    assert frame.loc[0, "age"] != frame.loc[1, "age"]
    return _csv(frame)


ANOTHER_TABLE = {
    "one numeric cell changed": _one_cell_changed,
    "one label changed": _one_label_changed,
    "one row dropped": _one_row_dropped,
    "one row twice": _one_row_twice,
    "a column renamed": _column_renamed,
    "an extra column": _extra_column,
    "two cells swapped between rows": _cells_swapped_between_rows,
}


@pytest.mark.parametrize("name", list(ANOTHER_TABLE))
def test_another_table_has_another_identity(name):
    assert upload_identity(ANOTHER_TABLE[name]()) != upload_identity(ORIGINAL)


def test_missing_cells_are_one_value_however_spelled():
    frame = _table(200).astype(str)
    blank = frame.copy()
    blank.loc[3, "hours"] = ""
    marked = frame.copy()
    marked.loc[3, "hours"] = "NA"
    assert upload_identity(_csv(blank)) == upload_identity(_csv(marked))
    assert upload_identity(_csv(blank)) != upload_identity(_csv(frame))


@pytest.mark.parametrize("name", list(SAME_TABLE))
def test_the_old_file_key_told_these_apart(name):
    """The file's bytes (line endings aside) tell these apart, so a key of the bytes would not follow the rows."""
    if name == "Windows line endings and a byte-order mark":
        pytest.skip("the old key already ignored line endings")
    assert canonical_csv(SAME_TABLE[name]()) != canonical_csv(ORIGINAL)


# --- the ledger's key: the same people meet one budget ------------------------------------------------
def _column_dropped():
    return _csv(_table().drop(columns=["hours"]))


def _extra_column_reordered_semicolons():
    frame = _table().sample(frac=1.0, random_state=5)
    frame["note"] = "x"
    return _csv(frame[["note", "sex", "age", "income", "hours"]], sep=";")


def _label_recoded():
    frame = _table()
    frame["income"] = (frame["income"] == ">50K").astype(int)  # "<=50K"/">50K" written 0/1
    return _csv(frame)


def _other_people_sharing_one_column():
    frame = _table()
    other = _table().assign(hours=np.random.default_rng(8).integers(1, 100, len(frame)).astype(float))
    other["sex"] = np.random.default_rng(9).choice(["Female", "Male"], len(frame))
    other["income"] = np.random.default_rng(10).choice(["<=50K", ">50K"], len(frame))
    return _csv(other)  # only the ages in common


SAME_PEOPLE = {
    **SAME_TABLE,
    "an extra ignored column": _extra_column,
    "one column fewer": _column_dropped,
    "a column renamed": _column_renamed,
    "an extra column, rows shuffled, columns reordered, semicolons": _extra_column_reordered_semicolons,
    "two cells swapped between rows": _cells_swapped_between_rows,  # per column the same values: safe to join
    "the label recoded 0/1": _label_recoded,  # a two-valued column is fingerprinted by how it splits the rows
    # the other columns still hold the same values: the same people, and the safe direction is one budget
    "one numeric cell changed": _one_cell_changed,
    "one label changed": _one_label_changed,
}
SHARES_COLUMNS = ("one numeric cell changed", "one label changed")  # met by shared columns, not by nesting
OTHER_PEOPLE = {
    "one row dropped": _one_row_dropped,
    "one row twice": _one_row_twice,
    "other people who share one column": _other_people_sharing_one_column,
}


def _key(book: Ledger, data: bytes, label: str = "") -> str:
    return book.table_key(upload_table(data), label)


def test_every_way_of_saving_the_same_people_meets_one_key_and_a_changed_cell_another():
    book = Ledger(budget="epsilon=1", secret=b"test-secret")
    first = _key(book, ORIGINAL, "the original")
    assert first == book.key_of(upload_identity(ORIGINAL))  # a first upload is named by its digest
    matches = {name: book.match_table(upload_table(make()), name) for name, make in SAME_PEOPLE.items()}
    assert {name: m.key for name, m in matches.items()} == dict.fromkeys(SAME_PEOPLE, first)
    for name, match in matches.items():  # a page says why a table that only shares columns met the budget
        assert (match.why is not None) == (name in SHARES_COLUMNS), name
        assert name not in SHARES_COLUMNS or "the same people" in match.why
    for name, make in OTHER_PEOPLE.items():
        assert _key(book, make(), name) != first, name
    assert len(book.datasets()) == 1 + len(OTHER_PEOPLE)


def test_a_spend_on_the_original_counts_against_the_table_with_an_extra_column():
    from dpci.methods import allocate

    book = Ledger(budget="epsilon=1", secret=b"test-secret")
    book.admit(_key(book, ORIGINAL), allocate(1.0, None, "output", "pure").spend, what="the whole budget")
    status = book.status(_key(book, _extra_column()))
    assert status.spent == 1.0 and status.releases == 1  # no fresh budget: the preview says it is spent


def test_every_form_met_stays_so_a_third_form_of_the_same_people_still_nests():
    """{a, b, c, d} and then {a, b, c, d, id}: a later {a, b, c, d, note} nests with the first form, not
    with the union of the two, and must meet the same key."""
    book = Ledger(secret=b"test-secret")
    first = _key(book, ORIGINAL)
    assert _key(book, _extra_column()) == first
    noted = _table()
    noted["note"] = "x"
    assert _key(book, _csv(noted)) == first


def test_a_table_that_meets_two_separate_budgets_is_refused():
    """{age, hours} and {age, sex} share one column only, so they are kept apart; the whole table shows
    they are the same people, and neither budget alone may be charged for it."""
    book = Ledger(secret=b"test-secret")
    frame = _table()
    a = _key(book, _csv(frame[["age", "hours"]]), "first half")
    b = _key(book, _csv(frame[["age", "sex"]]), "second half")
    assert a != b
    with pytest.raises(SameRowsTwice, match=r"^This table shares its rows and columns with .*first half, second half"):
        _key(book, ORIGINAL)
    assert len(book.datasets()) == 2  # nothing registered


def test_a_table_inside_two_separate_budgets_is_refused_too():
    """{age, note} nests with {age, hours} and with {age, sex} (a column of one value has no fingerprint:
    it says nothing of the people): which budget it meets is as unclear."""
    book = Ledger(secret=b"test-secret")
    frame = _table()
    _key(book, _csv(frame[["age", "hours"]]))
    _key(book, _csv(frame[["age", "sex"]]))
    with pytest.raises(SameRowsTwice):
        _key(book, _csv(frame[["age"]].assign(note="x")))


def _audit_table(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "age": rng.integers(17, 91, n),
            "hours": rng.integers(1, 100, n),
            "label": rng.choice(["yes", "no"], n),
        }
    )


def _audit_variants():
    """The audit's five uploads of one table: each a fresh budget under nesting alone."""
    base = _audit_table()
    noise = np.random.default_rng(12)
    one = base.drop(columns="id").assign(noise=noise.normal(size=len(base)))
    two = one.assign(noise2=noise.normal(size=len(base)))
    grouped = one.assign(age_group=base["age"] // 10)
    edited = base.copy()
    edited.loc[7, "id"] = 10_000
    recoded = base.assign(label=(base["label"] == "yes").astype(int))
    return {
        "id dropped, a noise column added": one,
        "and another noise column": two,
        "and an age-group column": grouped,
        "one id cell changed": edited,
        "the label recoded yes/no as 1/0": recoded,
    }


def test_the_audits_uploads_of_one_table_reach_one_budget():
    """Every variant meets the first upload's key and its spend: after epsilon = 1 of a budget of 1 on the
    original, nothing more is admitted on any of them; each says why it met that budget."""
    from dpci.ledger import BudgetExceeded
    from dpci.methods import allocate

    book = Ledger(budget="epsilon=1", secret=b"test-secret")
    first = _key(book, _csv(_audit_table()), "the original")
    book.admit(first, allocate(1.0, None, "output", "pure").spend, what="the whole budget")
    for name, frame in _audit_variants().items():
        match = book.match_table(upload_table(_csv(frame)), name)
        assert match.key == first, name
        if name == "id dropped, a noise column added":  # shares three columns, nests with nothing
            assert "the same people" in match.why
        with pytest.raises(BudgetExceeded):
            book.admit(match.key, allocate(5.0, None, "output", "pure").spend, what=name)
    assert len(book.datasets()) == 1


def test_a_table_of_other_people_that_shares_one_column_gets_its_own_budget():
    book = Ledger(budget="epsilon=1", secret=b"test-secret")
    first = _key(book, _csv(_audit_table()))
    other = _audit_table().assign(
        hours=np.random.default_rng(13).integers(1, 100, 400), label=np.random.default_rng(14).choice(["a", "b"], 400)
    )
    assert _key(book, _csv(other.drop(columns="id"))) != first  # the ages alone in common


def test_a_two_valued_column_is_fingerprinted_by_how_it_splits_the_rows():
    from dpci.data.identity import canonical_cells, column_fingerprint, split_cells

    words = pd.Series(["yes", "no", "no", "yes", "no"])
    digits = pd.Series([1, 0, 0, 1, 0])
    flipped = pd.Series([0, 1, 1, 0, 1])

    def fingerprint(column):
        return column_fingerprint(split_cells(canonical_cells(column)))

    assert fingerprint(words) == fingerprint(digits) == fingerprint(flipped)
    assert fingerprint(words) != fingerprint(pd.Series(["yes", "yes", "yes", "yes", "no"]))  # another split
    assert split_cells(canonical_cells(pd.Series(["x"] * 5))) is None  # one value says nothing of the people


def test_keys_persist_and_concurrent_uploads_of_the_same_people_meet_one_key(database):  # noqa: F811
    """Eight sessions upload forms of the same people at once (SQLite file, PostgreSQL): one dataset; a
    ledger opened afterwards on the same database finds it again."""
    forms = [ORIGINAL, _extra_column(), _column_dropped(), _shuffled()] * 2
    tables = [upload_table(data) for data in forms]
    keys: list[str] = []
    Ledger(database, secret=b"test-secret").close()  # the tables made once (not the race tested here)
    start = threading.Barrier(len(tables), timeout=60)

    def upload(table):
        book = Ledger(database, secret=b"test-secret")
        start.wait()
        keys.append(book.table_key(table, "concurrent"))
        book.close()

    threads = [threading.Thread(target=upload, args=(t,)) for t in tables]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(keys) == len(tables) and len(set(keys)) == 1
    again = Ledger(database, secret=b"test-secret")
    assert again.table_key(upload_table(_reversed())) == keys[0]
    assert [s.key for s in again.datasets()] == [keys[0]]
    again.close()
