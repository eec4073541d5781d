"""The Repeat a release page's words and its seed: a new public seed at each press, or the one typed (kept
across pages and in the address), so a run can be repeated exactly."""

from __future__ import annotations

import streamlit as st

from dpci.experiments.repeat import SEEDS, fresh_seed

INTRO = (
    "A 95% confidence interval is a *procedure*: repeated on new data, it catches the truth about 95% of the "
    "time. Here the truth is known (synthetic data from a logistic model). Each press of **Repeat** draws a "
    "new public seed (shown with the result), and from it, for every repetition, **a new sample and new "
    "privacy noise**; each repetition then checks whether the private interval (left) and the non-private "
    "interval (right) contain the truth. Watch the misses (black) pile up, and press again: a new seed, a new "
    "picture. To repeat a run exactly, type its seed in the box (or choose the seed in the box). Change ε in "
    "the sidebar and run again: the earlier run stays in grey for comparison."
)

SEED = "repeat_seed"  # the seed box; Streamlit drops a widget's state on another page, so it is also kept:
KEPT_SEED = "_repeat_seed"
CHOICE = "repeat_seed_choice"
NEW, SAME = "new", "same"
SEED_CHOICES = {NEW: "a new seed at each press", SAME: "the seed in the box (repeats a run exactly)"}


def seed_for_the_press():
    """The Repeat button's callback, before the page reruns: a new public seed, unless the seed in the
    box is asked for (and there is one)."""
    if st.session_state.get(CHOICE) != SAME or st.session_state.get(SEED) is None:
        st.session_state[SEED] = fresh_seed()
    st.session_state[KEPT_SEED] = st.session_state[SEED]


def seed_typed():
    """A seed typed in the box is the one the next press uses."""
    st.session_state[KEPT_SEED] = st.session_state[SEED]
    st.session_state["kept_" + CHOICE] = SAME


def seed_from_address():
    try:
        seed = int(st.query_params.get(SEED, ""))
    except ValueError:
        return None
    return seed if 0 <= seed < SEEDS else None
