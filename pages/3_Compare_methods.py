"""Compare methods: the registered private methods (the paper's four by default) against their
variability intervals."""

import streamlit as st

import ui.background
import ui.choice_of_c
import ui.data
import ui.sidebar
import ui.state
from dpci import ReleaseSpec
from dpci.experiments.curves import fit_length_vs_budget, fit_length_vs_n
from dpci.experiments.sweeps import ALL, iter_interval_vs_variability
from dpci.notions import notion
from dpci.presentation.figures import ci_vs_vi_plot, curve_fit_plot, method_label
from dpci.presentation.tables import method_verdict
from ui import tuning

# the varied setting's values come from this page, not from the sidebar
varied = {"d": ("d",), "epsilon": ("budget",), "c": ("c",)}.get(
    ui.state.kept_choice("cmp_over", ["n", "d", "epsilon", "c"]), ()
)
settings = ui.sidebar.page(
    "Compare methods",
    tuning.COMPARE_INTRO,
    unused=("method", "n", "split", "n_samples", *varied),
)
chosen = ui.state.method_chooser("cmp_methods")
c1, c2 = st.columns(2)
over = ui.state.kept_widget(
    c1.radio,
    "Vary",
    ["n", "d", "epsilon", "c"],
    "cmp_over",
    horizontal=True,
    format_func={"n": "rows n", "d": "features d", "epsilon": "budget ε", "c": "regulariser c"}.get,
)
defaults = {
    "n": [1000, 2000, 5000, 10000, 20000],
    "d": [1, 2, 5, 10],
    "epsilon": [0.2, 0.5, 1.0, 2.0, 4.0],
    "c": [1e-4, 1e-3, 1e-2, 1e-1],
}
options = {
    "n": [500, 1000, 2000, 5000, 10000, 20000, 30000],
    "d": [1, 2, 3, 5, 10, 15],
    "epsilon": [0.1, 0.2, 0.5, 1.0, 2.0, 4.0, 8.0],
    "c": [1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1],
}
if over == "n":  # the rows the data have
    options["n"], defaults["n"] = tuning.row_choices(settings, options["n"], defaults["n"])
values = ui.state.kept_widget(c2.multiselect, "Values", options[over], f"cmp_values_{over}", default=defaults[over])
c3, c4, c5 = st.columns(3)
k = ui.state.kept_widget(c3.select_slider, "Repetitions per point", [20, 50, 100, 200, 500, 1000], "cmp_k", default=50)
n_vi = ui.state.kept_widget(
    c4.select_slider, "Bootstrap replicates (variability)", [200, 500, 1000, 2000, 10000], "cmp_vi", default=500
)
m = ui.state.kept_widget(c5.select_slider, "Monte Carlo samples", [500, 1000, 2000, 5000, 10000], "cmp_m", default=1000)
n_choices, n_default = tuning.row_choices(settings, list(range(1000, 30001, 1000)), 15000)
n_fixed = (
    ui.state.kept_widget(st.select_slider, "Rows n when not varied", n_choices, "cmp_n", default=n_default)
    if over != "n" and len(n_choices) > 1
    else n_default
)
epsilon = settings.notion.pure_epsilon(settings.spec.budget)
where, load = tuning.sweep_source(settings)
delta = tuning.comparison_delta(settings, chosen)
precision = tuning.coverage_precision(c3, "cmp_precision")
key = ui.data.results_key(
    settings, "cmp", where, delta, tuple(chosen), over, tuple(values), k, n_vi, m, n_fixed, precision
)
job = ui.background.sweep_job(
    "cmp",
    key,
    lambda: iter_interval_vs_variability(
        load,
        ReleaseSpec(loss=settings.spec.loss, c=settings.spec.c, alpha=settings.spec.alpha, n_samples=m),
        over,
        sorted(values),
        methods=tuple(chosen),
        n=n_fixed,
        d=settings.data.d,
        epsilon=epsilon,
        n_replicates=k,
        precision=precision,
        n_vi=n_vi,
        random_state=settings.data.seed,
        delta=delta,
        skip_invalid=True,  # a setting where c is too small is named under the chart, not the end of the sweep
    ),
    "Run",
    "Pick what to vary and press **Run**.",
    disabled=not (values and chosen),
)
if job is not None:
    tuning.note_real_sweep(settings, where, "Compare methods sweep", key)


def results(state):
    if where == "real":
        st.warning("Computed from the real data without privacy: **not private**, not for publishing.")
    marks = None
    if over == "c":  # each method's recommended c (public facts only: n, d, the budget)
        found = ui.choice_of_c.recommended_cs(settings, chosen, [n_fixed], settings.data.d + 1, epsilon, delta)
        marks = {(m, p): c for (m, p, _), c in found.items()}
    st.plotly_chart(ci_vs_vi_plot(state.frame, over, marks=marks), width="stretch", key="cmp_plot")
    st.caption(
        "Dashed: the variability intervals, computed without privacy (not private: for judging the methods only)."
        + (
            " Dotted verticals: each method's recommended c for these public facts (dpci.recommend_c). A larger c "
            "shrinks the coefficients the interval is for, so the shortest interval is not the best one."
            if marks
            else ""
        )
    )
    tuning.skipped_note(state.frame, [over])
    frame = state.frame
    if state.finished:
        lines = method_verdict(frame, over, settings.spec.alpha)
        st.markdown("**Shortest intervals that keep their coverage:**\n" + "\n".join(f"- {x}" for x in lines))
        if over == "c":
            st.caption(
                "Over c the shortest interval is not the most useful: it is for θ₀(c), which a large c shrinks "
                "towards 0. The dotted lines weigh width against that shrinkage (see Choosing c in the documentation)."
            )
        measured = frame[frame["feature"] == ALL].dropna(subset=["length"])  # a skipped setting has no length
        groups = [(k, g) for k, g in measured.groupby(["mechanism", "privacy"], sort=False) if g[over].nunique() >= 3]
        if over in ("n", "epsilon") and groups:
            st.subheader("How length scales (Section 7.7)")
            st.caption(
                "Least-squares fits with every coefficient ≥ 0 (c0 is the cost of privacy, c1 the sampling or data "
                "term: a negative one has no reading and would draw a negative length). Each legend gives the "
                "coefficients and R² on the measured lengths."
            )
            cols = st.columns(2)
            for i, ((mech, priv), grp) in enumerate(groups):
                grp = grp.sort_values(over)
                if over == "n":
                    fits = fit_length_vs_n(grp["n"], grp["length"])
                else:
                    budget = grp["budget"].to_numpy()
                    fits = {"privacy": fit_length_vs_budget(budget, grp["length"], priv)}
                    grp = grp.assign(epsilon=budget)
                fig = curve_fit_plot(
                    grp[over],
                    grp["length"],
                    fits,
                    x_title=over if over == "n" else notion(priv).symbol,
                    title=method_label(mech, priv),
                    log_x=True,
                )
                cols[i % 2].plotly_chart(fig, width="stretch", key=f"fit_{i}")
    with st.expander("All numbers"):
        st.dataframe(frame, width="stretch")
    ui.background.rerun_once_when_done(job, "cmp")


ui.background.sweep_fragment(job, results)
