"""Explorer: private confidence intervals beside variability and non-private intervals.

Its parts live in ui/explorer.py; this page runs them in order. A session's first run draws the chart
before the settings (ui.state.first_paint) and the recommended c after the chart.
"""

import time

import streamlit as st

import ui.background
import ui.choice_of_c
import ui.data
import ui.explorer
import ui.layout
import ui.privacy
import ui.release_desk
import ui.release_panel
import ui.settings_file
import ui.shared
import ui.sidebar
import ui.sidebar_ledger
import ui.state
import ui.upload

ui.shared.open_link()  # a release=<id> in the address: that stored release, its settings the session's
first_paint = ui.state.first_paint() and ui.shared.SHARED not in st.session_state
halt = ui.explorer.start(first_paint)
settings = ui.state.current_settings() if first_paint else ui.sidebar.sidebar(defer_advice=True)
ui.state.share_settings(settings)
shared = ui.shared.active(settings)  # None once a setting its noise depends on has moved
ui.layout.explorer_header(settings)  # title, "what am I looking at?" and the presentation toggle, one row
ui.shared.say_note(settings)
practice = ui.release_panel.practice_notice(settings)

if settings.data.dataset == "upload" and shared is None:
    if not ui.upload.upload_panel():
        halt()  # the upload panel says what is missing or wrong
    ui.release_panel.protection_control(settings)

started = time.perf_counter()
if shared is not None and not ui.shared.public_data(shared):
    shown = ui.release_desk.from_link(settings, shared)  # real data: the stored numbers alone, no rows read
else:
    try:
        X, y, names, truth = ui.data.load_data(settings)
    except ValueError as err:
        ui.data.explain_error(err)
        halt()
    if shared is not None:  # public practice data: the stored release beside the non-private fit
        shown = ui.release_desk.from_link(settings, shared, (X, y, names, truth))
    else:
        ui.explorer.check_c(settings, X, halt)
        shown = ui.release_desk.for_explorer(settings, X, y, names, truth, halt)
ui.shared.mark_address(None if shown.preview else shown.release)
if shared is not None:
    ui.shared.say_shared(shared)
ui.sidebar_ledger.draw_odometer(settings)  # the sidebar's ledger, now that an upload (if any) has been read
if practice is not None:
    ui.release_panel.practice_notice(settings, practice)  # with the mark of the release now shown
if shown.preview:
    ui.release_panel.preview_banner(settings, ui.data.dataset_key(settings))
st.session_state["last_release_seconds"] = time.perf_counter() - started

ui.explorer.results(settings, shown, first_paint)
ui.privacy.write_visitor_cookie()  # at once, not only with the sidebar: a quick reload keeps the visitor
ui.state.chart_sent()
if first_paint:
    ui.background.warm_workers()  # while the browser draws the chart, before the bootstrap starts

if settings.view.layout == "presentation" or first_paint:
    # A projector: the chart and its caption only. A first paint: the chart alone, the rest of the page
    # with the settings at the first tick (bench: the first chart 5.5 s instead of 6.8 s, done no later).
    ui.choice_of_c.draw_deferred_recommendation()
    st.stop()
ui.explorer.spend_metrics(settings, shown)
if not shown.preview and shared is None:
    ui.release_panel.release_button(settings, shown.release)
ui.explorer.c_notes(settings, shown)
ui.explorer.step_ledger(settings, shown)
release_id = None if shown.preview else getattr(shown.release, "release_id", None)
st.caption(
    f"{'Stored release read' if shared else 'Private release computed'} in "
    f"{1000 * st.session_state['last_release_seconds']:.0f} ms. " + ui.shared.caption(release_id, settings.teaching)
)
ui.settings_file.settings_file_panel(settings)
ui.choice_of_c.draw_deferred_recommendation()
