"""The panel that saves the settings as a file, loads one, and shows the release they describe as Python."""

from __future__ import annotations

import streamlit as st

from ui.app_state import AppState
from ui.settings import settings_json
from ui.state import load_settings_file


def _apply_settings_file():
    file = st.session_state.get("settings_file")
    if file is None:
        return
    try:
        changed = load_settings_file(file.getvalue())
    except ValueError as err:
        st.session_state["_settings_message"] = ("error", str(err))
        return
    note = f" Changed to values the app can use: {'; '.join(changed)}." if changed else ""
    st.session_state["_settings_message"] = ("success", f"Loaded the settings of {file.name}.{note}")


def settings_file_panel(settings: AppState):
    """Download the settings as JSON, or load a file downloaded earlier (a teacher's prepared set-up)."""
    panel = st.expander("Save or load these settings", key="settings_panel", on_change="rerun")
    if not panel.open:  # drawn only when opened: the page loads faster
        return
    c1, c2 = panel.columns(2)
    c1.download_button(
        "Download these settings (JSON)", settings_json(settings), "dpci-settings.json", mime="application/json"
    )
    c2.file_uploader("Load settings (JSON)", type=["json"], key="settings_file", on_change=_apply_settings_file)
    if st.session_state.get("settings_file") is None:  # the message lasts as long as its file is shown
        st.session_state.pop("_settings_message", None)
    if "_settings_message" in st.session_state:
        kind, text = st.session_state["_settings_message"]
        (c2.success if kind == "success" else c2.error)(text)
    panel.caption(
        "The release these settings describe, as Python (the copy button is at its top right; `X, y` are your "
        "rows, in the unit ball, with labels -1/+1). With fresh randomness it is a new release, paid on the "
        "ledger of the `with` block you run it in."
    )
    panel.code(settings.spec.to_python(), "python")
