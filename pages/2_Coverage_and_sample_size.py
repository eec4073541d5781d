"""Coverage and sample size: how many rows do private intervals need?"""

from functools import partial

import streamlit as st

import ui.background
import ui.choice_of_c
import ui.data
import ui.sidebar
import ui.state
from dpci import ReleaseSpec
from dpci.experiments.sample_size import iter_sample_size_match
from dpci.experiments.sweeps import iter_grid_sweep
from dpci.presentation.figures import heatmap_grid, sample_size_plot
from ui import tuning

VIEWS = ["Heatmap: n × d", "Heatmap: n × budget", "Heatmap: n × c", "Private vs non-private sample size"]
# a heatmap's own axis replaces the sidebar's d (n × d), budget (n × budget) or c (n × c)
axis_setting = {VIEWS[0]: ("d",), VIEWS[1]: ("budget",), VIEWS[2]: ("c",)}.get(
    ui.state.kept_choice("grid_view", VIEWS), ()
)
settings = ui.sidebar.page(
    "Coverage and sample size",
    tuning.COVERAGE_INTRO,
    unused=("method", "n", "split", "n_samples", *axis_setting),
)
view = ui.state.kept_widget(st.radio, "View", VIEWS, "grid_view", horizontal=True)
methods = ui.state.method_chooser("grid_methods")
c2, c3 = st.columns(2)
k = ui.state.kept_widget(c2.select_slider, "Repetitions per cell", [20, 50, 100, 200, 500, 1000], "grid_k", default=50)
m = ui.state.kept_widget(
    c3.select_slider, "Monte Carlo samples per interval", [500, 1000, 2000, 5000, 10000], "grid_m", default=1000
)
precision = tuning.coverage_precision(c2, "grid_precision")
spec = ReleaseSpec(
    loss=settings.spec.loss, c=settings.spec.c, alpha=settings.spec.alpha, n_samples=m
)  # each cell: its method
common = dict(n_replicates=k, random_state=settings.data.seed, precision=precision)
where, load = tuning.sweep_source(settings)
epsilon = settings.notion.pure_epsilon(settings.spec.budget)
# what every job of this page depends on (its key also names the view's own choices)
shared_key = ui.data.results_key(settings, where, tuple(methods), k, m, precision)
if view.startswith("Heatmap"):
    n_choices, n_default = tuning.row_choices(
        settings, [500, 1000, 2000, 4500, 8000, 15000, 30000], [1000, 2000, 4500, 8000]
    )
    ns = ui.state.kept_widget(st.multiselect, "Rows n", n_choices, "grid_ns", default=n_default)
    if view.endswith("d"):
        axis = ui.state.kept_widget(st.multiselect, "Features d", [1, 2, 3, 5, 10], "grid_ds", default=[1, 2, 5, 10])
        grid = dict(ds=axis, epsilon=epsilon)
    elif view.endswith("c"):
        axis = ui.state.kept_widget(
            st.multiselect,
            "Regulariser c",
            [1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1],
            "grid_cs",
            default=[1e-4, 1e-3, 1e-2, 1e-1],
        )
        grid = dict(cs=axis, d=settings.data.d, epsilon=epsilon)
    else:
        axis = ui.state.kept_widget(
            st.multiselect, "Budget ε", [0.2, 0.5, 1.0, 2.0, 4.0], "grid_epsilons", default=[0.5, 1.0, 2.0]
        )
        grid = dict(epsilons=axis, d=settings.data.d)
    grid["delta"] = tuning.comparison_delta(settings, methods)
    key = ("grid", view, tuple(ns), tuple(axis), grid.get("epsilon"), grid.get("d"), grid["delta"], *shared_key)
    # a cell where c is too small for objective perturbation is left empty and named, not the end of the sweep
    make = partial(iter_grid_sweep, load, spec, ns=sorted(ns), methods=methods, skip_invalid=True, **grid, **common)
    ready = bool(ns and axis and methods)
else:
    targets = ui.state.kept_widget(
        st.multiselect, "Non-private n'", [1000, 2500, 5000, 7500, 10000], "size_targets", default=[1000, 2500, 5000]
    )
    step = ui.state.kept_widget(
        st.select_slider, "Private n grows in steps of", [500, 1000, 2500, 5000], "size_step", default=2500
    )
    key = ("size", tuple(targets), step, settings.data.d, epsilon, *shared_key)
    matched = dict(d=settings.data.d, epsilon=epsilon, methods=methods, step=step)
    make = partial(iter_sample_size_match, load, spec, sorted(targets), **matched, **common)
    ready = bool(targets and methods)
job = ui.background.sweep_job(
    "grid",
    key,
    make,
    "Run",
    "Pick the grid and press **Run**. Small grids and 50 repetitions take a minute; the paper uses 1,000.",
    disabled=not ready,
)
if job is not None:
    tuning.note_real_sweep(settings, where, "Coverage sweep", key)


def results(state):
    frame, heatmap = state.frame, view.startswith("Heatmap")
    if where == "real":
        st.warning("Computed from the real data without privacy: **not private**, not for publishing.")
    if heatmap:
        x = {VIEWS[0]: "d", VIEWS[1]: "epsilon", VIEWS[2]: "c"}[view]
        marks = None
        if x == "c":  # outline each row's cell nearest the recommended c at that n
            marks = ui.choice_of_c.recommended_cs(settings, methods, ns, settings.data.d + 1, epsilon, grid["delta"])
        st.plotly_chart(
            heatmap_grid(
                frame,
                x,
                "coverage",
                title=f"Coverage (share of intervals holding θ₀; ✗: below {100 * settings.level:g}% by over 2 SE)",
                zmin=0.8,
                zmax=1.0,
                level=settings.level,
                marks=marks,
            ),
            width="stretch",
            key="cov_map",
        )
        st.plotly_chart(
            heatmap_grid(frame, x, "length", title="Mean interval length", marks=marks), width="stretch", key="len_map"
        )
        st.caption(
            "Lengths are coloured on a log scale (each colour step is the same factor, the bar ticked in lengths), "
            "so cells that differ tenfold differ in colour even beside one very long interval; each cell gives "
            "its length."
        )
        if marks:
            st.caption(
                "Outlined: in each row, the column nearest the recommended c for that n (dpci.recommend_c, public "
                "facts only). Coverage here is of θ₀(c), which shrinks as c grows."
            )
        tuning.skipped_note(frame, ["n", x])
    else:
        st.plotly_chart(sample_size_plot(frame), width="stretch", key="size_plot")
    with st.expander("All numbers"):
        st.dataframe(frame, width="stretch")
    ui.background.rerun_once_when_done(job, "grid")


ui.background.sweep_fragment(job, results)
