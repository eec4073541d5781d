"""Validation of user-uploaded CSV files (pure functions, no UI).

:func:`read_uploaded_csv` turns the bytes of an uploaded file into a cleaned
DataFrame and a :class:`~dpci.data.Schema` of the same type as the built-in
datasets, so :class:`~dpci.data.UnitBallPreprocessor` applies unchanged.

Safety: the file is parsed only by ``pandas.read_csv`` (C engine, every cell
read as text, no converters), never evaluated or unpickled; the size is
checked before parsing and the row count is capped while parsing. Every
refusal is a :class:`~dpci.exceptions.DataValidationError` whose message says
what is wrong and how to fix it.

Privacy: numeric bounds and category lists must be public (see
:mod:`dpci.data.schema`). When the user gives none, they are taken from the
data (observed min/max, observed levels) and a
:class:`~dpci.exceptions.PrivacyLeakWarning` is issued: the resulting
intervals are then not differentially private with respect to those columns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpci.data.column_kinds import (
    _as_numbers,
    _canonical_target,
    _check_names,
    _choose_positive,
    _detect_kind,
    _raise_text_in_numeric,
)
from dpci.data.csv_text import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, _parse, quote, quote_list
from dpci.data.dataset import Dataset, make_dataset
from dpci.data.preprocessing import count_out_of_bounds
from dpci.data.schema import CATEGORICAL, NUMERIC, Column, Schema, bounds_problem
from dpci.exceptions import DataValidationError, PrivacyLeakWarning, warn

#: Minimum number of usable rows (after dropping incomplete rows).
MIN_ROWS = 100
#: Default maximum number of levels of an (auto-detected) categorical column.
DEFAULT_MAX_CATEGORIES = 50


@dataclass
class UploadResult:
    """Outcome of :func:`read_uploaded_csv`.

    Attributes
    ----------
    frame : pandas.DataFrame
        Cleaned data: the chosen features (numeric as float64, categorical as
        stripped strings) and the target (strings), complete rows only.
    schema : Schema
        Inferred schema (label = target, bounds, category lists); columns
        whose bounds or categories came from the data have ``public=False``.
    n_dropped : int
        Rows dropped because of missing values.
    notes : list of str
        Human-readable notes and warnings for the user.
    n_rows_read : int
        Data rows in the file.
    data_derived : list of str
        Columns whose bounds or categories were taken from the data (not
        private).
    handle_unknown : {"error", "ignore"}
        What the preprocessing does with a level outside a public category
        list (see :class:`~dpci.data.UnitBallPreprocessor`).
    """

    frame: pd.DataFrame
    schema: Schema
    n_dropped: int
    notes: list[str] = field(default_factory=list)
    n_rows_read: int = 0
    data_derived: list[str] = field(default_factory=list)
    handle_unknown: str = "error"

    @property
    def is_private(self) -> bool:
        """True if all bounds and category lists were supplied (public)."""
        return not self.data_derived

    def to_dataset(
        self,
        d: int | None = None,
        features: Sequence[str] | None = None,
        add_constant: bool = True,
        normalize: str = "unit",
    ) -> Dataset:
        """Preprocess into a :class:`Dataset` (rows in the unit ball, y in {-1, +1})."""
        return make_dataset(
            self.frame,
            self.schema,
            name=self.schema.name,
            d=d,
            features=features,
            add_constant=add_constant,
            normalize=normalize,
            handle_unknown=self.handle_unknown,
        )


@dataclass
class CsvSummary:
    """Outcome of :func:`inspect_uploaded_csv`, to let a user pick columns.

    Attributes
    ----------
    columns : list of str
        Column names in file order.
    n_rows : int
        Data rows.
    kinds : dict
        Detected kind per column ("numeric" or "categorical").
    n_missing : dict
        Missing cells per column.
    binary_columns : list of str
        Columns with exactly two distinct non-missing values (target
        candidates).
    notes : list of str
    """

    columns: list[str]
    n_rows: int
    kinds: dict[str, str]
    n_missing: dict[str, int]
    binary_columns: list[str]
    notes: list[str] = field(default_factory=list)


# -------------------------------------------------------------- public API
def inspect_uploaded_csv(
    data,
    *,
    sep: str = ",",
    encoding: str = "utf-8",
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> CsvSummary:
    """Parse an uploaded CSV and describe its columns (to choose the target).

    Parameters
    ----------
    data : bytes or binary file-like
        The file's contents.
    sep, encoding, max_rows, max_bytes
        As in :func:`read_uploaded_csv`.

    Returns
    -------
    CsvSummary

    Raises
    ------
    DataValidationError
        If the file cannot be read as a CSV within the limits.
    """
    frame, notes = _parse(data, sep=sep, encoding=encoding, max_bytes=max_bytes, max_rows=max_rows)
    kinds, missing, binary = {}, {}, []
    for col in frame.columns:
        s = frame[col]
        present = s.notna()
        kinds[col] = NUMERIC if (_as_numbers(s).notna() == present).all() else CATEGORICAL
        missing[col] = int((~present).sum())
        if _canonical_target(s[present]).nunique() == 2:
            binary.append(col)
    return CsvSummary(list(frame.columns), len(frame), kinds, missing, binary, notes)


def read_uploaded_csv(
    data,
    target: str,
    positive_class=None,
    features: Sequence[str] | None = None,
    *,
    categorical: Sequence[str] | None = None,
    numeric: Sequence[str] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    categories: Mapping[str, Sequence[str]] | None = None,
    unknown_levels: str = "error",
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    min_rows: int = MIN_ROWS,
    max_categories: int = DEFAULT_MAX_CATEGORIES,
    sep: str = ",",
    encoding: str = "utf-8",
    name: str = "uploaded",
) -> UploadResult:
    """Validate and clean an uploaded CSV for private logistic regression / SVM.

    Parameters
    ----------
    data : bytes or binary file-like
        The file's contents (e.g. Streamlit's ``UploadedFile``). At most
        ``max_bytes + 1`` bytes are read.
    target : str
        Name of the binary target column.
    positive_class : optional
        Target value mapped to +1 (compared as text, or numerically for
        numeric targets). Default: the obvious one for pairs such as 0/1,
        no/yes, false/true, otherwise the later value in sorted order; a note
        says which.
    features : sequence of str, optional
        Feature columns, in order; default all columns except the target.
    categorical, numeric : sequence of str, optional
        Force columns to be categorical or numeric. Other features are
        detected: numeric if every non-missing value is a number.
    bounds : mapping, optional
        Public bounds ``{column: (lower, upper)}`` of numeric features,
        taken from documentation or domain knowledge. Values outside are
        clipped by the preprocessing. Columns without bounds get the observed
        min/max and a :class:`PrivacyLeakWarning`: data-derived bounds are
        not private.
    categories : mapping, optional
        Public category lists ``{column: [levels]}``. Columns without one get
        the observed levels (sorted) and a :class:`PrivacyLeakWarning`.
    unknown_levels : {"error", "ignore"}, default "error"
        A value of a column outside the public list given for it: refused
        ("error"), or encoded as all zeros, no indicator ("ignore": the
        encoding still reads only the public list, row by row), with a note
        counting such rows.
    max_rows, max_bytes : int
        Refuse files with more data rows or bytes.
    min_rows : int, default 100
        Refuse if fewer complete rows remain.
    max_categories : int, default 50
        Refuse auto-detected categorical columns with more levels.
    sep : str, default ","
        Field separator.
    encoding : str, default "utf-8"
        Text encoding (a UTF-8 byte-order mark is accepted).
    name : str, default "uploaded"
        Name of the inferred schema.

    Returns
    -------
    UploadResult

    Raises
    ------
    DataValidationError
        For any unusable input; the message says what is wrong and how to fix
        it (empty file, not CSV, one column, too large, too many rows,
        unknown target, non-binary target, too few usable rows, text in a
        numeric column, invalid bounds, ...).

    Warns
    -----
    PrivacyLeakWarning
        When bounds or category lists are derived from the data.
    """
    for label, v, least in (
        ("max_rows", max_rows, 1),
        ("max_bytes", max_bytes, 1),
        ("min_rows", min_rows, 1),
        ("max_categories", max_categories, 2),
    ):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < least:
            raise DataValidationError(f"{label} must be an integer >= {least}, got {v!r}.")
    if unknown_levels not in ("error", "ignore"):
        raise DataValidationError(f"unknown_levels must be 'error' or 'ignore', got {unknown_levels!r}.")
    frame, notes = _parse(data, sep=sep, encoding=encoding, max_bytes=max_bytes, max_rows=max_rows)
    n_read = len(frame)
    columns = list(frame.columns)

    # --- target and features
    if not isinstance(target, str) or target not in columns:
        raise DataValidationError(f"Target column {quote(target)} not found. Choose one of {quote_list(columns)}.")
    if features is None:
        features = [c for c in columns if c != target]
    else:
        features = _check_names("features", features, columns)
        if not features:
            raise DataValidationError("features is empty; choose at least one feature column.")
        if target in features:
            raise DataValidationError(f"The target {quote(target)} cannot also be a feature; remove it from features.")
        if len(set(features)) != len(features):
            raise DataValidationError("features lists a column twice.")
    forced_cat = _check_names("categorical", categorical, features)
    forced_num = _check_names("numeric", numeric, features)
    both = sorted(set(forced_cat) & set(forced_num))
    if both:
        raise DataValidationError(f"Column(s) {both} are listed as both categorical and numeric.")
    bounds = dict(bounds or {})
    categories = dict(categories or {})
    _check_names("bounds", list(bounds), features)
    _check_names("categories", list(categories), features)

    # --- missing values: report and drop
    frame = frame[features + [target]]
    na = frame.isna()
    incomplete = na.any(axis=1)
    n_dropped = int(incomplete.sum())
    detail = ""
    if n_dropped:
        per_col = na.sum()
        detail = ", ".join(f"{quote(c)}: {int(k):,}" for c, k in per_col.items() if k)
        notes.append(f"Dropped {n_dropped:,} of {n_read:,} rows with missing values ({detail}).")
        frame = frame[~incomplete.to_numpy()].reset_index(drop=True)
    if len(frame) < min_rows:
        why = f" ({n_dropped:,} of {n_read:,} dropped for missing values; missing cells: {detail})" if n_dropped else ""
        raise DataValidationError(
            f"Only {len(frame):,} usable row(s){why}; at least {min_rows:,} complete rows are needed for "
            "the confidence intervals. Upload more data, fill in missing values, or leave mostly empty "
            "columns out of the features."
        )

    # --- target: exactly two classes
    y = _canonical_target(frame[target])
    levels = sorted(pd.unique(y))
    if len(levels) != 2:
        shown = quote_list(levels, 6)
        raise DataValidationError(
            f"The target {quote(target)} must be binary (exactly 2 distinct values) but has {len(levels):,}: "
            f"{shown}. Choose a two-valued column or recode the target into two classes."
        )
    pos, neg, note = _choose_positive(levels, positive_class)
    if note:
        notes.append(note)
    clean = {}

    # --- features: kinds, bounds, categories
    cols: list[Column] = []
    derived_bounds, derived_cats = [], []
    for col in features:
        s = frame[col]
        if col in forced_cat:
            kind = CATEGORICAL
        elif col in forced_num:
            kind = NUMERIC
            bad = _as_numbers(s).isna()
            if bad.any():
                _raise_text_in_numeric(col, s, bad, forced=True)
        else:
            kind = _detect_kind(col, s, max_categories)
        if col in bounds and kind != NUMERIC:
            raise DataValidationError(f"Bounds were given for {quote(col)}, which is categorical; remove them.")
        if col in categories and kind != CATEGORICAL:
            raise DataValidationError(
                f"Categories were given for {quote(col)}, which is numeric; list it in categorical=... too."
            )
        if kind == NUMERIC:
            v = _as_numbers(s)
            if not np.all(np.isfinite(v.to_numpy())):
                raise DataValidationError(
                    f"Column {quote(col)} contains infinite values; replace them with finite numbers or blanks."
                )
            if col in bounds:
                lo, hi = _check_bounds(col, bounds[col])
                source, public = "bounds supplied by the user", True
            else:
                lo, hi = float(v.min()), float(v.max())
                if not lo < hi:
                    raise DataValidationError(
                        f"Column {quote(col)} is constant ({lo:g}) in the data, so no scaling range can be "
                        "derived; give public bounds for it, or leave it out of the features."
                    )
                source, public = "observed min/max of the uploaded data (not private)", False
                derived_bounds.append(col)
            cols.append(Column(col, NUMERIC, lower=lo, upper=hi, source=source, public=public))
            clean[col] = v
        else:
            text = s.astype(str)
            if col in categories:
                cats = [str(c).strip() for c in categories[col]]
                if len(cats) < 1 or len(set(cats)) != len(cats):
                    raise DataValidationError(f"categories[{quote(col)}] must be a non-empty list without duplicates.")
                extra = sorted(set(text) - set(cats))
                if extra and unknown_levels == "ignore":
                    rows = int((~text.isin(cats)).sum())
                    notes.append(
                        f"Column {quote(col)}: {rows:,} row(s) hold a value outside its public levels; they are "
                        "encoded with no indicator of that column (all zeros)."
                    )
                elif extra:
                    raise DataValidationError(
                        f"Column {quote(col)} has value(s) {quote_list(extra, 5)} that are not in the categories you gave "
                        f"for it; add them to categories[{quote(col)}] or fix those cells."
                    )
                source, public = "categories supplied by the user", True
            else:
                cats = sorted(set(text))
                if len(cats) > max_categories:
                    raise DataValidationError(
                        f"Column {quote(col)} has {len(cats):,} distinct values, more than the {max_categories} "
                        "allowed for a categorical feature; leave it out or group its values."
                    )
                source, public = "levels observed in the uploaded data (not private)", False
                derived_cats.append(col)
            cols.append(Column(col, CATEGORICAL, categories=tuple(cats), source=source, public=public))
            clean[col] = text
    clean[target] = y
    frame_out = pd.DataFrame(clean)
    try:
        schema = Schema(
            name=name,
            columns=tuple(cols),
            label=target,
            positive_class=pos,
            negative_class=neg,
            source="inferred by dpci.data.read_uploaded_csv",
        )
    except DataValidationError as exc:
        raise DataValidationError(f"{exc} Rename the offending columns or categories.") from None

    clipped = count_out_of_bounds(frame_out, schema)
    if clipped:
        detail = ", ".join(f"{quote(c)}: {k:,}" for c, k in clipped.items())
        notes.append(f"Values outside the given bounds will be clipped to the bounds ({detail}).")
    derived = derived_bounds + [c for c in derived_cats if c not in derived_bounds]
    if derived:
        parts = []
        if derived_bounds:
            parts.append(f"numeric bounds of {derived_bounds} are the observed min/max")
        if derived_cats:
            parts.append(f"category lists of {derived_cats} are the observed levels")
        msg = (
            "Not private: " + " and ".join(parts) + " of the uploaded data. Data-derived bounds and "
            "categories leak information about individual rows, so the intervals are not differentially "
            "private with respect to these columns. Give public bounds (bounds=...) and category lists "
            "(categories=...) from documentation or domain knowledge."
        )
        warn(msg, PrivacyLeakWarning, stacklevel=2)
        notes.append(msg)
    return UploadResult(frame_out, schema, n_dropped, notes, n_read, derived, unknown_levels)


def _check_bounds(col: str, b) -> tuple[float, float]:
    try:
        lo, hi = (float(x) for x in b)
    except (TypeError, ValueError):
        raise DataValidationError(
            f"Bounds for {quote(col)} must be a pair (lower, upper) of numbers, got {b!r}."
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise DataValidationError(bounds_problem(str(col), lo, hi))
    return lo, hi


def read_public_levels(data: bytes) -> dict[str, list[str]]:
    """Public category lists from a small JSON schema file, ``{"column": ["level1", "level2", ...]}``
    (or the command line's ``{"categories": {...}}``), for ``read_uploaded_csv(categories=...)``."""
    import json

    try:
        facts = json.loads(bytes(data).decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        raise DataValidationError(
            'The schema file is not JSON. Write it as {"column": ["level1", "level2"]}, UTF-8 text.'
        ) from None
    if isinstance(facts, dict) and isinstance(facts.get("categories"), dict):
        facts = facts["categories"]
    if not isinstance(facts, dict) or not facts:
        raise DataValidationError('The schema file must hold an object {"column": ["level1", "level2"]}.')
    levels = {}
    for column, listed in facts.items():
        if not isinstance(listed, list) or not listed or not all(isinstance(v, (str, int, float)) for v in listed):
            raise DataValidationError(
                f"In the schema file, {quote(column)} must map to a non-empty list of levels (text or numbers), "
                f"got {quote(listed)}."
            )
        levels[str(column)] = [str(v).strip() for v in listed]
    return levels
