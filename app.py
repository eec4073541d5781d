"""dpci Explorer: private confidence intervals beside variability and non-private intervals.

Run with ``streamlit run app.py``. Computation lives in dpci; this page reads widgets,
calls dpci and draws.
"""

import time

import streamlit as st

import ui
import ui.layout
import ui.navigation
from dpci.presentation.figures import forest_plot
from dpci.presentation.numbers import rounded_table
from dpci.presentation.tables import interval_table, markdown_table, narrower_than_variability, release_too_wide

# An emoji icon: a Material one is fetched from fonts.gstatic.com, which fails offline.
st.set_page_config(
    page_title="dpci: private confidence intervals",
    page_icon="🔒",
    layout="wide",
    # the presentation view opens with the sidebar folded: the chart takes the projector's width
    initial_sidebar_state="collapsed" if st.query_params.get("view") == "presentation" else "auto",
)
ui.apply_typed_setting()  # a budget typed in this interaction, unless its slider moved too


def last_chart(until: str):
    """The picture stays: the last chart drawn, faded, while the current settings cannot be drawn."""
    last = st.session_state.get("_last_forest")
    if last is not None:
        st.caption(f"The chart of the last settings drawn, {until}:")
        st.plotly_chart(last.update_layout(template="plotly_white").update_traces(opacity=0.35), width="stretch")


def explorer():
    run = st.session_state["_explorer_run"] = object()  # this full run; its fragment checks it (see results)
    st.session_state.pop(ui.ODOMETER_SLOT, None)  # the sidebar of this run makes a new one (not on a first paint)
    st.session_state.pop(ui.DEFERRED_ADVICE, None)  # so does the recommended c's place (an earlier run's is stale)
    first_paint = ui.first_paint()
    waiting = ui.waiting_sidebar() if first_paint else None
    # the recommended c (a search over c for each new setting) is drawn after the chart, in its place
    settings = ui.current_settings() if first_paint else ui.sidebar(defer_advice=True)
    ui.share_settings(settings)

    def halt():
        """Stop this run; a first paint that cannot draw the chart draws the settings now."""
        if first_paint:
            waiting.empty()
            ui.sidebar()
        ui.draw_deferred_recommendation()
        st.stop()

    ui.layout.explorer_header(settings)  # title, "what am I looking at?" and the presentation toggle, one row
    practice = ui.practice_notice(settings)

    if settings.dataset == "upload":
        if not ui.upload_panel():
            halt()  # the upload panel says what is missing or wrong
        ui.protection_control(settings)

    started = time.perf_counter()
    try:
        X, y, names, truth = ui.load_data(settings)
    except ValueError as err:
        ui.explain_error(err)
        halt()

    problem = ui.c_problem(settings, len(X))
    if problem is not None:
        message, suggestion = problem
        recommended = ui.recommended_slider_c(settings, *X.shape)  # from public facts: costs no privacy
        st.error(message)
        if recommended is not None or suggestion is not None:
            use = recommended if recommended is not None else suggestion
            st.button(
                f"Use the recommended c ({ui.fmt_c(use)})" if recommended is not None else f"Use c = {ui.fmt_c(use)}",
                on_click=ui.set_setting,
                args=("c", use),
                type="primary",
            )
        last_chart("until c is valid again")
        halt()
    caution = ui.c_caution(settings, len(X))
    if caution is not None:
        st.warning(caution[0])
        recommended = ui.recommended_slider_c(settings, *X.shape)
        use = recommended if recommended is not None else caution[1]
        if use is not None:
            st.button(f"Use the recommended c = {ui.fmt_c(use)}", on_click=ui.set_setting, args=("c", use))
    if not ui.chosen_method(settings).accounts_for_privacy_noise:
        st.warning(
            "The **naive interval** leaves the privacy noise out: it uses the private coefficients with a textbook "
            "standard error, as an analyst would by default. Compare it with the variability interval: where "
            "privacy noise matters it is too short, and it misses the truth more often than its level says."
        )

    key = ui.dataset_key(settings)
    # Real data (an upload): explore on a stand-in of its public facts, free, until the user releases.
    preview = (
        ui.privacy.needs_explicit_release(settings)
        and ui.privacy.stored(settings, key) is None
        and not ui.privacy.release_requested(settings, key)
    )
    source = "preview" if preview else "data"
    try:
        if preview:
            X, y, names = ui.preview_arrays(settings)
            truth = None
            release, nonprivate = ui.preview_release(key, settings), ui.preview_nonprivate(key, settings)
        else:
            release = ui.cached_release(key, settings)
            nonprivate = ui.cached_nonprivate(key, settings)
    except ui.Refused as err:
        ui.explain_refusal(err)
        last_chart("until you go back to settings already released, or ask for less budget")
        halt()
    except Exception as err:  # noqa: BLE001 - shown as a message, never a traceback
        ui.explain_error(err)
        halt()
    ui.draw_odometer(settings)  # the sidebar's ledger, now that an upload (if any) has been read
    if practice is not None:
        ui.practice_notice(settings, practice)  # with the mark of the release now shown
    if preview:
        ui.preview_banner(settings, key)
    st.session_state["last_release_seconds"] = time.perf_counter() - started

    previous = ui.existing_variability_job(settings, source)

    run_settings = ui.current_settings()  # what this run draws; a tick that finds other settings reruns the page

    @st.fragment(run_every=ui.poll_interval(previous, first=previous is None, first_paint=first_paint))
    def results():
        if st.session_state.get("_explorer_run") is not run or ui.current_settings() != run_settings:
            # A tick of this fragment left over from an earlier full run (a later run stopped before
            # drawing it, e.g. for an upload): drawing now would put a stale chart in that page. Or a
            # setting changed with the tick (a widget's value the page had not run): the page follows it.
            st.rerun(scope="app")
        job = ui.existing_variability_job(settings, source)
        if job is None:
            # The private interval is drawn at once; the bootstrap starts at the next tick, once the
            # browser has the chart, so it never delays the first picture.
            drawn = st.session_state.get("_vi_first_draw") == ui.variability_key(settings, source)
            st.session_state["_vi_first_draw"] = ui.variability_key(settings, source)
            job = ui.variability_job(settings, X, y, source) if drawn else ui.NO_JOB
        ui.controls_follow()  # after a first paint, the tick that started the job brings the whole page
        state = ui.tick_state(job)
        vi, stale = ui.variability_or_last(state, settings.alpha, names)
        bias = ui.estimand_bias(settings, release)
        table = interval_table(names, release, nonprivate, vi, truth, settings.alpha, bias=bias)
        title = (
            f"{100 * settings.level:g}% intervals for {ui.estimand_symbol(settings)}: "
            f"{ui.chosen_method(settings).label}, {settings.label('privacy')}"
        )
        if preview:
            title = "Preview on a stand-in, not your data: " + title
        row_height, font_size = ui.layout.CHART[settings.view]
        chart = ui.memo_chart(  # a tick between milestones draws the same chart: built once
            forest_plot,
            table,
            title=title,
            level=settings.level,
            stale=("variability",) if stale else (),
            truth_name="truth θ (no penalty)" if settings.shown_estimand == "unregularised" else "truth θ₀(c)",
            row_height=row_height,
            font_size=font_size,
        )
        st.session_state["_last_forest"] = chart
        st.plotly_chart(chart, width="stretch", key="forest", config={"displaylogo": False})
        st.caption(ui.estimand_caption(settings, bias))
        for caveat in getattr(release, "caveats", ()):  # the method's own word on this release's coverage
            st.warning(ui.escape_markdown(caveat))
        if wide := release_too_wide(table):
            st.warning(wide)
        if job.error:
            st.warning(f"Variability intervals stopped: {ui.escape_markdown(job.error)}")
        elif state is None:
            st.progress(0.0, text="Variability interval: starting the bootstrap…")
        else:
            st.progress(1.0 if state.finished else state.done / state.total, text=ui.variability_progress(job, state))
            narrower = narrower_than_variability(table) if state.finished else []
            if narrower:
                st.info(
                    f"The private interval is narrower than the variability interval for {len(narrower)} of "
                    f"{len(table)} coefficients ({ui.escape_markdown(', '.join(narrower[:4]))}{', …' if len(narrower) > 4 else ''}). "
                    "It should be wider: here it seems to claim less uncertainty than the private estimate has, "
                    "which suggests it misses the truth more often than its level says. This happens with few "
                    "rows or a small budget, when the noisy Hessian and covariance are poor; the *Coverage and "
                    "sample size* page measures it."
                )
        numbers = st.expander("The numbers", key="explorer_numbers", on_change="rerun")
        if numbers.open:  # drawn only when opened: an interactive grid is slow to load in the browser
            shown = rounded_table(table).set_index("feature").rename(columns=lambda c: c.replace("_", " "))
            numbers.dataframe(shown, width="stretch")  # rounded as the CSV and the report are
        if job.done and st.session_state.get("_vi_done_drawn") != job.key:
            st.session_state["_vi_done_drawn"] = job.key
            st.rerun()  # one full rerun so the fragment stops polling

    results()
    ui.privacy.write_visitor_cookie()  # at once, not only with the sidebar: a quick reload keeps the visitor
    ui.chart_sent()
    if first_paint:
        ui.warm_workers()  # while the browser draws the chart, before the bootstrap starts

    if settings.view == "presentation" or first_paint:
        # A projector: the chart and its caption only. A first paint: the chart alone, the rest of the page
        # with the settings at the first tick (bench: the first chart 5.5 s instead of 6.8 s, done no later).
        ui.draw_deferred_recommendation()
        return
    spend = release.spend
    spent = "if released" if preview else "spent"  # a preview spends nothing
    cols = st.columns(4)
    if settings.teaching:  # a public seed: nothing is private, so no spend and no guarantee is shown as one
        cols[0].metric(  # a short value: a quarter of the page cut "teaching mode: not private" to "…not p…"
            "Teaching mode",
            "not private",
            help="A public seed made these numbers: anyone can recompute the noise, so they carry no privacy "
            "guarantee and spend nothing. Turn teaching mode off in the sidebar for a private release.",
        )
        cols[1].metric("Guarantee", "none", help="A public seed: anyone can recompute the noise.")
    else:
        n = settings.notion
        cols[0].metric(
            f"{n.symbol} {spent}",
            f"{n.amount(spend):.3g}",
            help=f"The privacy spent: {n.label}, composed over the method's steps.",
        )
        if n.needs_delta:
            approx = spend.to_approx_dp(settings.delta)
            cols[1].metric(
                f"ε for δ = {settings.delta:.0e}",
                f"{approx.epsilon:.3g}",
                help=f"The (ε, δ)-DP this {n.label} release implies (Proposition 2 of the paper); δ is set in the sidebar.",
            )
        else:
            cols[1].metric("As (ε, δ)-DP", f"({spend.epsilon:.3g}, 0)", help="Pure ε-DP is (ε, δ)-DP with δ = 0.")
    cols[2].metric("Rows n", f"{len(X):,}")
    cols[3].metric("Coefficients", f"{X.shape[1]}", help="d features plus the constant.")
    if not preview:
        ui.release_button(settings, release)
    if release.c != settings.c:
        st.caption(
            f"{ui.chosen_method(settings).label[:1].upper() + ui.chosen_method(settings).label[1:]} chooses its own "
            f"regularisation, c = {release.c:.3g}, and its interval targets θ₀ at that c: the sidebar's c is not used."
        )
    bound = ui.c_bound(settings, len(X))
    if bound is not None:
        st.caption(
            f"Objective perturbation needs c > {bound:.3g} here (Algorithm 1, for n = {len(X):,} and this "
            f"budget); c = {ui.fmt_c(settings.c)} is valid."
        )

    if settings.teaching:
        st.subheader("What a private release of these settings would spend, step by step")
        st.caption("Teaching mode: not private. These numbers were drawn from a public seed and spent nothing.")
    else:
        st.subheader("What a release would spend, step by step" if preview else "Privacy spent, step by step")
    method = ui.chosen_method(settings)  # each step named as the method names it
    steps = {s: f"φ{i + 1}: {method.step_label(s).removeprefix('the ')}" for i, s in enumerate(method.steps)}
    ledger = spend.to_frame().replace({"step": steps}).set_index("step")
    unit, symbol = settings.notion.unit, settings.notion.symbol
    st.markdown(
        markdown_table(
            ledger[["share", unit]].rename(columns={"share": "share of the budget", unit: f"{symbol} spent"})
        )
    )
    if settings.notion.needs_delta and spend.steps[0].epsilon is not None:
        st.caption(
            f"{method.label[:1].upper() + method.label[1:]} is a pure-DP mechanism: φ1 runs it at "
            f"ε = {spend.steps[0].epsilon:.4g}, "
            f"which costs ρ = ε²/2 = {spend.steps[0].rho:.4g} (Proposition 1, Theorem 2)."
        )
    st.caption(
        f"Private release computed in {1000 * st.session_state['last_release_seconds']:.0f} ms. "
        "Share this exact configuration by copying the page address."
    )
    ui.settings_file_panel(settings)
    ui.draw_deferred_recommendation()


EXPLORER = st.Page(explorer, title="Explorer", icon=":material/search:", url_path="explorer", default=True)
st.session_state["explorer_page"] = EXPLORER  # lets other pages send the user back here
st.navigation(
    [EXPLORER if p.script is None else st.Page(p.script, title=p.title, icon=p.icon) for p in ui.navigation.PAGES]
).run()
