"""Which people's data an uploaded table holds: a digest of the parsed table made canonical, so the
privacy ledger keys a budget by the rows and not by how the file happened to be saved (no UI).

What the digest ignores (the same people's data, however written): the order of the rows, the order
of the columns, the separator, spaces around a cell, how a number is written (``42``, ``42.00`` and
``4.2e1`` are one value), the spelling of a missing cell (``""``, ``NA``, ``?``), line endings and a
byte-order mark. What it keeps: every column of the file, by name, and every cell's value, so one
changed cell names another table.

Every column counts, the ones no release uses included: the protected unit is a row, and a choice
made in the app (another target, fewer features) must never reach a fresh budget for the same rows;
only changing the table itself does (docs/data.md, "Which data a budget follows").

Beside the table's digest, :func:`table_columns` gives one fingerprint per column (the multiset of its
canonical cells, without its name). A column with two values is fingerprinted by how its rows split
(the rarer value's count), so recoding yes/no as 1/0 changes nothing; a column with one value says
nothing about the people and has none. The ledger meets two uploads with as many rows at one budget
when their column sets nest or share two fingerprints, one of a column with more than two values
(:meth:`dpci.ledger.Ledger.table_key`): the same rows with columns added, dropped, renamed, recoded
or partly changed are the same people.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpci.data.csv_text import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, _parse, guess_separator

#: Written before the digest, so a change of the canonical form never meets an older form's key.
FORM = b"dpci canonical table 1\n"
#: The same for a column's fingerprint.
COLUMN_FORM = b"dpci canonical column 1\n"


@dataclass(frozen=True)
class TableColumns:
    """What the ledger knows of an uploaded table: its ``digest`` (:func:`table_digest`), its number of
    ``rows`` and one fingerprint per column (:func:`column_fingerprint`; equal columns count once)."""

    digest: bytes
    rows: int
    columns: frozenset[bytes]
    #: The fingerprints of columns with more than two values: two tables of other people with as many rows
    #: may split a two-valued column alike by chance, but hardly share such a column's every value.
    strong: frozenset[bytes] = frozenset()


def canonical_cells(column: pd.Series) -> pd.Series:
    """One column's cells as canonical text: a number as the repr of its float (-0.0 as 0.0), any
    other text stripped, a missing cell as the empty string (never a value: the parse reads an
    empty cell as missing)."""
    numbers = pd.to_numeric(column, errors="coerce").astype("float64")
    is_number = numbers.notna().to_numpy()
    text = column.astype(object).where(column.notna(), "").to_numpy(dtype=object, copy=True)
    text[is_number] = [repr(v + 0.0) for v in numbers.to_numpy()[is_number]]
    return pd.Series(text, index=column.index, dtype=object)


def table_digest(frame: pd.DataFrame) -> bytes:
    """The digest of a parsed table (cells as text or missing), the same for any order of its rows and
    columns: columns sorted by name, each row hashed from its canonical cells, the row hashes sorted
    (a multiset of rows), then hashed with the column names and the row count."""
    names = sorted(frame.columns)
    cells = pd.DataFrame({name: canonical_cells(frame[name]) for name in names}, columns=names)
    rows = np.sort(pd.util.hash_pandas_object(cells, index=False).to_numpy())
    digest = hashlib.sha256(FORM)
    for name in names:
        encoded = name.encode()
        digest.update(len(encoded).to_bytes(8, "little") + encoded)
    digest.update(len(rows).to_bytes(8, "little"))
    digest.update(rows.astype("<u8").tobytes())
    return digest.digest()


def column_fingerprint(cells: pd.Series) -> bytes:
    """A column's canonical cells (:func:`canonical_cells`) as a multiset: the same for any order of the
    rows and any name, another for one changed, added or dropped cell."""
    hashes = np.sort(pd.util.hash_pandas_object(cells, index=False).to_numpy())
    digest = hashlib.sha256(COLUMN_FORM)
    digest.update(len(hashes).to_bytes(8, "little"))
    digest.update(hashes.astype("<u8").tobytes())
    return digest.digest()


def split_cells(cells: pd.Series) -> pd.Series | None:
    """A column's canonical cells with its values replaced by how they split the rows, or None for a column
    with one value (or none): two values become "1" for the rarer and "0" for the other (on a tie the
    multiset is the same either way), missing cells stay empty; more values are kept as they are."""
    present = cells[cells != ""]
    counts = present.value_counts()
    if len(counts) <= 1:
        return None
    if len(counts) > 2:
        return cells
    rarer = counts.index[-1]
    return cells.where(cells == "", np.where(cells == rarer, "1", "0")).astype(object)


def table_columns(frame: pd.DataFrame) -> TableColumns:
    """A parsed table's digest, row count and column fingerprints (see the module)."""
    columns, strong = set(), set()
    for name in frame.columns:
        cells = canonical_cells(frame[name])
        split = split_cells(cells)
        if split is None:
            continue
        fingerprint = column_fingerprint(split)
        columns.add(fingerprint)
        if split is cells:
            strong.add(fingerprint)
    return TableColumns(table_digest(frame), len(frame), frozenset(columns), frozenset(strong))


def upload_table(
    data,
    *,
    sep: str | None = None,
    encoding: str = "utf-8",
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> TableColumns:
    """:func:`table_columns` of an uploaded CSV (arguments and errors as :func:`upload_identity`); its
    ``digest`` is :func:`upload_identity`'s."""
    return table_columns(_read(data, sep, encoding, max_rows, max_bytes))


def _read(data, sep, encoding, max_rows, max_bytes) -> pd.DataFrame:
    if sep is None:
        sep = guess_separator(bytes(data)) if isinstance(data, (bytes, bytearray, memoryview)) else ","
    frame, _ = _parse(data, sep=sep, encoding=encoding, max_bytes=max_bytes, max_rows=max_rows)
    return frame


def upload_identity(
    data,
    *,
    sep: str | None = None,
    encoding: str = "utf-8",
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> bytes:
    """The identity of an uploaded CSV's table (see the module): the bytes the ledger keys its
    budget by. ``sep`` defaults to the separator guessed from the bytes (:func:`guess_separator`; a
    comma for a file object).

    Raises :class:`~dpci.exceptions.DataValidationError` for a file that cannot be read as a table.
    """
    return table_digest(_read(data, sep, encoding, max_rows, max_bytes))
