"""Odds ratios for a stated change over a feature's public range (dpci.presentation.odds): each one
checked against the preprocessing itself, by moving one raw value and reading the model's log-odds."""

import numpy as np
import pandas as pd
import pytest

from dpci.data import ADULT_SCHEMA, load_adult
from dpci.presentation.numbers import interval_text
from dpci.presentation.odds import feature_changes, odds_ratio_table, readable_odds

THETA = np.random.default_rng(7).normal(0, 2, size=11)  # any coefficients (10 features and a constant)


@pytest.fixture(scope="module")
def adult():
    return load_adult(d=10, normalize="global")


def _log_odds_change(adult, column, low, high, row=0):
    """What moving one raw value of one record from ``low`` to ``high`` does to theta . x."""
    raw = adult.frame.iloc[[row, row]].copy()
    raw[column] = [low, high]
    x = adult.preprocessor.transform(raw)
    return float(THETA @ (x[1] - x[0]))


def _table(adult, low=None, high=None):
    low = THETA - 0.3 if low is None else low
    high = THETA + 0.3 if high is None else high
    return pd.DataFrame(
        {"feature": adult.feature_names, "private_estimate": THETA, "private_lower": low, "private_upper": high}
    )


def test_a_numeric_odds_ratio_is_the_models_odds_ratio_between_the_public_bounds(adult):
    odds = odds_ratio_table(_table(adult), feature_changes(adult.preprocessor)).set_index("feature")
    for column in ("age", "hours-per-week", "capital-gain"):
        bounds = ADULT_SCHEMA.column(column)
        for row in (0, 100, 5000):  # the same for every record: one public divisor
            expected = np.exp(_log_odds_change(adult, column, bounds.lower, bounds.upper, row))
            assert odds.loc[column, "odds_ratio"] == pytest.approx(expected, rel=1e-12)
        assert odds.loc[column, "change"] == f"{column} {bounds.lower:,.0f} → {bounds.upper:,.0f}"
    assert odds.loc["age", "change"] == "age 17 → 90"


def test_a_category_odds_ratio_compares_the_category_with_not_being_in_it(adult):
    odds = odds_ratio_table(_table(adult), feature_changes(adult.preprocessor)).set_index("feature")
    # Local-gov is not among the first 10 design columns: a move from it to Private turns on one indicator
    expected = np.exp(_log_odds_change(adult, "workclass", "Local-gov", "Private"))
    assert odds.loc["workclass=Private", "odds_ratio"] == pytest.approx(expected, rel=1e-12)
    assert odds.loc["workclass=Private", "change"] == "workclass: Private vs. not"
    assert "const" not in odds.index  # the constant has no change to state


def test_the_interval_of_an_odds_ratio_is_the_coefficients_interval_turned_into_odds(adult):
    odds = odds_ratio_table(_table(adult), feature_changes(adult.preprocessor))
    step = np.log(odds["odds_ratio"]) / odds["coefficient"]  # exp(step * theta)
    assert np.allclose(np.log(odds["odds_ratio_lower"]), step * (odds["coefficient"] - 0.3))
    assert (odds["odds_ratio_lower"] < odds["odds_ratio"]).all()
    assert (odds["odds_ratio"] < odds["odds_ratio_upper"]).all()


def test_each_feature_gets_a_sentence_saying_the_direction_and_whether_the_interval_excludes_1(adult):
    d = len(adult.feature_names)
    low, high = np.full(d, -0.2), np.full(d, 0.4)  # includes 0: no clear effect
    low[0], high[0] = 0.1, 0.5  # age: higher odds
    low[2], high[2] = -0.9, -0.2  # education-num: lower odds (a made-up interval)
    odds = odds_ratio_table(_table(adult, low, high), feature_changes(adult.preprocessor))
    words = dict(zip(odds["feature"], odds["in_words"]))
    assert words["age"] == "higher age: higher odds, interval excludes 1"
    assert words["education-num"].startswith("higher education-num: lower odds")
    assert words["fnlwgt"] == "higher fnlwgt: no clear effect, interval includes 1"
    shown = readable_odds(odds, 0.95)
    assert list(shown.columns) == [
        "Change (public range)",
        "Odds ratio (95% interval)",
        "Coefficient (scaled units)",
        "In words",
    ]
    ratio, low, high = odds.loc[0, ["odds_ratio", "odds_ratio_lower", "odds_ratio_upper"]]
    assert shown.iloc[0, 1] == interval_text(ratio, low, high, reference=1.0)  # one rule for every interval
    # the coefficient is per scaled unit: the odds ratio is e^(coefficient x the change's scaled width)
    assert np.log(ratio) == pytest.approx(odds.loc[0, "coefficient"] * feature_changes(adult.preprocessor)["age"].step)
    # an upload's bounds read from its data are named so, never "public"
    assert readable_odds(odds, 0.95, public_range=False).columns[0] == "Change (range read from the data, not public)"


def test_rows_scaled_to_length_1_have_no_odds_ratio_per_feature():
    assert feature_changes(load_adult(d=4).preprocessor) is None  # the paper's scaling (normalize="unit")
