"""The Explorer's parts (pages/0_Explorer.py runs them in order): the checks before a release, the
release or its free preview, the chart's fragment and what the release spent."""

from __future__ import annotations

import streamlit as st

import ui.background
import ui.choice_of_c
import ui.data
import ui.estimand_shown
import ui.layout
import ui.privacy
import ui.release_panel
import ui.shared
import ui.sidebar
import ui.sidebar_ledger
import ui.state
import ui.upload
from dpci.presentation.figures import forest_plot
from dpci.presentation.numbers import rounded_table
from dpci.presentation.tables import (
    escape_markdown,
    interval_table,
    markdown_table,
    narrower_than_variability,
    release_too_wide,
)
from ui.app_state import AppState
from ui.release_desk import LAST_FOREST, Shown, last_chart
from ui.settings import fmt_c, label

RUN = "_explorer_run"  # session_state: this full run's mark; its fragment checks it (see results)


def start(first_paint: bool):
    """A new full run: its mark, and the sidebar's slots of the last run forgotten. Returns the
    function that stops the run (a first paint that cannot draw the chart draws the settings first)."""
    st.session_state[RUN] = object()
    st.session_state.pop(ui.sidebar_ledger.ODOMETER_SLOT, None)  # the sidebar of this run makes a new one
    st.session_state.pop(ui.choice_of_c.DEFERRED, None)  # so does the recommended c's place (stale now)
    waiting = ui.state.waiting_sidebar() if first_paint else None

    def halt():
        if waiting is not None:
            waiting.empty()
            ui.sidebar.sidebar()
        ui.choice_of_c.draw_deferred_recommendation()
        st.stop()

    return halt


def _use_c_button(label: str, c: float, primary: bool = False) -> None:
    st.button(label, on_click=ui.state.set_setting, args=("c", c), type="primary" if primary else "secondary")


def check_c(s: AppState, X, halt) -> None:
    """Stop with the reason when the method cannot run at this c (offering a c that can); warn when it
    can but advises against it, and when the method leaves the privacy noise out."""
    problem = ui.data.c_problem(s, len(X))
    if problem is not None:
        message, suggestion = problem
        recommended = ui.choice_of_c.recommended_slider_c(s, *X.shape)  # from public facts: costs no privacy
        st.error(message)
        if recommended is not None:
            _use_c_button(f"Use the recommended c ({fmt_c(recommended)})", recommended, primary=True)
        elif suggestion is not None:
            _use_c_button(f"Use c = {fmt_c(suggestion)}", suggestion, primary=True)
        last_chart("until c is valid again")
        halt()
    caution = ui.data.c_caution(s, len(X))
    if caution is not None:
        st.warning(caution[0])
        recommended = ui.choice_of_c.recommended_slider_c(s, *X.shape)
        use = recommended if recommended is not None else caution[1]
        if use is not None:
            _use_c_button(f"Use the recommended c = {fmt_c(use)}", use)
    if not ui.data.chosen_method(s).accounts_for_privacy_noise:
        st.warning(
            "The **naive interval** leaves the privacy noise out: it uses the private coefficients with a textbook "
            "standard error, as an analyst would by default. Compare it with the variability interval: where "
            "privacy noise matters it is too short, and it misses the truth more often than its level says."
        )


def _chart(s: AppState, shown: Shown, table, stale: bool, symbol: str):
    title = f"{100 * s.level:g}% intervals for {symbol}: {ui.data.chosen_method(s).label}, {label(s, 'privacy')}"
    if shown.preview:
        title = "Preview on a stand-in, not your data: " + title
    row_height, font_size = ui.layout.CHART[s.view.layout]
    return ui.background.memo_chart(  # a tick between milestones draws the same chart: built once
        forest_plot,
        table,
        title=title,
        level=s.level,
        stale=("variability",) if stale else (),
        truth_name="truth θ (no penalty)" if symbol == "θ" else "truth θ₀(c)",
        row_height=row_height,
        font_size=font_size,
    )


def _variability_job(s: AppState, shown: Shown):
    """The bootstrap's job: the private interval is drawn at once, and the bootstrap starts at the next
    tick, once the browser has the chart, so it never delays the first picture."""
    job = ui.background.existing_variability_job(s, shown.source)
    if job is None:
        key = ui.background.variability_key(s, shown.source)
        drawn = st.session_state.get("_vi_first_draw") == key
        st.session_state["_vi_first_draw"] = key
        job = ui.background.variability_job(s, shown.X, shown.y, shown.source) if drawn else ui.background.NO_JOB
    return job


def _progress(job, state, table) -> None:
    if job.error:
        st.warning(f"Variability intervals stopped: {escape_markdown(job.error)}")
    elif state is None:
        st.progress(0.0, text="Variability interval: starting the bootstrap…")
    else:
        done = 1.0 if state.finished else state.done / state.total
        st.progress(done, text=ui.background.variability_progress(job, state))
        narrower = narrower_than_variability(table) if state.finished else []
        if narrower:
            listed = escape_markdown(", ".join(narrower[:4])) + (", …" if len(narrower) > 4 else "")
            st.info(
                f"The private interval is narrower than the variability interval for {len(narrower)} of "
                f"{len(table)} coefficients ({listed}). "
                "It should be wider: here it seems to claim less uncertainty than the private estimate has, "
                "which suggests it misses the truth more often than its level says. This happens with few "
                "rows or a small budget, when the noisy Hessian and covariance are poor; the *Coverage and "
                "sample size* page measures it."
            )


def _numbers(table) -> None:
    numbers = st.expander("The numbers", key="explorer_numbers", on_change="rerun")
    if numbers.open:  # drawn only when opened: an interactive grid is slow to load in the browser
        shown = rounded_table(table).set_index("feature").rename(columns=lambda c: c.replace("_", " "))
        numbers.dataframe(shown, width="stretch")  # rounded as the CSV and the report are


def _draw(s: AppState, shown: Shown, vi, stale: bool):
    """The chart of the release (with the comparisons given), its caption and its warnings; returns the table."""
    release, bias, symbol, theta_said = ui.estimand_shown.shown_for_table(s, shown.release)
    truth = None if theta_said else shown.truth  # the synthetic truth is theta's, and theta is not shown
    nonprivate = shown.nonprivate
    if shown.X is not None and not shown.preview:  # the data's non-private fit, of the estimand the chart is for
        nonprivate = ui.data.cached_nonprivate(ui.data.dataset_key(s), s, symbol)
    table = interval_table(shown.names, release, nonprivate, vi, truth, s.spec.alpha, bias=bias)
    chart = st.session_state[LAST_FOREST] = _chart(s, shown, table, stale, symbol)
    st.plotly_chart(chart, width="stretch", key="forest", config={"displaylogo": False})
    st.caption(ui.estimand_shown.estimand_caption(s, bias, theta_said))
    for caveat in getattr(shown.release, "caveats", ()):  # the method's own word on this release's coverage
        st.warning(escape_markdown(caveat))
    if wide := release_too_wide(table):
        st.warning(wide)
    return table


def results(s: AppState, shown: Shown, first_paint: bool) -> None:
    """The chart, its caption and the bootstrap's progress, in a fragment that ticks while it runs."""
    if shown.X is None:  # a shared release of real data: its stored numbers only, no data to compare with
        _numbers(_draw(s, shown, None, False))
        st.caption(
            "The non-private and variability intervals need the data, which a shared link never reads: "
            "these are the release's private intervals only."
        )
        return
    run, run_settings = st.session_state[RUN], ui.state.current_settings()
    previous = ui.background.existing_variability_job(s, shown.source)

    @st.fragment(run_every=ui.background.poll_interval(previous, first=previous is None, first_paint=first_paint))
    def fragment():
        if st.session_state.get(RUN) is not run or ui.state.current_settings() != run_settings:
            # A tick left over from an earlier full run (a later run stopped before drawing it): drawing
            # would put a stale chart in that page. Or a setting changed with the tick: the page follows.
            st.rerun(scope="app")
        job = _variability_job(s, shown)
        ui.state.controls_follow()  # after a first paint, the tick that started the job brings the whole page
        state = ui.background.tick_state(job)
        where = ui.background.estimand_place(s, shown.source)
        vi, stale = ui.background.variability_or_last(state, s.spec.alpha, shown.names, where)
        table = _draw(s, shown, vi, stale)
        _progress(job, state, table)
        _numbers(table)
        if job.done and st.session_state.get("_vi_done_drawn") != job.key:
            st.session_state["_vi_done_drawn"] = job.key
            st.rerun()  # one full rerun so the fragment stops polling

    fragment()


def spend_metrics(s: AppState, shown: Shown) -> None:
    """What the release spent (or would, for a preview) and its (ε, δ) equivalent, beside n and d."""
    spend = shown.release.spend
    spent = "if released" if shown.preview else "spent"  # a preview spends nothing
    cols = st.columns(4)
    if s.teaching:  # a public seed: nothing is private, so no spend and no guarantee is shown as one
        cols[0].metric(  # a short value: a quarter of the page cut "teaching mode: not private" to "…not p…"
            "Teaching mode",
            "not private",
            help="A public seed made these numbers: anyone can recompute the noise, so they carry no privacy "
            "guarantee and spend nothing. Turn teaching mode off in the sidebar for a private release.",
        )
        cols[1].metric("Guarantee", "none", help="A public seed: anyone can recompute the noise.")
    else:
        n = s.notion
        help_ = f"The privacy spent: {n.label}, composed over the method's steps."
        cols[0].metric(f"{n.symbol} {spent}", f"{n.amount(spend):.3g}", help=help_)
        if ui.upload.upload_not_private(s):  # values read from the data: charged, yet no guarantee holds
            cols[1].metric(
                "Guarantee",
                "none",
                help="Bounds, categories or labels were read from the data (see the Not private box): the noise "
                "was drawn, but no (ε, δ) guarantee holds for these numbers.",
            )
        elif n.needs_delta:
            cols[1].metric(
                f"ε for δ = {s.view.delta:.0e}",
                f"{spend.to_approx_dp(s.view.delta).epsilon:.3g}",
                help=f"The (ε, δ)-DP this {n.label} release implies (Proposition 2 of the paper); δ is set in "
                "the sidebar.",
            )
        else:
            cols[1].metric("As (ε, δ)-DP", f"({spend.epsilon:.3g}, 0)", help="Pure ε-DP is (ε, δ)-DP with δ = 0.")
    cols[2].metric("Rows n", f"{shown.release.n:,}")
    cols[3].metric("Coefficients", f"{len(shown.release.theta)}", help="d features plus the constant.")


def c_notes(s: AppState, shown: Shown) -> None:
    """The c the method chose itself, or the bound objective perturbation needs c above."""
    method = ui.data.chosen_method(s)
    if shown.release.c != s.spec.c:
        st.caption(
            f"{method.label[:1].upper() + method.label[1:]} chooses its own regularisation, c = "
            f"{shown.release.c:.3g}, and its interval targets θ₀ at that c: the sidebar's c is not used."
        )
    bound = ui.data.c_bound(s, shown.release.n)
    if bound is not None:
        st.caption(
            f"Objective perturbation needs c > {bound:.3g} here (for n = {shown.release.n:,} and this budget: a "
            f"smaller penalty would leave its noise too little of the budget); c = {fmt_c(s.spec.c)} is valid."
        )


def step_ledger(s: AppState, shown: Shown) -> None:
    """What each step of the method spent (or would), as a table in the notion's unit."""
    if s.teaching:
        st.subheader("What a private release of these settings would spend, step by step")
        st.caption("Teaching mode: not private. These numbers were drawn from a public seed and spent nothing.")
    else:
        st.subheader("What a release would spend, step by step" if shown.preview else "Privacy spent, step by step")
    spend, method = shown.release.spend, ui.data.chosen_method(s)  # each step named as the method names it
    steps = {step: f"φ{i + 1}: {method.step_label(step).removeprefix('the ')}" for i, step in enumerate(method.steps)}
    ledger = spend.to_frame().replace({"step": steps}).set_index("step")
    unit, symbol = s.notion.unit, s.notion.symbol
    columns = {"share": "share of the budget", unit: f"{symbol} spent"}
    st.markdown(markdown_table(ledger[["share", unit]].rename(columns=columns)))
    if s.notion.needs_delta and spend.steps[0].epsilon is not None:
        st.caption(
            f"{method.label[:1].upper() + method.label[1:]} is a pure-DP mechanism: φ1 runs it at "
            f"ε = {spend.steps[0].epsilon:.4g}, which costs ρ = ε²/2 = {spend.steps[0].rho:.4g}: "
            "an ε-DP step is also ε²/2-zCDP."
        )
