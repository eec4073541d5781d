"""The Explorer's release controls: a release the ledger refuses (said before anything is drawn), the
one Release button of real data (under the preview: it spends, and its release is the one Present
shows), and, for a release already stored, the button that makes it the one Present shows (already
paid for: it costs nothing, so it is never named Release).
"""

from __future__ import annotations

import streamlit as st

from dpci.presentation.tables import escape_markdown
from ui import privacy, release_desk
from ui.app_state import AppState


def practice_notice(s: AppState, slot=None):
    """Say once, plainly, that the shipped data is public practice data (nothing on the page is refused),
    and, given the ``slot`` it returned once the release is drawn, whether a curator would refuse the
    release shown. Returns the slot (None for real data)."""
    if s.data.dataset not in privacy.SHIPPED:
        return None
    drawn = slot is not None  # the release is drawn: its mark can be said
    slot = slot if drawn else st.empty()
    text = (
        f"**Practice data.** {privacy.dataset_label(s)} is public: nobody in it is protected, so nothing here is "
        "refused. The practice ledger in the sidebar counts every release and marks any a curator would refuse."
    )
    mark = privacy.practice_mark(s) if drawn else ""
    if s.view.layout == "presentation":  # the projector keeps the chart alone: the mark only, when there is one
        if mark:
            slot.caption(f"**{mark}**")
        return slot
    slot.caption(f"{text} **{mark}**" if mark else text)
    return slot


def release_button(s: AppState, release) -> None:
    """The button that makes this stored release the one Present shows (free: it is already paid
    for), and what it says."""
    release_id = getattr(release, "release_id", None)
    c1, c2 = st.columns([1.4, 3], vertical_alignment="center")
    presented = release_desk.presented(s)
    if release_id is not None and presented == release_id:
        c1.button("Released", disabled=True, width="stretch", key="release_button")
        c2.caption(f"These are the intervals *Present* shows (release `{release_id[:8]}…`) and its downloads contain.")
        return
    if s.teaching:
        c1.button("Present this release", disabled=True, width="stretch", key="release_button")
        c2.caption("Teaching mode: a public seed made these numbers, so there is nothing private to release.")
        return
    c1.button(
        "Present this release",
        on_click=release_desk.present,
        args=(s, release_id),
        width="stretch",
        key="release_button",
        help="Makes this the one release the Present page shows and its downloads contain. It is already on the "
        "privacy ledger: presenting it costs nothing more.",
    )
    status = privacy.status(s)
    looks = status.releases
    note = (
        f"{looks} private release{'s' * (looks != 1)} of {escape_markdown(status.label)} so far "
        f"({status.budget.describe(status.spent)}); what you publish carries that total if you chose among them. "
        "Tune on the stand-in (the sweep pages) and release once to keep it at one release."
    )
    if presented is not None:
        note = "Present shows an earlier release; press to present these instead. " + note
    c2.caption(note)


def preview_banner(s: AppState, data_key: str) -> None:
    """Say that the chart is a preview on a stand-in, and offer the release with its cost said first."""
    text, admitted = privacy.preview_cost(s)
    st.info(
        "**Preview: not your data.** These intervals come from a stand-in with your data's public facts only "
        "(its number of rows and its feature names): exploring, typing bounds and moving sliders cost nothing. "
        "Your data is touched only when you press *Release*."
    )
    c1, c2 = st.columns([1.4, 3], vertical_alignment="center")
    c1.button(
        "Release",
        on_click=release_desk.request,
        args=(s, data_key),
        disabled=not admitted,
        type="primary",
        width="stretch",
        key="release_on_data",
    )
    (c2.caption if admitted else c2.error)(escape_markdown(text))


def protection_control(s: AppState) -> None:
    """Whom an upload's guarantee protects: one row, or one person with up to k rows (group privacy),
    set by the uploader before the first release and fixed from then on."""
    try:
        ref = privacy.dataset_ref(s)
    except ValueError as err:  # an upload the ledger cannot key: the same people under two budgets
        st.error(escape_markdown(err))
        st.stop()
    status = privacy.ledger().status(ref.key)
    fixed = status.releases > 0
    k = st.number_input(
        "Rows one person may contribute",
        min_value=1,
        max_value=1000,
        value=status.group_size,
        step=1,
        key=f"group_size_{ref.key[:12]}",
        disabled=fixed,
        help="If one person can appear in several rows (visits, transactions), say how many at most: every "
        "release is then charged for the whole group (k·ε under pure DP, k²·ρ under zCDP), so the guarantee "
        "protects people, not rows. Fixed at the first release.",
    )
    if not fixed and int(k) != status.group_size:
        privacy.ledger().set_group_size(ref.key, int(k))
        st.rerun()
    st.caption(privacy.protects(status.group_size) + (" Fixed at the dataset's first release." if fixed else ""))
