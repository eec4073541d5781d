"""The Explorer's first screen: one row of title, "what am I looking at?" and the presentation toggle,
so the chart with every coefficient is on the first screen of a 1280 x 720 projector."""

from __future__ import annotations

import streamlit as st

from ui.app_state import AppState
from ui.state import set_setting

EXPLANATION = (
    "A model trained with **differential privacy** has two sources of noise: the sample (sampling noise) and "
    "the privacy mechanism (privacy noise). The **private interval** (orange) accounts for both and is itself "
    "private. The **variability interval** (blue) is what the estimate really does over resampled data: a private "
    "interval should be a bit wider. The **non-private interval** (green) ignores privacy. The blue and green "
    "intervals are computed from the data without any privacy: they are for judging the method, **not for "
    "publishing**."
)
#: What the chart shows, in one line under the title.
ONE_LINE = (
    "**Private confidence intervals** (orange) for each coefficient, beside the sampling noise alone (blue) "
    "and the non-private interval (green)."
)
# Streamlit leaves 6rem above a page's first element; a projector's first screen needs it for the chart. Its header
# bar (3.75rem, opaque) lies over the top of the page: the first row starts below it, not under it.
COMPACT = (
    "<style>[data-testid='stMainBlockContainer']{padding-top:3.75rem}"
    "[data-testid='stMainBlockContainer'] h1{font-size:1.9rem;padding:0.25rem 0}</style>"
)
# The presentation view folds the sidebar at once: Streamlit cannot collapse it after the page has
# loaded, so it is hidden (with its reopen arrow) while the view is on; the toggle in the main area,
# beside the title, is the way back.
NO_SIDEBAR = (
    "<style>[data-testid='stSidebar'],[data-testid='stSidebarCollapsedControl'],"
    "[data-testid='stExpandSidebarButton']{display:none!important}</style>"
)
#: The forest plot's size per view: (pixels per coefficient, font size or None for the shared look).
CHART = {"standard": (36, None), "presentation": (40, 17)}  # 11 coefficients and the legend within 720 px


def explorer_header(s: AppState) -> None:
    """Title, the explanation one click away, and the presentation toggle (kept in the address)."""
    st.html(COMPACT)
    if s.view.layout == "presentation":
        st.html(NO_SIDEBAR)
    # one row that wraps: where the three do not fit (a 1024-px projector), the button and the toggle go under
    # the title whole, instead of columns cutting them to "What am I looki…" and "Pr…"
    row = st.container(horizontal=True, vertical_alignment="center", gap="medium")
    row.markdown("# dpci", width="stretch")
    controls = row.container(horizontal=True, vertical_alignment="center", gap="medium", width="content")
    with controls.popover("What am I looking at?", width="content"):
        st.markdown(EXPLANATION)
    controls.toggle(
        "Presentation",
        value=s.view.layout == "presentation",
        key="explorer_presentation",
        on_change=_switch_view,
        help="Large type and the chart alone, for a projector: the sidebar is hidden until you switch this off. "
        "Kept in the address.",
    )
    if s.view.layout != "presentation":  # the projector keeps the chart alone
        st.caption(ONE_LINE)


def _switch_view() -> None:
    set_setting("view", "presentation" if st.session_state["explorer_presentation"] else "standard")
