"""The Budget for a target width page's words and its two steps before a search: the search's spec and,
on the real data, the ledger's admission at the most the searches can spend (docs/privacy-ledger.md)."""

from __future__ import annotations

import streamlit as st

import ui.data
import ui.privacy
from dpci import ReleaseSpec
from dpci.accuracy_first import search_charge, searchable_methods
from dpci.accuracy_first.baselines import summed_spend
from dpci.presentation.tables import escape_markdown
from ui.app_state import AppState

INTRO = (
    "Start from the accuracy you need: *the interval for this coefficient must be no wider than 0.3*. The "
    "search releases at a tiny budget, checks the interval's width, and if it is too wide **reduces the noise "
    "of the same release** and checks again, up to the largest budget you allow. Each noisier release is a "
    "randomised copy of the next, less noisy one, so the privacy spent is that of the **last step reached** "
    "(ex-post privacy), not the sum of all the looks; and the width is computed from private quantities only, "
    "so checking it costs nothing. On the real data the privacy ledger admits a search before it runs, at the "
    "most it can spend (an ex-post loss does not simply add up with other releases). Doubling (fresh releases "
    "at ε, 2ε, 4ε, …) pays the sum; a fixed budget chosen from the stand-in pays once but may miss the target. "
    "The intervals are for θ₀(c), the coefficients of the model fitted with the sidebar's penalty c."
)
RUNS_OUTPUT_PERTURBATION = (
    "Accuracy first runs output perturbation whatever the sidebar's method: its noise is added to a fixed "
    "quantity, which noise reduction needs (objective perturbation's is not; see Accuracy first in the "
    "documentation). The sidebar's privacy notion, split, c and level apply."
)


def search_spec(s: AppState, most: float) -> ReleaseSpec:
    """The search's spec: a noise-reducible method's (output perturbation's), ``most`` as its budget, the
    sidebar's notion, split, loss, c and level; or the reason there is none, drawn, and the page stopped."""
    try:
        return ReleaseSpec(
            searchable_methods()[0], s.spec.privacy, most, s.spec.split, s.spec.loss, s.spec.c, s.spec.alpha, 2_000
        )
    except ValueError as err:
        st.error(str(err))
        st.stop()


def admitted(s: AppState, X, y, spec: ReleaseSpec, target, coefs, strategies) -> bool:
    """On the real data: whether the ledger admits the searches at the most each can spend, said first
    (what each would be charged, and what remains or why not)."""
    symbol = s.notion.symbol
    try:
        charges = [search_charge(X, y, spec, target, coefs, strategy=v) for v in strategies]
        preview = ui.privacy.ledger().preview(ui.privacy.dataset_ref(s).key, summed_spend(charges))
    except ValueError as err:
        ui.data.explain_error(err)
        st.stop()
    parts = ", ".join(f"{v.replace('_', ' ')} {symbol} = {s.notion.amount(c):.3g}" for v, c in zip(strategies, charges))
    text = f"On the real data each search is paid for before it runs, at the most it can spend ({parts}). " + (
        preview.describe("Pressing the button") if preview.admitted else preview.reason
    )
    if preview.admitted:
        st.info(text)
    else:
        st.error(escape_markdown(text))
    return preview.admitted
