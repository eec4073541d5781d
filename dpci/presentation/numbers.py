"""Numbers that agree with their words: one rounding rule for every interval a page, a report or a CSV
shows.

A bound is rounded to a few significant digits, and to more where fewer would put it on the reference
value or across it: an odds-ratio interval (1.0004, 1.32) that excludes 1 prints as "1.0004 – 1.32",
never "1 – 1.32" beside the words "interval excludes 1"; a coefficient's bound 0.00004 never prints as 0.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

DIGITS = 3  # significant digits of a number shown to a reader
MAX_DIGITS = 17  # a double's worst case: beyond it, the value is the reference itself

#: The reference value of each kind of interval column: coefficients are compared with 0, odds ratios with 1.
REFERENCES = {"odds_ratio": 1.0}


def rounded(value: float, reference: float = 0.0, digits: int = DIGITS) -> float:
    """``value`` to ``digits`` significant digits, or to as many more as keep it on its side of
    ``reference`` (strictly: a value above it never rounds to it)."""
    value = float(value)
    if not math.isfinite(value):
        return value
    for d in range(digits, MAX_DIGITS + 1):
        shown = float(f"{value:.{d}g}")
        if value == reference or ((shown > reference) == (value > reference) and shown != reference):
            return shown
    return value


def number_text(value: float, reference: float = 0.0, digits: int = DIGITS) -> str:
    """A number as a reader sees it (:func:`rounded`), large ones in scientific notation."""
    value = float(value)
    if not math.isfinite(value):
        return "–" if math.isnan(value) else ("∞" if value > 0 else "−∞")
    if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-4):
        return _scientific(value, reference, digits)
    text = repr(rounded(value, reference, digits))  # the shortest text of the rounded double
    return text[:-2] if text.endswith(".0") else text


def _scientific(value, reference, digits):
    for d in range(digits, MAX_DIGITS + 1):
        text = f"{value:.{d - 1}e}"
        if value == reference or ((float(text) > reference) == (value > reference) and float(text) != reference):
            return text
    return repr(value)


def interval_text(estimate: float, lower: float, upper: float, reference: float = 0.0, digits: int = DIGITS) -> str:
    """ "1.15 (1.0004 – 1.32)": an estimate and its interval, each bound on its own side of ``reference``."""
    parts = (number_text(v, reference, digits) for v in (estimate, lower, upper))
    return "{} ({} – {})".format(*parts)


def reference_of(column: str) -> float:
    """The reference value of a table's column (``private_lower`` -> 0, ``odds_ratio_upper`` -> 1)."""
    base = column.rsplit("_", 1)[0] if column.endswith(("_lower", "_upper", "_estimate")) else column
    return REFERENCES.get(base, 0.0)


def rounded_table(table: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """Every float column rounded for a reader (a CSV, a report): interval bounds and estimates by
    :func:`rounded` against their reference, so a bound never prints as the value it excludes; other
    numbers to ``digits`` significant digits. Numbers stay numbers."""
    out = table.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            ref = reference_of(str(col))
            out[col] = [rounded(v, ref, digits) if np.isfinite(v) else v for v in out[col]]
    return out


def text_table(table: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """:func:`rounded_table` as text (a page's table: what is shown is what the CSV holds)."""
    out = table.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            ref = reference_of(str(col))
            out[col] = [number_text(v, ref, digits) for v in out[col]]
    return out
