"""What Present says to stakeholders: the outcome in words, the settings in words (not internal
names), and a CSV that carries its own provenance."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
import streamlit as st

import dpci
from dpci import methods as registry
from dpci.data import ADULT_SCHEMA
from dpci.losses import loss_params
from dpci.presentation.numbers import rounded_table
from dpci.presentation.odds import odds_ratio_table, readable_odds
from dpci.presentation.tables import csv_safe, escape_markdown, markdown_table
from dpci.recommend import describe_estimand
from ui.data import public_changes
from ui.settings import SCALINGS, Settings
from ui.upload import upload_not_private


def outcome(s: Settings) -> str:
    """What the model predicts, in words: "income >50K" (Adult), "label = yes" (an upload)."""
    if s.dataset == "adult":
        return f"{ADULT_SCHEMA.label} {ADULT_SCHEMA.positive_class}"
    if s.dataset == "upload":
        result = st.session_state.get("upload_result")
        if result is not None:
            return f"{result.schema.label} = {result.schema.positive_class}"
        return "the positive class of the upload"
    return "y = +1 (synthetic data)"


def settings_in_words(s: Settings, n: int, d: int, not_private: str | None) -> dict[str, str]:
    """The settings a reader of the report needs, named as a reader would name them."""
    method = registry.get(s.mech)
    if s.priv == "pure":
        guarantee = f"ε = {s.epsilon:g} (pure differential privacy)"
        amounts = [share * s.epsilon for share in s.split]
        symbol = "ε"
    else:
        approx = method.allocate(s.rho, s.split, "zcdp").spend.to_approx_dp(s.delta)
        guarantee = f"ρ = {s.rho:g} (zero-concentrated DP), i.e. (ε = {approx.epsilon:.3g}, δ = {s.delta:.0e})"
        amounts = [share * s.rho for share in s.split]
        symbol = "ρ"
    words = {
        "Outcome": outcome(s),
        "Method": method.label[:1].upper() + method.label[1:] + f" ({s.label('model').lower()})",
        "Privacy guarantee": guarantee,
        "Budget split": " / ".join(f"{symbol} {v:.3g}" for v in amounts)
        + " for "
        + " / ".join(method.step_label(step).removeprefix("the ") for step in method.steps),
        "Confidence level": f"{100 * s.level:g}%",
        "Rows": f"{n:,}",
        "Features": f"{d - 1} and a constant",
        "Regularisation c": f"{s.c:g}",
        "Intervals for": describe_estimand(s.shown_estimand),
        "Randomness": "fresh and secret (a private release)"
        if not s.teaching
        else f"teaching mode, public seed {s.seed} (not a private release)",
        "Not private": not_private or "nothing: every number shown is private",
    }
    for name, value in loss_params(s.loss).items():
        words["Huber width h" if name == "h" and s.model == "huber" else f"Loss parameter {name}"] = f"{value:g}"
    if s.dataset != "synthetic":
        words["Feature scaling"] = SCALINGS[s.scaling]
    return words


def odds_ratios(table: pd.DataFrame, s: Settings) -> pd.DataFrame | None:
    """The private odds ratios of a logistic release (None when there are none to state), drawn as
    a table with a sentence per feature, or a note saying why there are none."""
    if s.model != "logistic":
        st.caption("Odds ratios belong to logistic regression: the Huberized SVM's coefficients have no odds reading.")
        return None
    changes = public_changes(s)
    if changes is None:
        if s.dataset == "synthetic":
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
    st.subheader(escape_markdown(f"Odds of {outcome(s)}"))  # an upload names the outcome
    bounds = (
        "the bounds chosen at upload; some were taken from the data, so not private"
        if upload_not_private(s)
        else "its documented public bounds, not the data's"
    )
    st.caption(
        f"Each odds ratio compares the two ends of a feature's range ({bounds}), the other features "
        "fixed; a category is compared with not being in it. An odds ratio above 1 means higher odds. Its "
        "interval is the coefficient's, turned into odds: just as private."
    )
    st.markdown(markdown_table(readable_odds(odds, s.level).set_index("Change (public range)")))
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
    s: Settings,
    n: int,
    d: int,
    not_private: str | None,
    odds: pd.DataFrame | None = None,
    extra: dict[str, str] | None = None,
) -> str:
    """The intervals (and the odds ratios, if any) rounded to 4 significant digits, under a header of
    '# name: value' lines saying what produced them (method, guarantee, level, randomness, dpci's
    version, the date)."""
    if odds is not None:
        table = table.merge(odds.drop(columns=["coefficient", "in_words"]), on="feature", how="left")
    header = {**settings_in_words(s, n, d, not_private), **(extra or {})}
    header["dpci version"] = dpci.__version__
    header["Made"] = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}"
    lines = [f"# {k}: {v}" for k, v in header.items()]
    body = csv_safe(rounded_table(table)).to_csv(index=False)  # a bound never printed as the value it excludes
    return "\n".join(lines) + "\n" + body
