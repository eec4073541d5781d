"""What the columns of an uploaded CSV hold: numbers or categories, the two classes of the target and
which is positive, and names checked against the header (no UI; used by :mod:`dpci.data.upload`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpci.data.csv_text import quote, quote_list
from dpci.data.schema import CATEGORICAL, NUMERIC
from dpci.exceptions import DataValidationError

# Pairs of target values with an obvious positive class (lower-case).
_POSITIVE_BY_PAIR = {
    frozenset({"0", "1"}): "1",
    frozenset({"-1", "1"}): "1",
    frozenset({"no", "yes"}): "yes",
    frozenset({"n", "y"}): "y",
    frozenset({"false", "true"}): "true",
    frozenset({"f", "t"}): "t",
}


def _as_numbers(s: pd.Series) -> pd.Series:
    """Parse text to float; unparsable -> NaN (missing stays NaN)."""
    return pd.to_numeric(s, errors="coerce").astype("float64")


def _canonical_target(s: pd.Series) -> pd.Series:
    """Strip; if every value is a number, write integers without '.0'."""
    num = _as_numbers(s)
    if len(s) and num.notna().all() and np.all(np.isfinite(num)):
        v = num.to_numpy()
        return pd.Series(
            [str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(float(x)) for x in v],
            index=s.index,
            dtype=object,
        )
    return s.astype(object)


def _detect_kind(name: str, s: pd.Series, max_categories: int) -> str:
    num = _as_numbers(s)
    present = s.notna()
    bad = present & num.isna()
    if not bad.any():
        return NUMERIC
    if bad.sum() <= 0.1 * present.sum():
        _raise_text_in_numeric(name, s, bad, forced=False)
    if s[present].nunique() > max_categories:
        raise DataValidationError(
            f"Column {quote(name)} has {s[present].nunique():,} distinct text values, more than the "
            f"{max_categories} allowed for a categorical feature. If it is an identifier or free "
            "text, leave it out of the features; otherwise group its values or raise max_categories."
        )
    return CATEGORICAL


def _raise_text_in_numeric(name: str, s: pd.Series, bad: pd.Series, forced: bool) -> None:
    idx = list(np.flatnonzero(bad.to_numpy()))
    examples = ", ".join(f"{quote(s.iloc[i])} (data row {i + 1})" for i in idx[:3])
    why = "was chosen as numeric" if forced else "looks numeric"
    raise DataValidationError(
        f"Column {quote(name)} {why} but has {len(idx):,} non-numeric value(s), e.g. {examples}. "
        "Fix or blank those cells (blank cells are treated as missing), or treat the column as "
        "categorical."
    )


def _choose_positive(values: list[str], positive_class) -> tuple[str, str, str | None]:
    """Return (positive, negative, note)."""
    a, b = sorted(values)
    if positive_class is not None:
        want = str(positive_class).strip()
        match = [v for v in values if v == want]
        if not match:
            try:
                wf = float(want)
                match = [v for v in values if _is_float(v) and float(v) == wf]
            except ValueError:
                match = [v for v in values if v.lower() == want.lower()]
        if len(match) != 1:
            raise DataValidationError(
                f"positive_class {quote(positive_class)} is not a value of the target; its values are "
                f"{quote_list([a, b])}. Pass one of them."
            )
        pos = match[0]
        return pos, (b if pos == a else a), None
    key = frozenset(v.lower() for v in values)
    if key in _POSITIVE_BY_PAIR:
        want = _POSITIVE_BY_PAIR[key]
        pos = next(v for v in values if v.lower() == want)
    else:
        pos = b
    neg = a if pos == b else b
    return (
        pos,
        neg,
        (
            f"positive_class not given: {quote(pos)} is the positive class (+1) and {quote(neg)} the negative "
            "class (-1); pass positive_class to change."
        ),
    )


def _is_float(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False


def _check_names(kind: str, names, allowed: Sequence[str]) -> list[str]:
    if names is None:
        return []
    if isinstance(names, str):
        raise DataValidationError(f"{kind} must be a list of column names, not a string.")
    names = list(names)
    known = set(allowed)  # linear in the width, not quadratic
    unknown = [n for n in names if n not in known]
    if unknown:
        raise DataValidationError(
            f"Unknown column(s) in {kind}: {quote_list(unknown)}. Available columns: {quote_list(allowed)}."
        )
    return names
