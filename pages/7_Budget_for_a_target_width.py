"""Accuracy first: the smallest budget whose private interval is as narrow as asked."""

from contextlib import nullcontext

import numpy as np
import pandas as pd
import streamlit as st

import ui.background
import ui.data
import ui.privacy
import ui.sidebar
import ui.state
from dpci.accuracy_first import STRATEGIES, accuracy_first
from dpci.presentation.figures import target_path_plot
from dpci.presentation.tables import markdown_table
from ui import target_width, tuning

settings = ui.sidebar.page(
    "Budget for a target width",
    target_width.INTRO,
    tab="budget for a target width",
    unused=("method", "n_samples"),
)
st.caption(target_width.RUNS_OUTPUT_PERTURBATION)
try:
    where = tuning.source(settings, releases=True)
    X, y, names = tuning.sweep_arrays(settings, where)
except ValueError as err:
    ui.data.explain_error(err)
    st.stop()
symbol, budget = settings.notion.symbol, settings.spec.budget
c1, c2, c3 = st.columns([2, 1, 1])
chosen = ui.state.kept_widget(c1.multiselect, "Coefficients the target is for", names, "af_coefs", default=names[:1])
target = ui.state.kept_widget(
    c2.select_slider, "Largest width", [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0], "af_target", default=0.3
)
most = ui.state.kept_widget(
    c3.select_slider,
    f"Most {symbol} to spend",
    [0.5, 1.0, 2.0, 5.0, 10.0, 20.0],
    "af_max",
    default=5.0,
    help="The search stops here if the target is still not met.",
)
coefs = [names.index(v) for v in chosen]
strategies = ui.state.kept_widget(
    st.multiselect,
    "Strategies",
    list(STRATEGIES),
    "af_strategies_real" if where == "real" else "af_strategies",
    default=["noise_reduction"] if where == "real" else list(STRATEGIES),
    format_func=lambda v: v.replace("_", " "),
    help="Noise reduction is the method; doubling and a fixed budget are baselines to compare it with. On the "
    "real data each one is a private release, paid for before it runs.",
)
search_spec = target_width.search_spec(settings, most)  # stops the page with the reason if none
blocked = not coefs or not strategies
if where == "real" and not blocked and not settings.teaching:
    blocked = not target_width.admitted(settings, X, y, search_spec, target, coefs, strategies)
key = ui.data.results_key(settings, "accuracy", where, tuple(coefs), target, most, tuple(strategies), settings.teaching)
fresh = where == "real" and not settings.teaching
ledger_key = ui.privacy.dataset_ref(settings).key if where == "real" else None
visitor = ui.privacy.visitor()


def searches():
    """The chosen strategies, one after another (each yields the results so far). On the real data each
    is admitted by the ledger before it draws any noise (in this job's thread, hence the with block)."""
    done = []
    watch = ui.privacy.ledger().watching(dataset=ledger_key, session=visitor) if ledger_key else nullcontext()
    with watch:
        for i, strategy in enumerate(strategies):
            done.append(
                accuracy_first(
                    X,
                    y,
                    search_spec,
                    target,
                    coefs,
                    random_state=None if fresh else settings.data.seed + i,
                    strategy=strategy,
                )
            )
            yield list(done)


job = ui.background.sweep_job(
    "accuracy",
    key,
    searches,
    "Find the budget",
    "Choose coefficients, strategies and a width, then press the button.",
    blocked,
)


def results():
    done = job.latest or []
    st.progress(len(done) / len(strategies), text=f"{len(done)} of {len(strategies)} strategies")
    if not done:
        return
    if where == "real":  # the sidebar's ledger shows the charges at the full rerun that follows the job
        st.warning(
            "These searches ran on the real data: each was admitted by the privacy ledger before it ran, at the "
            "most it could spend (the *charged* column); what the outcome alone realised is beside it."
        )
    st.plotly_chart(target_path_plot(done, target, symbol), width="stretch", key="af_path")
    st.caption(
        f"Log axes, showing the steps that were checked and the one before: at a smaller {symbol} noise alone "
        "leaves every interval wider than the target (dotted: the narrowest any interval can be), so the searches "
        "skip it. Large marks: where each strategy stopped; stops at one point are drawn one inside another."
    )
    rows = []
    for result in done:
        approx = result.approx_dp(settings.view.delta)
        rows.append(
            {
                "strategy": result.strategy.replace("_", " "),
                "target met": "yes" if result.met else "no",
                f"{symbol} of the last step": f"{result.budget:.3g}",
                "releases made": result.releases,
                f"realised ({symbol})": f"{settings.notion.amount(result.spend):.3g}",
                f"charged ({symbol})": "-"
                if result.charged is None or not fresh
                else f"{settings.notion.amount(result.charged):.3g}",
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
        unit = settings.notion.unit
        st.markdown(markdown_table(ledger[["share", unit]]))
    ui.background.rerun_once_when_done(job, "accuracy")


ui.background.job_fragment(job, results)
