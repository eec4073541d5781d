"""Numbers that agree with their words: a bound that excludes a reference value never prints
as it, in every place an interval is shown (dpci.presentation.numbers)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpci.presentation.numbers import interval_text, number_text, rounded, rounded_table, text_table
from dpci.presentation.odds import readable_odds
from dpci.presentation.report import report_html


def _bounds(text: str) -> tuple[float, float]:
    inside = text[text.index("(") + 1 : text.index(")")]
    low, high = inside.split(" – ")
    return float(low), float(high)


def test_the_federal_gov_row_keeps_its_excluding_bound_above_one():
    """Present showed "1.15 (1 – 1.32) | higher odds, interval excludes 1"."""
    odds = pd.DataFrame(
        {
            "change": ["workclass: Federal-gov vs. not"],
            "odds_ratio": [1.1504],
            "odds_ratio_lower": [1.00043],
            "odds_ratio_upper": [1.3218],
            "coefficient": [0.14],
            "in_words": ["workclass: Federal-gov: higher odds, interval excludes 1"],
        }
    )
    text = readable_odds(odds, 0.95).iloc[0, 1]
    assert text == "1.15 (1.0004 – 1.32)"
    assert _bounds(text)[0] > 1


@pytest.mark.parametrize("reference", [0.0, 1.0])
def test_a_bound_never_prints_as_or_across_its_reference(reference):
    """Property over 20,000 random intervals close to the reference on either side (fixed seed)."""
    rng = np.random.default_rng(25)
    scale = 10.0 ** rng.uniform(-9, 1, 20_000)
    side = rng.choice([-1.0, 1.0], 20_000)
    for v in reference + side * scale:
        for digits in (3, 4):
            shown = rounded(v, reference, digits)
            assert (shown > reference) == (v > reference) and shown != reference
            assert float(number_text(v, reference, digits).replace("−", "-")) != reference
            assert abs(shown - v) <= abs(v - reference)  # rounding never moves it further than the gap


def test_ordinary_numbers_keep_few_digits():
    assert interval_text(0.7314, 0.357, 1.109) == "0.731 (0.357 – 1.11)"
    assert number_text(2.0) == "2" and number_text(-0.125) == "-0.125"
    assert interval_text(1.0, 0.5, 2.0, reference=1.0) == "1 (0.5 – 2)"  # an estimate at the reference is itself


def test_tables_round_bounds_against_their_own_reference():
    table = pd.DataFrame(
        {
            "feature": ["a", "b"],
            "private_lower": [0.000041, -0.51234],
            "private_upper": [0.9, -0.0000123],
            "odds_ratio_lower": [1.00002, 0.4],
            "length": [0.123456, 2.0],
        }
    )
    out = rounded_table(table)
    assert out["private_lower"][0] > 0 and out["private_upper"][1] < 0 and out["odds_ratio_lower"][0] > 1
    assert out["length"][0] == 0.1235  # other numbers: 4 significant digits
    text = text_table(table)
    assert float(text["private_lower"][0]) > 0 and float(text["odds_ratio_lower"][0]) > 1


def test_the_report_and_the_csv_use_the_same_rule():
    import plotly.graph_objects as go

    table = pd.DataFrame({"feature": ["x"], "private_estimate": [0.2], "private_lower": [4e-6], "private_upper": [0.4]})
    ledger = pd.DataFrame({"step": ["coefficients"], "share": [1.0], "epsilon": [1.0]})
    html = report_html("t", {}, [], table, ledger, [go.Figure()])
    assert "4.000e-06" in html and ">0.0000<" not in html
    csv = rounded_table(table).to_csv(index=False)
    assert "4e-06" in csv
