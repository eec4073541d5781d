"""How it works: one private release, step by step, for a class."""

import numpy as np
import streamlit as st

import dpci
import ui.choice_of_c
import ui.data
import ui.settings
import ui.sidebar
import ui.state
from dpci.presentation.figures import (
    cloud_plot,
    eigenvalue_plot,
    forest_plot,
    ledger_plot,
    matrix_plot,
    noise_matrix_plot,
    noise_norm_plot,
    shift_plot,
)
from dpci.presentation.tables import interval_table

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
alloc = settings.spec.measure().allocation  # the privacy map the ledger charges
n, d = X.shape

st.header("1. Split the budget")
st.markdown(
    "The total budget is divided: "
    + ", ".join(
        f"φ{i + 1} = {amount:.3g} for {ui.data.chosen_method(settings).step_label(step)}"
        for i, (step, amount) in enumerate(zip(ui.data.chosen_method(settings).steps, alloc.phi))
    )
    + f". Privacy losses add up (composition), so the {len(alloc.phi)} steps together spend exactly the total."
)
st.plotly_chart(ledger_plot(alloc.spend.to_frame(), unit=settings.notion.unit), width="stretch")

st.header("2. Noise with a known shape")
law = w.coef_law
if law.kind == "spherical_laplace":
    norms = np.linalg.norm(law.sample(np.random.default_rng(1), d, 5000), axis=1)
    st.markdown(
        f"The mechanism draws a random vector β whose density falls off as exp(−γ‖β‖) (Eq. 3.2), γ = {law.scale:.4g}: "
        "a random direction, and a length that follows a Gamma law. Here are 5,000 such lengths."
    )
    st.plotly_chart(noise_norm_plot(norms, d, law.scale), width="stretch")
else:
    st.markdown(
        f"Under zCDP, output perturbation adds Gaussian noise with standard deviation σ = {law.scale:.4g} "
        "to each coefficient (the Gaussian mechanism)."
    )

st.header("3. Train with the noise")
how = dpci.methods.get(settings.spec.method).how_it_trains
shift = np.abs(w.theta_private - w.theta_hat)
st.markdown(
    f"{ui.settings.label(settings, 'mechanism')} {how}. The private estimate moved by {shift.mean():.3g} on average per "
    "coefficient: this is the privacy noise an interval must account for, on top of sampling noise."
)
st.plotly_chart(shift_plot(names, w.theta_hat, w.theta_private), width="stretch")

st.header("4. Private Hessian and covariance")
st.markdown(
    "The interval's width needs two matrices computed from the data: the Hessian H (curvature of the loss) and "
    "the covariance Σ of the gradients. Each gets noise scaled to its sensitivity (Lemmas 2 to 5: "
    f"{w.sensitivities[0]:.2e} and {w.sensitivities[1]:.2e} here), is made symmetric, and every eigenvalue is "
    f"raised to at least 2c = {2 * settings.spec.c:g} so that it stays a valid matrix (Algorithm 2)."
)
tab_h, tab_s = st.tabs(["Hessian H", "Covariance Σ"])
with tab_h:
    st.plotly_chart(matrix_plot(w.hessian, w.hessian_noisy, w.hessian_private, names), width="stretch")
    st.caption("The three look alike when the noise is small next to the entries; here is the noise on its own scale:")
    st.plotly_chart(noise_matrix_plot(w.hessian, w.hessian_noisy, names), width="stretch")
    st.plotly_chart(eigenvalue_plot(w.hessian_noisy, w.hessian_private, settings.spec.c), width="stretch")
with tab_s:
    st.plotly_chart(matrix_plot(w.covariance, w.covariance_noisy, w.covariance_private, names), width="stretch")
    st.plotly_chart(noise_matrix_plot(w.covariance, w.covariance_noisy, names), width="stretch")
    st.plotly_chart(eigenvalue_plot(w.covariance_noisy, w.covariance_private, settings.spec.c), width="stretch")

st.header("5. Simulate where the truth could be")
st.markdown(
    f"Using only private quantities, we draw {settings.spec.n_samples:,} plausible values of θ₀ − θ̃: sampling noise from "
    "N(0, Σ̃) pushed through H̃⁻¹, plus fresh privacy noise of the same law as the mechanism's (Eq. 4.1 or 5.2). "
    "This is post-processing: it costs no extra privacy. The box is the interval for the two coefficients shown."
)
j, k = st.columns(2)
first = ui.state.kept_widget(j.selectbox, "Horizontal", names, "walk_first")
second = ui.state.kept_widget(k.selectbox, "Vertical", names, "walk_second", default=names[min(1, len(names) - 1)])
st.plotly_chart(
    cloud_plot(w.theta_private, w.offsets, names, names.index(first), names.index(second), w.conf_int), width="stretch"
)

st.header("6. The interval")
st.markdown(f"Each interval keeps the middle {100 * settings.level:g}% of the simulated values.")
nonprivate = ui.data.cached_nonprivate(ui.data.dataset_key(settings), settings)
release = ui.data.cached_release(ui.data.dataset_key(settings), settings, "How it works")
bias = ui.choice_of_c.estimand_bias(settings, release)
table = interval_table(names, release, nonprivate, None, truth, settings.spec.alpha, bias=bias)
st.plotly_chart(forest_plot(table, level=settings.level), width="stretch")
st.caption(ui.choice_of_c.estimand_caption(settings, bias))
