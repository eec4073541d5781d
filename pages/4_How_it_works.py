"""How it works: one private release, step by step, for a class."""

import streamlit as st

import ui.data
import ui.sidebar
from ui import walkthrough

settings = ui.sidebar.page(
    "How a private confidence interval is made",
    "We follow one release with the settings in the sidebar. Some pictures show things a real release keeps "
    "**secret** (the noise itself, the non-private estimate): we show them only to explain the method.",
    tab="how it works",
)
if not settings.teaching:
    st.info(
        f"This page always runs in teaching mode (public seed {settings.data.seed}): it shows the noise, which a real "
        "release keeps secret, so nothing on it is private. It does not touch your fresh, secret randomness."
    )
    settings = settings.changed(randomness="teaching")
try:
    X, y, names, truth = ui.data.load_data(settings)
    problem = ui.data.c_problem(settings, len(X))
    if problem is not None:
        raise ValueError(problem[0])
    w = ui.data.cached_walkthrough(ui.data.dataset_key(settings), settings)
except ValueError as err:
    ui.data.explain_error(err)
    st.stop()
d = X.shape[1]
walkthrough.split(settings)
walkthrough.noise(w, d)
walkthrough.training(settings, w, names)
walkthrough.matrices(settings, w, names)
walkthrough.simulation(settings, w, names)
walkthrough.interval(settings, names, truth)
