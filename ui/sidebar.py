"""The settings sidebar and the panel that saves or loads the settings as a file."""

from __future__ import annotations

import math

import streamlit as st

from dpci import methods as registry
from dpci.losses import parameter_ranges
from dpci.notions import notion
from dpci.presentation.tables import escape_markdown
from ui import privacy as ledger_view
from ui.app_state import AppState, split_keys
from ui.choice_of_c import c_recommendation
from ui.settings import (
    ALPHAS,
    C_VALUES,
    DATASETS,
    DELTAS,
    ESTIMANDS,
    MC_SAMPLES,
    PRIVACY,
    RANGES,
    SCALINGS,
    VI_REPLICATES,
    budget_value,
    declared_range,
    fmt_c,
    label,
    methods_left_out,
    models,
    offered_methods,
)
from ui.sidebar_ledger import ODOMETER_SLOT, draw_odometer, ledger_panel, start_again_button
from ui.state import (
    CONTROLS_DRAWN,
    UNUSED,
    WIDGET,
    apply_typed_setting,
    current_settings,
    declared_widgets,
    restore_table2,
    set_notion,
    set_setting,
    settings_store,
    settings_widget,
    share_settings,
    type_setting,
    write_fraction,
    write_notion,
)


def _through_app_py():
    """Until some session has run app.py since the server started, Streamlit runs a page opened by a
    shared link straight from the pages/ directory, without app.py's navigation (its page names,
    icons and order; app.py's st.navigation switches that mode off). Switch it off here and run the
    page again, through app.py."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        if not st.session_state.get("_through_app_py"):  # once a session: a rerun would drop a click
            st.session_state["_through_app_py"] = True
            st.rerun()


def sidebar(show_vi=True, unused=(), defer_advice=False):
    """The settings sidebar; returns the current :class:`~ui.app_state.AppState`. ``unused``: the settings this
    page does not use (greyed out, with a note). ``defer_advice``: the recommended c is drawn when the
    page calls :func:`ui.choice_of_c.draw_deferred_recommendation` (after its chart)."""
    _through_app_py()
    # app.py applies it first; a page Streamlit runs straight from pages/ (see _through_app_py) applies it here
    apply_typed_setting()
    settings_store()
    st.session_state[UNUSED] = frozenset(unused)
    st.session_state[CONTROLS_DRAWN] = True
    sb = st.sidebar
    if "_url_warning" in st.session_state:
        # shown until the user changes a setting (a page's reruns would otherwise hide it within seconds)
        sb.warning(escape_markdown(st.session_state["_url_warning"]))  # quotes the address's own text
    refused = _privacy_section(sb)
    _data_section(sb)
    _model_section(sb, refused)
    _interval_section(sb, defer_advice)
    _more_section(sb, show_vi)
    ledger_panel(sb)
    ledger_view.write_visitor_cookie()
    settings = current_settings()
    share_settings(settings)  # every page's address holds the settings: a reload or a shared link keeps them
    return settings


def _privacy_section(sb) -> dict:
    """The budget, the notion, the split and teaching mode, with the ledger under them; returns the
    notions this dataset's budget cannot count (notion -> why)."""
    sb.header("Privacy")
    refused = ledger_view.notion_refusals(current_settings())
    _offer_only_what_runs(refused)
    privacy = current_settings().spec.privacy
    budget_control(sb, current_settings())
    notions = [n for n in chosen_notions() if n not in refused]
    settings_widget(
        sb.radio, "Privacy notion", "privacy", notions, format_func=PRIVACY.get, horizontal=True, write=write_notion
    )
    if len(chosen_notions()) < len(PRIVACY):
        supported = " and ".join(PRIVACY[n] for n in chosen_notions())
        sb.caption(f"{escape_markdown(label(current_settings(), 'method'))} supports {supported} only.")
    for reason in refused.values():  # the app's own words
        sb.caption(reason)
    if notion(privacy).needs_delta:
        settings_widget(
            sb.select_slider, "δ for the (ε, δ) equivalent", "delta", DELTAS, format_func=lambda v: f"{v:.0e}"
        )
    split_control(sb, current_settings())
    sb.caption(split_caption(current_settings()))
    sb.button("Paper's split (Table 2)", on_click=restore_table2, width="stretch")
    _teaching_toggle(sb)
    st.session_state[ODOMETER_SLOT] = sb.empty()
    draw_odometer(current_settings())
    start_again_button(sb, current_settings())
    return refused


def _data_section(sb) -> None:
    """The dataset, its features d, the scaling of real rows and the rows n."""
    sb.header("Data")
    dataset = settings_widget(
        sb.selectbox,
        "Dataset",
        "dataset",
        list(DATASETS),
        format_func=DATASETS.get,
        help="Adult: 30,162 people from the 1994 US census, predicting income > $50K.",
    )
    if dataset == "upload":
        sb.caption("The features of an uploaded CSV are chosen in the upload panel.")
    else:
        settings_widget(
            sb.slider,
            "Features d (plus a constant)",
            "d",
            *RANGES["d"],
            help="The first d features after one-hot encoding; the paper uses d = 10.",
        )
    if dataset != "synthetic":  # the synthetic rows are drawn in the unit ball
        settings_widget(
            sb.radio,
            "Feature scaling",
            "scaling",
            list(SCALINGS),
            format_func=SCALINGS.get,
            help="How each row is put in the unit ball, as the guarantee needs. One public divisor: every "
            "row is divided by the same public number, so a feature keeps its meaning and Present can "
            "show odds ratios. Each row to length 1: the paper's Section 7.1 (a feature's effect then "
            "depends on the row's other values). Both give the same privacy.",
        )
    settings_widget(
        sb.number_input,
        "Rows n (0 = all)",
        "n",
        min_value=0,
        step=500,
        help="A fixed random subset of this many rows; smaller n shows how intervals widen.",
    )


def _model_section(sb, refused) -> None:
    """The model with one control per parameter its loss declares, and the methods that run with it."""
    sb.header("Model")
    choices = models()
    model = settings_widget(
        sb.radio,
        "Model",
        "loss",
        list(choices),
        format_func=choices.get,
        horizontal=True,
        label_visibility="collapsed",
    )
    loss_controls(sb, model)
    methods_offered = offered_methods(current_settings().spec.loss.name, refused)
    settings_widget(
        sb.radio,
        "Mechanism",
        "method",
        list(methods_offered),
        format_func=methods_offered.get,
        help="Objective perturbation adds noise to the training objective (Algorithm 1); output "
        "perturbation adds it to the trained coefficients (Algorithm 4).",
    )
    for reason in methods_left_out(current_settings().spec.loss.name, refused):  # the registry's labels
        sb.caption(reason)


def _interval_section(sb, defer_advice: bool) -> None:
    """c (with its recommendation), the estimand and its public bound, and the level."""
    sb.header("Interval")
    settings_widget(
        sb.select_slider,
        "Regularisation c",
        "c",
        C_VALUES,
        format_func=fmt_c,
        help="c ||θ||² in the objective (the paper uses 0.001). A larger c shrinks both noises and the "
        "coefficients the interval is for; the recommendation below weighs the two from public facts.",
    )
    settings_widget(
        sb.radio,
        "Intervals for",
        "estimand",
        list(ESTIMANDS),
        format_func=ESTIMANDS.get,
        help="θ: the coefficients without penalty, what odds ratios mean. For logistic regression the private "
        "estimate is corrected for the penalty with the private Hessian, and the interval's law is simulated "
        "from the release; where the release says too little to undo the penalty, the page says so and shows "
        "θ₀(c). θ₀(c): the coefficients of the model fitted with the penalty, what the paper's intervals cover. "
        "Changing this draws nothing new: it is post-processing.",
    )
    theta_bound_control(sb, current_settings())
    c_recommendation(sb, current_settings(), defer=defer_advice)
    settings_widget(sb.select_slider, "Confidence level", "alpha", ALPHAS, format_func=lambda a: f"{100 * (1 - a):g}%")
    # Drawn only when opened (a lazy expander): fewer widgets make the first page load faster.


def _more_section(sb, show_vi: bool) -> None:
    """Monte Carlo samples, bootstrap replicates and the seed, in a lazy expander."""
    more = sb.expander("Samples and seed", key="more_settings", on_change="rerun")
    if more.open:
        settings_widget(
            more.select_slider,
            "Monte Carlo samples m",
            "n_samples",
            MC_SAMPLES,
            help="Draws of the Monte Carlo step that turns the noisy Hessian and covariance into an interval.",
        )
        if show_vi:
            settings_widget(more.select_slider, "Bootstrap replicates (variability)", "vi_replicates", VI_REPLICATES)
        if current_settings().teaching:
            settings_widget(
                more.number_input,
                "Seed (teaching mode)",
                "seed",
                *RANGES["seed"],
                step=1,
                help="The same seed gives the same noise: fine for teaching, never for a real release.",
            )
        else:
            more.caption("Randomness: fresh from the operating system (turn on teaching mode for a fixed seed).")
    else:
        s = current_settings()
        more.caption(
            f"m = {s.spec.n_samples:,}"
            + (f", {s.view.vi_replicates:,} bootstrap replicates" if show_vi else "")
            + (
                ", this page's own seed"
                if "seed" in st.session_state.get(UNUSED, ())
                else f", seed {s.data.seed}"
                if s.teaching
                else ", fresh randomness"
            )
        )


def split_control(sb, s: AppState) -> None:
    """One slider per step of the method but the last (its declared steps): the first step's share of
    the budget, then each step's share of what the steps before it leave; the last takes the rest. The
    store holds the shares (``split.<step>``); the sliders show these fractions."""
    method = registry.get(s.spec.method)
    steps = method.steps
    settings_store().update(split_keys(steps, s.spec.split))  # the split the state holds, as its sliders' writer reads
    for i, (step, fraction) in enumerate(zip(steps, s.fractions)):
        name = f"split.{step}"
        interval = declared_range(name, s.spec.loss.name, s.spec.method)
        label = method.step_label(step)
        said = f"φ{i + 1}: share for {label}" if i == 0 else f"φ{i + 1}: share of the rest for {label}"
        last = f"{method.step_label(steps[-1])[:1].upper()}{method.step_label(steps[-1])[1:]}"
        help_ = (
            f"{last} gets the remainder, so the {len(steps)} shares sum to 1 always." if i == len(steps) - 2 else None
        )
        settings_widget(
            sb.slider,
            said,
            name,
            interval.low,
            interval.high,
            step=interval.step,
            help=help_,
            shown=fraction,
            write=write_fraction,
        )


def loss_controls(sb, model: str) -> None:
    """One slider per parameter the loss declares, over its declared range (dpci.losses.parameter_ranges)."""
    ranges = parameter_ranges(model)
    declared_widgets([f"loss.{p}" for p in ranges])
    for param, interval in ranges.items():
        settings_widget(sb.slider, interval.label, f"loss.{param}", interval.low, interval.high, step=interval.step)


def theta_bound_control(sb, s: AppState) -> None:
    """With *θ: without penalty* chosen (a method with a c): the public bound B on ‖θ‖ the bias bound needs,
    and, while there is none, why the intervals stay for θ₀(c)."""
    if s.view.estimand != "unregularised" or not registry.get(s.spec.method).uses_c:
        return
    settings_widget(
        sb.number_input,
        "Public bound B on ‖θ‖ (optional; 0: none)",
        "theta_bound",
        *RANGES["theta_bound"],
        step=1.0,
        help="With none, the interval for θ of logistic regression comes from the release alone: the estimate "
        "corrected for the penalty, its law simulated. With a bound on the length of the coefficients without "
        "penalty that you can state publicly (from knowledge of the field, never from these data), it is instead "
        "θ₀(c)'s interval widened by a bias bound proven for that B: safer for a larger B, and wider. Odds "
        "ratios of at most e^k per unit of each scaled feature give B = k √d.",
    )
    if s.theta_refusal:
        sb.caption(s.theta_refusal)


def budget_control(sb, s: AppState) -> None:
    """The total budget: a slider over readable stops and a number box for any value (two significant
    digits), with help that says what the value means for one person."""
    unit, symbol, stops = s.notion.unit, s.notion.symbol, s.notion.stops
    value = s.spec.budget
    settings_widget(
        sb.select_slider,
        f"Total budget {symbol}",
        "budget",
        sorted({*stops, value}),  # a typed value is a stop too, so the slider can show it
        widget=unit,  # one slider per notion: their stops differ
        format_func=lambda v: f"{v:g}",
        help=budget_meaning(s),
    )
    typed = f"{WIDGET}{unit}_typed"
    st.session_state[typed] = value
    sb.number_input(
        f"or type {symbol}",
        min_value=stops[0],
        max_value=stops[-1],
        step=None,
        format="%g",
        key=typed,
        on_change=_store_typed_budget,
        args=(typed,),
        disabled="budget" in st.session_state.get(UNUSED, ()),
        help=f"Any {symbol} from {stops[0]:g} to {stops[-1]:g}, kept to two significant digits.",
    )


def _store_typed_budget(key: str) -> None:
    type_setting("budget", budget_value(st.session_state[key]))


def budget_meaning(s: AppState) -> str:
    """What the budget means for one person, in words (the budget slider's help)."""
    n = s.notion
    epsilon = n.approx_epsilon(s.spec.budget, s.view.delta)
    factor = math.exp(epsilon)
    if not n.needs_delta:
        worst = factor / (1.0 + factor)
        return (
            f"ε = {s.spec.budget:g}: whatever anyone knew before, the release changes the odds of any conclusion "
            f"about one person by at most a factor e^ε = {factor:.3g} (a 50% belief becomes at most "
            f"{100 * worst:.0f}%). Smaller ε: stronger privacy, wider intervals."
        )
    return (
        f"{n.say(s.spec.budget)} ({n.words}) implies (ε = {epsilon:.3g}, δ = {s.view.delta:.0e})-DP: the odds "
        f"of any conclusion about one person change by at most e^ε = {factor:.3g}, except with "
        f"probability δ. Smaller {n.symbol}: stronger privacy, wider intervals."
    )


def _store_teaching():
    settings_store()["randomness"] = "teaching" if st.session_state["w_teaching"] else "fresh"


def _teaching_toggle(sb):
    """Teaching mode: a fixed public seed (reproducible numbers, no privacy) or fresh randomness."""
    s = current_settings()
    st.session_state["w_teaching"] = s.teaching
    sb.toggle(
        "Teaching mode (fixed seed)",
        key="w_teaching",
        on_change=_store_teaching,
        help="On: the noise comes from a fixed seed, so a class sees the same numbers, but anyone who knows "
        "the seed can remove the noise: nothing is a private release. Off: fresh randomness from the "
        "operating system, and every new setting is a new private release, admitted by the privacy ledger.",
    )
    if s.teaching:
        seed = "this page's own public seed" if "seed" in st.session_state.get(UNUSED, ()) else f"seed {s.data.seed}"
        sb.caption(f"Teaching mode, {seed}: the numbers are reproducible and **not private**.")


def _offer_only_what_runs(refused) -> None:
    """Before any widget is drawn: a method or notion the settings hold that is not offered gives way
    to one that is (a shared address may name one), so no page asks for a release that cannot run."""
    s = current_settings()
    offered = offered_methods(s.spec.loss.name, refused)
    if offered and s.spec.method not in offered:
        set_setting("method", next(iter(offered)))
        s = current_settings()
    notions = [n for n in registry.get(s.spec.method).notions if n not in refused]
    if notions and s.spec.privacy not in notions:
        set_notion(notions[0])
        st.session_state.pop(WIDGET + "privacy", None)


def chosen_notions():
    return registry.get(current_settings().spec.method).notions


def split_caption(s: AppState) -> str:
    """The split as shares and as amounts of the budget, one meaning on every page."""
    symbol, total = s.notion.symbol, s.spec.budget
    method = registry.get(s.spec.method)
    phis = " / ".join(f"φ{i + 1}" for i in range(len(method.steps)))
    shares = " / ".join(f"{v:.4g}" for v in s.spec.split)
    amounts = " / ".join(f"{v * total:.3g}" for v in s.spec.split)
    steps = " / ".join(method.step_label(step).removeprefix("the ") for step in method.steps)
    return f"Split {phis}: shares {shares}, so {symbol} = {amounts} for {steps}."


def page(title: str, intro: str | None = None, tab: str | None = None, unused=()) -> AppState:
    """Start a page: its browser tab, the settings sidebar (``unused``: settings the page does not use,
    greyed out), its title and introduction; returns the settings."""
    st.set_page_config(page_title=f"dpci: {(tab or title).lower()}", page_icon="🔒", layout="wide")
    settings = sidebar(show_vi=False, unused=unused)
    if unused:
        st.sidebar.caption("Greyed-out settings are not used on this page: its own controls set them.")
    st.title(title)
    if intro:
        st.markdown(intro)
    return settings
