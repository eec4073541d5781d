"""Coverage, seen: the same release repeated on fresh samples from a known truth, for a class."""

from functools import partial

import numpy as np
import streamlit as st

import ui
from dpci.experiments.repeat import iter_repeated_releases
from dpci.presentation.figures import repeat_plot
from ui.datasets import SYNTHETIC_THETA

settings = ui.page(
    "Coverage, seen: repeat a release",
    "A 95% confidence interval is a *procedure*: repeated on new data, it catches the truth about 95% of the "
    "time. Here the truth is known (synthetic data from a logistic model), and each repetition draws **a new "
    "sample and new privacy noise**, then checks whether the private interval (left) and the non-private "
    "interval (right) contain it. Watch the misses (orange) pile up, then change ε in the sidebar and run "
    "again: the earlier run stays in grey for comparison.",
    tab="repeat a release",
    unused=("dataset", "n", "m"),
)
d = settings.d
theta = np.append(np.resize(SYNTHETIC_THETA, d), 0.3)
names = [f"x{j + 1}" for j in range(d)] + ["const"]
c1, c2, c3 = st.columns(3)
n = ui.kept_widget(c1.select_slider, "Rows per sample n", [500, 1000, 2000, 5000, 10000], "repeat_n", default=2000)
k = ui.kept_widget(c2.select_slider, "Repetitions", [20, 50, 100, 200, 500], "repeat_k", default=50)
name = ui.kept_widget(c3.selectbox, "Coefficient shown", names, "repeat_coef", default=names[0])
st.caption(
    f"The sidebar's method, budget, split, c and level apply; the data are always synthetic ({d} features and a "
    f"constant, drawn with the seed {settings.seed}). Two truths: the model's coefficients without penalty, "
    f"θ = ({', '.join(f'{v:g}' for v in theta)}), and what the intervals here are checked against, θ₀(c): the "
    f"coefficients of the model fitted with the penalty c = {ui.fmt_c(settings.c)}, shrunk towards 0 (the line "
    "marked θ₀ in the chart)."
)
problem = ui.c_problem(settings, n)
if problem is not None:
    st.error(problem[0])
    st.stop()
key = ui.results_key(settings, "repeat", d, n, k)
make = partial(
    iter_repeated_releases,
    theta,
    n,
    settings.loss,
    settings.mech,
    settings.priv,
    settings.budget,
    settings.split,
    settings.c,
    settings.alpha,
    2_000,
    k,
    settings.seed,
)
job = ui.sweep_job("repeat", key, make, f"Repeat {k} times", "Press the button to start the repetitions.")


def results():
    state = job.latest
    if state is None:
        st.progress(0.0, text="Drawing the first sample…")
        return
    st.progress(state.done / state.total, text=f"{state.done} of {state.total} repetitions")
    runs = st.session_state.setdefault("_repeat_runs", [])  # finished runs (key, frame), the latest last
    ghost = next((frame for run_key, frame in reversed(runs) if run_key != key), None)
    budget = f"ε = {settings.epsilon:g}" if settings.priv == "pure" else f"ρ = {settings.rho:g}"
    title = f"{settings.label('mechanism')}, {budget}, n = {n:,}: {100 * settings.level:g}% intervals for {name}"
    chart = repeat_plot(state.frame, state.theta0, names.index(name), name, settings.level, ghost=ghost, title=title)
    st.plotly_chart(chart, width="stretch", key="repeat_plot")
    if state.finished:
        private, se = state.coverage("private")
        st.markdown(
            f"Over all {len(names)} coefficients, **{100 * private:.1f}% ± {100 * se:.1f}%** of the private "
            f"intervals contain the truth (goal: {100 * settings.level:g}%); non-private: "
            f"{100 * state.coverage('nonprivate')[0]:.1f}%. "
            + (
                ""
                if ui.chosen_method(settings).accounts_for_privacy_noise
                else "The naive interval leaves the privacy noise out, which is why it misses so often."
            )
        )
        if not runs or runs[-1][0] != key:
            runs.append((key, state.frame))
            del runs[:-2]
    ui.rerun_once_when_done(job, "repeat")


ui.job_fragment(job, results)
