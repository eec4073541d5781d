"""Coefficients of a logistic model as odds ratios for a stated change of each feature over its
*public* range, with a sentence per feature (for Present and the report; no UI code).

A logistic coefficient theta_j multiplies the odds of the positive class by exp(theta_j * step_j)
when the design column j grows by step_j, the other columns fixed. The design columns are the
preprocessed features (:mod:`dpci.data.preprocessing`): a numeric column is scaled from its public
bounds [lower, upper] onto [-1, 1] (after log1p when flagged), so moving the raw value from lower to
upper moves the column by 2 / D, and a one-hot indicator moves by 1 / D, where D is the public
divisor of the rows. That D is the same for every row only with ``normalize="global"``; with the
paper's ``"unit"`` rows (each divided by its own length) a feature's effect depends on the row's
other values, and no odds ratio per feature exists: :func:`feature_changes` returns None then.
The map theta -> exp(theta * step) is increasing, so the interval of the odds ratio is the image of
the coefficient's interval and keeps its confidence level (and its privacy: post-processing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .numbers import interval_text, number_text


@dataclass(frozen=True)
class Change:
    """A stated change of one feature: ``text`` says it ("age 17 → 90"), ``step`` is what it does
    to the feature's design column, ``more`` names the changed feature's higher side in words."""

    text: str
    step: float
    more: str


def _number(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 or float(v).is_integer() else f"{v:.3g}"


def feature_changes(preprocessor) -> dict[str, Change] | None:
    """The public change stated for each design column of a fitted
    :class:`~dpci.data.preprocessing.UnitBallPreprocessor` (none for the constant): a numeric
    feature from its public lower to its public upper bound, a category against not being in it.
    None when the rows are divided by their own lengths (``normalize`` other than "global")."""
    if preprocessor.normalize != "global":
        return None
    divisor = preprocessor.max_norm_
    changes = {}
    # selection_ lists the design columns before the constant (the constant gets no change)
    for (column, category), name in zip(preprocessor.selection_, preprocessor.feature_names_out_):
        if category is None:  # [lower, upper] -> [-1, 1], then / D (Section 7.1 with public bounds)
            low, high = preprocessor.lower_[column], preprocessor.upper_[column]
            changes[name] = Change(f"{column} {_number(low)} → {_number(high)}", 2.0 / divisor, f"higher {column}")
        else:  # the indicator 0 -> 1, then / D
            changes[name] = Change(f"{column}: {category} vs. not", 1.0 / divisor, f"{column} {category}")
    return changes


def change_column(public_range: bool = True) -> str:
    """The name of the column of changes: their range is public, or was read from the data."""
    return "Change (public range)" if public_range else "Change (range read from the data, not public)"


def odds_ratio_table(table: pd.DataFrame, changes: dict[str, Change]) -> pd.DataFrame:
    """One row per feature of ``table`` (an :func:`~dpci.presentation.tables.interval_table`) that
    ``changes`` states a change for: the change, the private odds ratio and its interval, the raw
    coefficient, and a caption ("higher age: higher odds, interval excludes 1")."""
    rows = []
    for feature, estimate, low, high in table[
        ["feature", "private_estimate", "private_lower", "private_upper"]
    ].itertuples(index=False):
        change = changes.get(feature)
        if change is None:
            continue
        ratio, ratio_low, ratio_high = np.exp(change.step * np.array([estimate, low, high]))
        rows.append(
            {
                "feature": feature,
                "change": change.text,
                "odds_ratio": ratio,
                "odds_ratio_lower": ratio_low,
                "odds_ratio_upper": ratio_high,
                "coefficient": estimate,
                "in_words": _in_words(change, ratio_low, ratio_high),
            }
        )
    return pd.DataFrame(rows, columns=list(rows[0]) if rows else ["feature"])


def _in_words(change: Change, low: float, high: float) -> str:
    if low > 1:
        return f"{change.more}: higher odds, interval excludes 1"
    if high < 1:
        return f"{change.more}: lower odds, interval excludes 1"
    return f"{change.more}: no clear effect, interval includes 1"


def readable_odds(odds: pd.DataFrame, level: float, public_range: bool = True) -> pd.DataFrame:
    """:func:`odds_ratio_table` for readers: rounded, each odds ratio with its interval, named in words;
    ``public_range`` False names the change's range as read from the data (an upload's bounds)."""
    bounds = zip(odds["odds_ratio"], odds["odds_ratio_lower"], odds["odds_ratio_upper"])
    return pd.DataFrame(
        {
            change_column(public_range): odds["change"],
            f"Odds ratio ({100 * level:g}% interval)": [
                interval_text(v, lo, hi, reference=1.0) for v, lo, hi in bounds
            ],
            "Coefficient (scaled units)": odds["coefficient"].map(number_text),
            "In words": odds["in_words"],
        }
    )
