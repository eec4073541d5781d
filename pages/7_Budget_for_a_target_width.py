"""Accuracy first: the smallest budget whose private interval is as narrow as asked (issue 15)."""

import numpy as np
import pandas as pd
import streamlit as st

import ui
from dpci.accuracy_first import STRATEGIES, accuracy_first
from dpci.presentation.figures import target_path_plot
from dpci.presentation.tables import markdown_table
from ui import tuning

settings = ui.page(
    "Budget for a target width",
    "Start from the accuracy you need: *the interval for this coefficient must be no wider than 0.3*. The "
    "search releases at a tiny budget, checks the interval's width, and if it is too wide **reduces the noise "
    "of the same release** and checks again, up to the largest budget you allow. Each noisier release is a "
    "randomised copy of the next, less noisy one, so the privacy spent is that of the **last step reached** "
    "(ex-post privacy), not the sum of all the looks; and the width is computed from private quantities only, "
    "so checking it costs nothing. Doubling (fresh releases at ε, 2ε, 4ε, …) pays the sum; a fixed budget "
    "chosen from the stand-in pays once but may miss the target.",
    tab="budget for a target width",
    unused=("mechanism", "m"),
)
st.caption(
    "Accuracy first runs output perturbation whatever the sidebar's method: its noise is added to a fixed "
    "quantity, which noise reduction needs (objective perturbation's is not; see docs/accuracy-first.md). "
    "The sidebar's privacy notion, split, c and level apply."
)
try:
    where = tuning.source(settings, releases=True)
    X, y, names = tuning.sweep_arrays(settings, where)
except ValueError as err:
    ui.explain_error(err)
    st.stop()
symbol, budget = ("ε", settings.epsilon) if settings.priv == "pure" else ("ρ", settings.rho)
c1, c2, c3 = st.columns([2, 1, 1])
chosen = ui.kept_widget(c1.multiselect, "Coefficients the target is for", names, "af_coefs", default=names[:1])
target = ui.kept_widget(
    c2.select_slider, "Largest width", [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0], "af_target", default=0.3
)
most = ui.kept_widget(
    c3.select_slider,
    f"Most {symbol} to spend",
    [0.5, 1.0, 2.0, 5.0, 10.0, 20.0],
    "af_max",
    default=5.0,
    help="The search stops here if the target is still not met.",
)
coefs = [names.index(v) for v in chosen]
key = ("accuracy", ui.dataset_key(settings), where, settings.priv, settings.split, settings.c, settings.level)
key += (settings.model, settings.h, tuple(coefs), target, most, settings.seed)


def searches():
    """The three strategies, one after another (each yields the results so far)."""
    done = []
    for i, strategy in enumerate(STRATEGIES):
        done.append(
            accuracy_first(
                X,
                y,
                settings.loss,
                target,
                coefs,
                settings.priv,
                most,
                split=settings.split,
                c=settings.c,
                alpha=settings.alpha,
                random_state=None if where == "real" and not settings.teaching else settings.seed + i,
                strategy=strategy,
            )
        )
        yield list(done)


job = ui.sweep_job(
    "accuracy", key, searches, "Find the budget", "Choose coefficients and a width, then press the button.", not coefs
)


def results():
    done = job.latest or []
    st.progress(len(done) / len(STRATEGIES), text=f"{len(done)} of {len(STRATEGIES)} strategies")
    if not done:
        return
    if where == "real":
        for result in done:
            ui.privacy.charge_spend(
                settings, f"{key}:{result.strategy}", result.odometer_spend(settings.delta), result.strategy
            )
        st.warning(
            "These searches ran on the real data: each strategy's release is charged on the odometer (noise "
            "reduction its ex-post spend, doubling the sum of its releases, fixed its one release)."
        )
    st.plotly_chart(target_path_plot(done, target, symbol), width="stretch", key="af_path")
    rows = []
    for result in done:
        approx = result.approx_dp(settings.delta)
        rows.append(
            {
                "strategy": result.strategy.replace("_", " "),
                "target met": "yes" if result.met else "no",
                f"{symbol} of the last step": f"{result.budget:.3g}",
                "releases made": result.releases,
                f"privacy spent ({symbol})": f"{(result.spend.epsilon if settings.priv == 'pure' else result.spend.rho):.3g}",
                "as (ε, δ)": f"({approx.epsilon:.3g}, {approx.delta:.0e})"
                if approx.delta
                else f"({approx.epsilon:.3g}, 0)",
                "widest interval": f"{float(np.max(result.widths)):.3g}",
            }
        )
    st.markdown(markdown_table(pd.DataFrame(rows).set_index("strategy")))
    first = done[0]
    if first.strategy == "noise_reduction":
        steps = sum(p.checked for p in first.path)
        st.markdown(
            f"**Noise reduction** looked at {steps} step{'s' * (steps != 1)} and stopped at {symbol} = "
            f"{first.budget:.3g}; it pays for that step only. The ledger of what it spent:"
        )
        ledger = first.spend.to_frame().set_index("step")
        unit = "epsilon" if settings.priv == "pure" else "rho"
        st.markdown(markdown_table(ledger[["share", unit]]))
    ui.rerun_once_when_done(job, "accuracy")


ui.job_fragment(job, results)
