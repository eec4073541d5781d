"""dpci: the app's frame. Run with ``streamlit run app.py``.

The frame sets the page, applies a budget typed in this interaction and runs the page chosen in the
navigation (ui.navigation.PAGES); each page draws the shared settings sidebar itself.
"""

import streamlit as st

import ui.navigation
import ui.state

# An emoji icon: a Material one is fetched from fonts.gstatic.com, which fails offline.
st.set_page_config(
    page_title="dpci: private confidence intervals",
    page_icon="🔒",
    layout="wide",
    # the presentation view opens with the sidebar folded: the chart takes the projector's width
    initial_sidebar_state="collapsed" if st.query_params.get("view") == "presentation" else "auto",
)
ui.state.apply_typed_setting()  # a budget typed in this interaction, unless its slider moved too

pages = [st.Page(p.script, title=p.title, icon=p.icon, default=p.default) for p in ui.navigation.PAGES]
st.session_state["explorer_page"] = pages[0]  # lets other pages send the user back here
st.navigation(pages).run()
