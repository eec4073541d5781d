"""How it works, step by step: each step of one teaching-mode release drawn from the walk through it
(dpci.teaching.walkthrough). In words a class has: no equation or lemma numbers (the documentation has them)."""

from __future__ import annotations

import numpy as np
import streamlit as st

import dpci
import ui.data
import ui.estimand_shown
import ui.release_desk
import ui.settings
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
from ui.app_state import AppState


def split(s: AppState) -> None:
    alloc = s.spec.measure().allocation  # the privacy map the ledger charges
    method = ui.data.chosen_method(s)
    st.header("1. Split the budget")
    st.markdown(
        "The total budget is divided: "
        + ", ".join(
            f"φ{i + 1} = {amount:.3g} for {method.step_label(step)}"
            for i, (step, amount) in enumerate(zip(method.steps, alloc.phi))
        )
        + f". Privacy losses add up (composition), so the {len(alloc.phi)} steps together spend exactly the total."
    )
    st.plotly_chart(ledger_plot(alloc.spend.to_frame(), unit=s.notion.unit), width="stretch")


def noise(w, d: int) -> None:
    st.header("2. Noise with a known shape")
    law = w.coef_law
    if law.kind == "spherical_laplace":
        norms = np.linalg.norm(law.sample(np.random.default_rng(1), d, 5000), axis=1)
        st.markdown(
            f"The mechanism draws a random vector β whose density falls off as exp(−γ‖β‖), γ = {law.scale:.4g}: "
            "a random direction, and a length that follows a Gamma law. Here are 5,000 such lengths."
        )
        st.plotly_chart(noise_norm_plot(norms, d, law.scale), width="stretch")
    else:
        st.markdown(
            f"Under zCDP, output perturbation adds Gaussian noise with standard deviation σ = {law.scale:.4g} "
            "to each coefficient (the Gaussian mechanism)."
        )


def training(s: AppState, w, names) -> None:
    st.header("3. Train with the noise")
    how = dpci.methods.get(s.spec.method).how_it_trains
    shift = np.abs(w.theta_private - w.theta_hat)
    st.markdown(
        f"{ui.settings.label(s, 'method')} {how}. The private estimate moved by {shift.mean():.3g} on average "
        "per coefficient: this is the privacy noise an interval must account for, on top of sampling noise."
    )
    st.plotly_chart(shift_plot(names, w.theta_hat, w.theta_private), width="stretch")


def matrices(s: AppState, w, names) -> None:
    st.header("4. Private Hessian and covariance")
    st.markdown(
        "The interval's width needs two matrices computed from the data: the Hessian H (curvature of the loss) "
        "and the covariance Σ of the gradients. Each gets noise scaled to how much one person's row can change it "
        f"({w.sensitivities[0]:.2e} and {w.sensitivities[1]:.2e} here), is made symmetric, and every eigenvalue "
        f"is raised to at least 2c = {2 * s.spec.c:g} so that it stays a valid matrix."
    )
    tab_h, tab_s = st.tabs(["Hessian H", "Covariance Σ"])
    with tab_h:
        st.plotly_chart(matrix_plot(w.hessian, w.hessian_noisy, w.hessian_private, names), width="stretch")
        st.caption(
            "The three look alike when the noise is small next to the entries; here is the noise on its own scale:"
        )
        st.plotly_chart(noise_matrix_plot(w.hessian, w.hessian_noisy, names), width="stretch")
        st.plotly_chart(eigenvalue_plot(w.hessian_noisy, w.hessian_private, s.spec.c), width="stretch")
    with tab_s:
        st.plotly_chart(matrix_plot(w.covariance, w.covariance_noisy, w.covariance_private, names), width="stretch")
        st.plotly_chart(noise_matrix_plot(w.covariance, w.covariance_noisy, names), width="stretch")
        st.plotly_chart(eigenvalue_plot(w.covariance_noisy, w.covariance_private, s.spec.c), width="stretch")


def simulation(s: AppState, w, names) -> None:
    st.header("5. Simulate where the truth could be")
    st.markdown(
        f"Using only private quantities, we draw {s.spec.n_samples:,} plausible values of θ₀ − θ̃: sampling noise "
        "from N(0, Σ̃) pushed through H̃⁻¹, plus fresh privacy noise of the same law as the mechanism's. This is "
        "post-processing: it costs no extra privacy. The box is the interval for the two coefficients shown."
    )
    j, k = st.columns(2)
    first = ui.state.kept_widget(j.selectbox, "Horizontal", names, "walk_first")
    second = ui.state.kept_widget(k.selectbox, "Vertical", names, "walk_second", default=names[min(1, len(names) - 1)])
    cloud = cloud_plot(w.theta_private, w.offsets, names, names.index(first), names.index(second), w.conf_int)
    st.plotly_chart(cloud, width="stretch")


def interval(s: AppState, names, truth) -> None:
    """The interval the page's release gives, for the estimand the pages show (θ when it gives one)."""
    st.header("6. The interval")
    st.markdown(f"Each interval keeps the middle {100 * s.level:g}% of the simulated values.")
    key = ui.data.dataset_key(s)
    release, bias, symbol, theta_said = ui.estimand_shown.shown_for_table(
        s, ui.release_desk.release_of(key, s, "How it works")
    )
    truth = None if theta_said else truth  # the synthetic truth is theta's, and theta is not shown
    nonprivate = ui.data.cached_nonprivate(key, s, symbol)
    table = interval_table(names, release, nonprivate, None, truth, s.spec.alpha, bias=bias)
    st.plotly_chart(forest_plot(table, level=s.level), width="stretch")
    st.caption(ui.estimand_shown.estimand_caption(s, bias, theta_said))
