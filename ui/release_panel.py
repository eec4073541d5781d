"""The Explorer's release controls: confirming a release over the cap, and the one release that
Present shows (made with the Release button; it is already on the odometer, so it costs nothing more).
"""

from __future__ import annotations

import streamlit as st

from dpci.presentation.tables import escape_markdown
from ui import privacy
from ui.data import OverCap
from ui.settings import Settings


def ask_to_confirm(err: OverCap) -> None:
    """Say why a new release waits for the user (the cap), with a button to spend it anyway."""
    st.warning(str(err))
    st.button("Spend it anyway", on_click=privacy.confirm, args=(err.key,), type="primary")


def release_button(s: Settings, data_key: str) -> None:
    """The Release button and what has been released so far for this dataset."""
    key = privacy.release_key(s, data_key)
    made = privacy.released(s)
    c1, c2 = st.columns([1.4, 3], vertical_alignment="center")
    if made is not None and made[1] == key:
        c1.button("Released", disabled=True, width="stretch", key="release_button")
        c2.caption("These are the intervals the *Present* page shows and its downloads contain.")
        return
    c1.button(
        "Release" + (" (teaching)" if s.teaching else ""),
        on_click=privacy.release,
        args=(s, key),
        width="stretch",
        key="release_button",
        help="Makes this the one release the Present page shows and its downloads contain. It is already "
        "counted by the odometer: releasing it costs nothing more.",
    )
    meter = privacy.odometer(s)
    looks = meter.total.releases
    note = (
        "Teaching mode: a public seed made these numbers, so a release is a demonstration, not private."
        if s.teaching
        else f"You have looked at {looks} private release{'s' * (looks != 1)} of {escape_markdown(privacy.dataset_label(s))} in "
        "this session; what you publish carries the odometer's total, since you chose among them. Tune on the "
        "stand-in (the sweep pages) and release once to keep the total at one release."
    )
    if made is not None:
        note = "Present shows an earlier release; press to release these instead. " + note
    c2.caption(note)
