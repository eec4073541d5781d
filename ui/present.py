"""What Present says to stakeholders: the outcome in words, the settings in words (not internal
names), and a CSV that carries its own provenance."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
import streamlit as st

import dpci
from dpci import methods as registry
from dpci.data import ADULT_SCHEMA
from dpci.losses import loss_params, parameter_ranges
from dpci.presentation.numbers import rounded_table
from dpci.presentation.odds import Change, change_column, odds_ratio_table, readable_odds
from dpci.presentation.tables import csv_safe, escape_markdown, markdown_table
from dpci.recommend import describe_estimand
from ui.app_state import AppState
from ui.data import public_changes
from ui.settings import SCALINGS, label, models


def outcome(s: AppState, upload: dict | None = None) -> str:
    """What the model predicts, in words: "income >50K" (Adult), "label = yes" (an upload: as its stored
    release describes it, ``upload``, else as this session read it)."""
    if s.data.dataset == "adult":
        return f"{ADULT_SCHEMA.label} {ADULT_SCHEMA.positive_class}"
    if s.data.dataset == "upload" and upload and "target" in upload:
        return f"{upload['target']} = {upload.get('positive')}"
    if s.data.dataset == "upload":
        result = st.session_state.get("upload_result")
        if result is not None:
            return f"{result.schema.label} = {result.schema.positive_class}"
        return "the positive class of the upload"
    return "y = +1 (synthetic data)"


# The columns of Present's table that a private release makes (the feature's name aside): its intervals,
# and its odds ratios with the public change they compare. Every other column (the non-private and
# variability intervals, computed from the data without privacy; a synthetic truth) is not private.
PRIVATE_COLUMNS = (
    *("private_estimate", "private_lower", "private_upper"),
    *("change", "odds_ratio", "odds_ratio_lower", "odds_ratio_upper"),
)


def guarantee_void(s: AppState, not_private: str | None) -> str | None:
    """Why nothing shown carries a guarantee (values read from the data, or teaching mode's public
    seed), or None when the private release's guarantee holds."""
    if s.teaching:
        seed = f"teaching mode: the public seed {s.data.seed} made the noise, so anyone can recompute it"
        return seed if not_private is None else f"{seed}; {not_private}"
    return not_private


def not_private_columns(table: pd.DataFrame, s: AppState, not_private: str | None) -> list[str]:
    """The columns of ``table`` no privacy guarantee covers: every one when the release's guarantee is
    void (:func:`guarantee_void`), else those that are not the private release's (:data:`PRIVATE_COLUMNS`)."""
    numbers = [str(c) for c in table.columns if c != "feature"]
    if guarantee_void(s, not_private):
        return numbers
    return [c for c in numbers if c not in PRIVATE_COLUMNS]


def settings_in_words(
    s: AppState, n: int, d: int, not_private: str | None, upload: dict | None = None
) -> dict[str, str]:
    """The settings a reader of the report needs, named as a reader would name them; ``not_private``:
    why the release carries no guarantee (values read from the data), or None; ``upload``: the stored
    release's description of its upload (:func:`outcome`)."""
    method = registry.get(s.spec.method)
    notion = s.notion
    guarantee = f"{notion.say(s.spec.budget)} ({notion.words})"
    if notion.needs_delta:  # its (ε, δ) equivalent, from the spec's own spend (Proposition 2)
        approx = s.spec.measure().spend.to_approx_dp(s.view.delta)
        guarantee += f", i.e. (ε = {approx.epsilon:.3g}, δ = {s.view.delta:.0e})"
    amounts, symbol = [share * s.spec.budget for share in s.spec.split], notion.symbol
    void = guarantee_void(s, not_private)
    if void:  # the mechanism's spend is not a guarantee of what is shown
        spent = "would spend" if s.teaching else "spent"
        guarantee = f"none: not private ({void}). The mechanism {spent} {guarantee}"
    words = {
        "Outcome": outcome(s, upload),
        "Method": method.label[:1].upper() + method.label[1:] + f" ({label(s, 'loss').lower()})",
        "Privacy guarantee": guarantee,
        "Budget split": " / ".join(f"{symbol} {v:.3g}" for v in amounts)
        + " for "
        + " / ".join(method.step_label(step).removeprefix("the ") for step in method.steps),
        "Confidence level": f"{100 * s.level:g}%",
        "Rows": f"{n:,}",
        "Features": f"{d - 1} and a constant",
        "Regularisation c": f"{s.spec.c:g}",
        "Intervals for": describe_estimand(s.shown_estimand),
        "Randomness": "fresh and secret (a private release)"
        if not s.teaching
        else f"teaching mode, public seed {s.data.seed} (not a private release)",
        "Not private": void or "nothing: every number shown is private",
    }
    ranges = parameter_ranges(s.spec.loss)
    for name, value in loss_params(s.spec.loss).items():
        words[ranges[name].label] = f"{value:g}"
    if s.data.dataset != "synthetic":
        words["Feature scaling"] = SCALINGS[s.data.scaling]
    return words


def odds_ratios(
    table: pd.DataFrame,
    s: AppState,
    not_private: str | None,
    stored=None,
    upload: dict | None = None,
    estimand: str = "θ",
    c: float | None = None,
) -> pd.DataFrame | None:
    """The odds ratios of a logistic release (None when there are none to state), drawn as a table with
    a sentence per feature, or a note saying why there are none; ``not_private`` as for
    :func:`settings_in_words`, ``upload`` as for :func:`outcome`; ``estimand`` the symbol of what the
    intervals are for ("θ" or "θ₀(c)", fitted at ``c``). A stored release states the public changes it
    recorded when it was made (the same in any session), else those of the settings' data."""
    if not getattr(s.spec.loss, "odds_ratios", False):
        model = models().get(s.spec.loss.name, s.spec.loss.name)
        st.caption(f"Odds ratios belong to logistic regression: the {model}'s coefficients have no odds reading.")
        return None
    recorded = (stored.spec.get("odds_changes") if stored is not None else None) or None
    changes = {k: Change(**v) for k, v in recorded.items()} if recorded else public_changes(s)
    if changes is None:
        if s.data.dataset == "synthetic":
            st.caption("The synthetic features have no public units, so no odds ratios are stated: coefficients only.")
        else:
            st.info(
                "Odds ratios need the feature scaling *One public divisor* (sidebar, Data): with each row "
                "scaled to length 1, a feature's effect depends on the row's other values. Choose it before "
                "you release: every new release spends privacy budget."
            )
        return None
    odds = odds_ratio_table(table, changes)
    if not len(odds):
        return None
    st.subheader(escape_markdown(f"Odds of {outcome(s, upload)}"))  # an upload names the outcome
    void = guarantee_void(s, not_private)
    public_range = not (not_private and "bound" in not_private.lower())  # an upload's bounds read from its data
    bounds = (
        "its documented public bounds, not the data's"
        if s.data.dataset != "upload"
        else "the bounds chosen at upload"
        if public_range
        else "the data's own minimum and maximum, which are not public"
    )
    target = (
        "the coefficients without penalty, θ"
        if estimand == "θ"
        else f"the model fitted with its penalty (θ₀(c){'' if c is None else f', c = {c:.3g}'}), whose coefficients "
        "the penalty makes smaller as a whole: not those of a model without penalty"
    )
    st.caption(
        f"Odds ratios of {target}. Each compares the two ends of a feature's range ({bounds}), the other features "
        "fixed; a category is compared with not being in it. An odds ratio above 1 means higher odds. Its "
        "interval is the coefficient's, turned into odds: "
        + ("just as private." if void is None else "not private, as the coefficients are not.")
        + " The coefficient is the chart's, per unit of the feature scaled into the unit ball; the odds ratio is "
        "e to the power (coefficient × the change's width in those units), so it is not e^coefficient."
    )
    shown = readable_odds(odds, s.level, public_range).set_index(change_column(public_range))
    st.markdown(markdown_table(shown))
    return odds


def provenance(stored) -> dict[str, str]:
    """What a stored release's exports say about it: its id, its own spend and what the same data had
    spent before it was chosen (the honest guarantee when earlier releases guided the choice)."""
    if stored is None or not stored.charge:
        return {}
    from ui.privacy import ledger

    budget = ledger().status(stored.dataset).budget
    own, before = float(stored.charge["charge"]), float(stored.charge["spent_before"])
    return {
        "Release": stored.id,
        "Privacy spent by this release": budget.describe(own),
        "Spent on this data before it": f"{budget.describe(before)} (all together {budget.describe(before + own)}, of a budget of {budget.describe()})",
    }


def intervals_csv(
    table: pd.DataFrame,
    s: AppState,
    n: int,
    d: int,
    not_private: str | None,
    odds: pd.DataFrame | None = None,
    extra: dict[str, str] | None = None,
    upload: dict | None = None,
) -> str:
    """The intervals (and the odds ratios, if any) rounded to 4 significant digits, under a header of
    '# name: value' lines saying what produced them (method, guarantee, level, randomness, dpci's
    version, the date) and which of its columns are not private."""
    if odds is not None:
        table = table.merge(odds.drop(columns=["coefficient", "in_words"]), on="feature", how="left")
    header = {**settings_in_words(s, n, d, not_private, upload), **(extra or {})}
    void, columns = guarantee_void(s, not_private), not_private_columns(table, s, not_private)
    if void:
        header["Not private"] = f"every column ({', '.join(columns)}): {void}"
    elif columns:
        header["Not private"] = f"the columns {', '.join(columns)} (computed from the data without privacy)"
    else:
        header["Not private"] = "no column: every number is private"
    header["dpci version"] = dpci.__version__
    header["Made"] = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}"
    lines = [f"# {k}: {v}" for k, v in header.items()]
    body = csv_safe(rounded_table(table)).to_csv(index=False)  # a bound never printed as the value it excludes
    return "\n".join(lines) + "\n" + body
