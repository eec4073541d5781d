"""Budget allocation: how should the budget be split between coefficients, Hessian and covariance?"""

import streamlit as st

import ui.background
import ui.data
import ui.sidebar
import ui.state
from dpci.experiments.sweeps import iter_split_sweep, recommend_split
from dpci.presentation.figures import coverage_length_plot
from ui import tuning
from ui.app_state import shares_of

# the split's varied share is set by the sweep, not the sidebar (the choice is kept from the last run)
varying_phi1 = ui.state.kept_choice("split_vary", ["phi1", "phi2"]) == "phi1"
settings = ui.sidebar.page(
    "Budget allocation",
    "The budget pays for three things: **φ1** the coefficients, **φ2** the Hessian and **φ3** the gradient "
    "covariance. Too little for the coefficients makes them noisy; too little for the matrices makes the "
    "interval's width noisy. This page repeats the whole private release many times on resampled data and "
    "shows, for each split, how often the interval covers the true coefficient θ₀(c) at the sidebar's c (*coverage*) and how long it is "
    "(Figures 1 to 8 of the paper). The recommended split is the shortest with coverage at least the "
    "confidence level.",
    unused=("n_samples", "split") if varying_phi1 else ("n_samples", "split.hessian"),
)
c1, c2, c3 = st.columns(3)
steps = [ui.data.chosen_method(settings).step_label(step) for step in ui.data.chosen_method(settings).steps]
which = ui.state.kept_widget(
    c1.radio,
    "What to vary",
    ["phi1", "phi2"],
    "split_vary",
    format_func={"phi1": f"φ1 ({steps[0]})", "phi2": f"φ2 (share of the rest for {steps[1]})"}.get,
)
k = ui.state.kept_widget(
    c2.select_slider,
    "Repetitions per split",
    [50, 100, 200, 500, 1000],
    "split_k",
    default=100,
    help="More repetitions give smaller error bars (the paper uses 100,000; we recommend ≥ 1,000 "
    "for a decision) but take longer.",
)
m = ui.state.kept_widget(
    c3.select_slider, "Monte Carlo samples per interval", [500, 1000, 2000, 5000, 10000], "split_m", default=1000
)
precision = tuning.coverage_precision(c2, "split_precision")
try:
    where = tuning.source(settings)
    X, y, names = tuning.sweep_arrays(settings, where)
except ValueError as err:
    ui.data.explain_error(err)
    st.stop()
problem = ui.data.c_problem(settings, len(X))
if problem is not None:
    st.error(problem[0])
    st.stop()
key = ui.data.results_key(settings, where, which, k, m, precision)
job = ui.background.sweep_job(
    "split",
    key,
    lambda: iter_split_sweep(
        X,
        y,
        settings.spec.replace(split=None, n_samples=m, seed=None),  # the split is what varies
        vary=which,
        phi1=settings.spec.split[0] if which == "phi2" else None,
        feature_names=names,
        n_replicates=k,
        random_state=settings.data.seed,
        precision=precision,
    ),
    "Run the sweep",
    "Choose what to vary and press **Run the sweep**. The sweep uses the settings of the sidebar.",
)
if job is not None:
    tuning.note_real_sweep(settings, where, "Budget allocation sweep", key)


def results(state):
    x = "phi1" if which == "phi1" else "phi2_share"
    frame = state.frame
    rec = recommend_split(frame, settings.spec.alpha)
    x_title = "φ1 share" if which == "phi1" else "φ2's share of what φ1 leaves"
    st.plotly_chart(
        coverage_length_plot(
            frame, x, settings.spec.alpha, recommended=rec[x] if state.finished else None, x_title=x_title
        ),
        width="stretch",
        key="split_plot",
    )
    if state.finished:
        verdict = "" if rec["meets_coverage"] else " (no split reached the confidence level: this is the best coverage)"
        st.markdown(
            f"**Recommended split:** φ1 = {rec['phi1']:.3f}, φ2 = {rec['phi2']:.3f}, φ3 = {rec['phi3']:.3f}: "
            f"coverage {rec['coverage']:.3f} ± {1.96 * rec['coverage_se']:.3f}, mean length "
            f"{rec['length']:.4g}{verdict}."
        )
        if where == "real":
            st.warning("Computed from the real data without privacy: **not private**, not for publishing.")
        if st.button("Use this split in the Explorer", type="primary"):
            tuning.note_chosen_from_data(settings, where, "The split")
            fractions = (round(float(rec["phi1"]), 2), round(float(rec["phi2_share"]) * 40) / 40)  # the sliders' steps
            ui.state.set_split(shares_of(fractions))
            st.switch_page(st.session_state.get("explorer_page", "app.py"))
    with st.expander("All numbers"):
        st.dataframe(frame, width="stretch")
    ui.background.rerun_once_when_done(job, "split")


ui.background.sweep_fragment(job, results)
