"""Coverage, seen: the same release repeated on fresh samples from a known truth, for a class."""

from functools import partial

import numpy as np
import streamlit as st

import ui.background
import ui.data
import ui.settings
import ui.sidebar
import ui.state
from dpci import ReleaseSpec
from dpci.experiments.repeat import SEEDS, iter_repeated_releases
from dpci.presentation.figures import repeat_plot
from dpci.presentation.figures.repeat import coverage_count_text
from dpci.presentation.tables import too_wide_sentence
from ui import repeat_page
from ui.datasets import SYNTHETIC_THETA

settings = ui.sidebar.page(
    "Coverage, seen: repeat a release",
    repeat_page.INTRO,
    tab="repeat a release",
    unused=("dataset", "n", "n_samples", "seed"),
)
d = settings.data.d
theta = np.append(np.resize(SYNTHETIC_THETA, d), 0.3)
names = [f"x{j + 1}" for j in range(d)] + ["const"]
c1, c2, c3 = st.columns(3)
n = ui.state.kept_widget(
    c1.select_slider, "Rows per sample n", [500, 1000, 2000, 5000, 10000], "repeat_n", default=2000
)
k = ui.state.kept_widget(c2.select_slider, "Repetitions", [20, 50, 100, 200, 500], "repeat_k", default=50)
name = ui.state.kept_widget(c3.selectbox, "Coefficient shown", names, "repeat_coef", default=names[0])
s1, s2 = st.columns([2, 1])
ui.state.kept_widget(
    s1.radio,
    "Seed of each run",
    list(repeat_page.SEED_CHOICES),
    repeat_page.CHOICE,
    default=repeat_page.NEW,
    format_func=repeat_page.SEED_CHOICES.get,
    horizontal=True,
    help="The seed is public: the data are synthetic and nothing on this page is a private release.",
)
if repeat_page.KEPT_SEED not in st.session_state:
    st.session_state[repeat_page.KEPT_SEED] = repeat_page.seed_from_address()
st.session_state[repeat_page.SEED] = st.session_state[repeat_page.KEPT_SEED]
seed = s2.number_input(
    "Seed (public)",
    min_value=0,
    max_value=SEEDS - 1,
    step=1,
    key=repeat_page.SEED,
    on_change=repeat_page.seed_typed,
    placeholder="none yet",
    help="The seed of the run shown. Type one to repeat that run exactly: the same seed, the same picture.",
)
if seed is not None:
    st.query_params[repeat_page.SEED] = str(seed)
st.caption(
    f"The sidebar's method, budget, split, c and level apply; the data are always synthetic ({d} features and a "
    "constant, drawn from the seed above, with the privacy noise). Two truths: the model's coefficients without "
    f"penalty, θ = ({', '.join(f'{v:g}' for v in theta)}), and what the intervals here are checked against, θ₀(c): the "
    f"coefficients of the model fitted with the penalty c = {ui.settings.fmt_c(settings.spec.c)}, shrunk towards 0 (the line "
    "marked θ₀ in the chart)."
)
problem = ui.data.c_problem(settings, n)
if problem is not None:
    st.error(problem[0])
    st.stop()
key = ui.data.results_key(settings, "repeat", d, n, k, seed)
make = partial(
    iter_repeated_releases,
    theta,
    n,
    ReleaseSpec(
        settings.spec.method,
        settings.spec.privacy,
        settings.spec.budget,
        settings.spec.split,
        settings.spec.loss,
        settings.spec.c,
        settings.spec.alpha,
        2_000,
    ),
    k,
    seed,
)
job = ui.background.sweep_job(
    "repeat",
    key,
    make,
    f"Repeat {k} times",
    "Press the button to start the repetitions.",
    on_click=repeat_page.seed_for_the_press,
)


def results():
    state = job.latest
    if state is None:
        st.progress(0.0, text="Drawing the first sample…")
        return
    st.progress(state.done / state.total, text=f"{state.done} of {state.total} repetitions")
    runs = st.session_state.setdefault("_repeat_runs", [])  # finished runs (key, frame), the latest last
    ghost = next((frame for run_key, frame in reversed(runs) if run_key != key), None)
    budget = settings.notion.say(settings.spec.budget)
    title = (
        f"{ui.settings.label(settings, 'method')}, {budget}, n = {n:,}, seed {seed}: {100 * settings.level:g}% intervals "
        f"for {name}"
    )
    chart = repeat_plot(state.frame, state.theta0, names.index(name), name, settings.level, ghost=ghost, title=title)
    st.plotly_chart(chart, width="stretch", key="repeat_plot")
    if state.finished:
        j, goal = names.index(name), f"{100 * settings.level:g}%"
        shares = {kind: state.hits(kind) for kind in ("private", "nonprivate")}
        st.markdown(
            f"**Seed {seed}.** {name}: **{coverage_count_text(*state.hits('private', j), what=' private intervals')}"
            f"** contain θ₀ (goal: {goal}); non-private: {coverage_count_text(*state.hits('nonprivate', j))}. "
            f"Over all {len(names)} coefficients: {100 * shares['private'][0] / shares['private'][1]:.0f}% of the "
            f"private intervals and {100 * shares['nonprivate'][0] / shares['nonprivate'][1]:.0f}% of the "
            "non-private ones contain θ₀ (no interval: the coefficients of one repetition share its sample, so "
            "they are not independent trials). "
            "The range after each share says how sure that count can be after so few repetitions: the long-run "
            f"share lies in it with {goal} confidence (a Wilson interval, which stays inside 0–100% even at 20 of "
            "20). "
            + (
                ""
                if ui.data.chosen_method(settings).accounts_for_privacy_noise
                else "The naive interval leaves the privacy noise out, which is why it misses so often."
            )
        )
        private = state.frame[state.frame["kind"] == "private"]
        wide = too_wide_sentence(
            float((private["upper"] - private["lower"]).mean()), float(np.median(np.abs(state.theta0)))
        )
        if wide:
            st.warning(wide)
        if not runs or runs[-1][0] != key:
            runs.append((key, state.frame))
            del runs[:-2]
    ui.background.rerun_once_when_done(job, "repeat")


ui.background.job_fragment(job, results)
