"""The regulariser's recommendation beside the c control (docs/choosing-c.md).

:func:`dpci.recommend_c` chooses c from public facts only -- n, d, the method, the notion, budget and
split, the loss and the level -- so showing it costs no privacy. Here it is snapped to the slider's
values (the neighbour with the better predicted score) and offered with one click.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

from dpci import methods as registry
from dpci.exceptions import DataValidationError
from dpci.notions import NOTIONS
from dpci.recommend import (
    Prediction,
    Recommendation,
    least_budget_for_theta,
    predict,
    recommend_c,
)
from dpci.recommend.reference import PUBLIC_SEED
from dpci.recommend.search import MAX_MOVE
from dpci.spec import ReleaseSpec
from ui.app_state import AppState
from ui.datasets import dataset_key, load_data
from ui.settings import C_VALUES, fmt_c
from ui.state import UNUSED, set_setting


@dataclass(frozen=True)
class ThetaReach:
    """Where the settings give no interval for θ: the least budget on the notion's stops that gives one with
    these features, and the most features (the d control) that give one at this budget, with the slider's
    recommended c there and their names. None: none does."""

    budget: float | None
    d: int | None
    c: float | None
    features: tuple[str, ...] = ()


@dataclass(frozen=True)
class Advice:
    """What the c control says: the recommendation (None where there is none), the slider's value for
    it and the prediction there, and a message (why there is none, or a caution). ``no_theta``: θ was asked
    and no c gives it; ``reach`` then says what would."""

    recommendation: Recommendation | None
    slider_c: float | None
    at_slider: Prediction | None
    message: str = ""
    no_theta: bool = False
    reach: ThetaReach | None = None


def data_shape(s: AppState) -> tuple[int, int] | None:
    """(n, d) of the rows in use, d counting the constant (None until there are rows, e.g. no upload)."""
    try:
        X = load_data(s)[0]
    except (DataValidationError, ValueError):
        return None
    return X.shape


#: Rows of a shipped dataset the widths are predicted on: a subset drawn with a public seed keeps the
#: rows' geometry (what the noise of objective perturbation divides by) and a search under a second.
PREDICTION_ROWS = 4_000
NO_PREDICTION_ON_UPLOADS = (
    "No recommended c for your own data: how wide an interval is at a given c depends on how your features "
    "spread, which only your private rows know, so a prediction could be off by any factor. Choose c on a "
    "stand-in (the sweep pages over c) and keep it."
)


def prediction_rows(s: AppState):
    """The rows the width at each c is predicted on: a shipped dataset's own (public: reading them costs
    nothing and gives their real geometry). None for an upload, whose geometry is private."""
    if s.data.dataset == "upload":
        return None
    X, y = load_data(s)[:2]
    if len(X) > PREDICTION_ROWS:
        rows = np.random.default_rng(PUBLIC_SEED).choice(len(X), PREDICTION_ROWS, replace=False)
        X, y = X[rows], y[rows]
    return X, y


NO_THETA_AT_ANY_C = (
    "No c gives an interval for θ here ({budget}, n = {n:,}, {d} coefficients): on this dataset's public rows "
    "most releases' private Hessians would have a direction the data say too little about to undo the penalty."
)


def advise(s: AppState, n: int, d: int) -> Advice:
    """The recommendation for these settings on n rows and d coefficients (cached: the same public facts
    and rows give the same answer)."""
    if not registry.get(s.spec.method).uses_c:
        return Advice(
            None,
            None,
            None,
            f"{_capital(registry.get(s.spec.method).label)} has no c: its interval is for θ without a penalty.",
        )
    rows = prediction_rows(s)
    if rows is None:
        return Advice(None, None, None, NO_PREDICTION_ON_UPLOADS)
    advice = _advise(n, d, *_facts(s), dataset_key(s), rows)
    if not advice.no_theta:
        return advice
    reach = theta_reach(s, n, d, rows)
    return replace(advice, reach=reach, message=f"{advice.message} {_say_reach(s, reach)} No privacy cost.")


def theta_reach(s: AppState, n: int, d: int, rows) -> ThetaReach:
    """What gives an interval for θ where these settings give none, predicted on the dataset's public rows
    as the recommendation is: the least budget among the notion's stops above this one, with these
    features; and the largest d below this one whose first features give one at this budget."""
    budgets = tuple(b for b in s.notion.stops if b > s.spec.budget)
    facts = _facts(s)
    budget = _least_budget(n, d, budgets, *facts[:2], *facts[3:], dataset_key(s), rows)  # all but the budget
    for fewer in range(s.data.d - 1, 0, -1):
        smaller = replace(s, data=replace(s.data, d=fewer))
        shape, rows = data_shape(smaller), prediction_rows(smaller)
        if shape is None or rows is None:
            break
        advice = _advise(*shape, *_facts(smaller), dataset_key(smaller), rows)
        if advice.recommendation is not None and advice.recommendation.from_release:
            names = load_data(smaller)[2]
            return ThetaReach(budget, fewer, advice.slider_c, tuple(name for name in names if name != "const"))
    return ThetaReach(budget, None, None)


def _say_reach(s: AppState, reach: ThetaReach) -> str:
    """What :func:`theta_reach` found, in words."""
    say = s.notion.say
    if reach.budget is not None:
        budget = f"With these features θ has one from {say(reach.budget)}."
    else:
        budget = f"With these features no budget up to {say(s.notion.stops[-1])} gives one."
    if reach.d is not None:
        some = "feature" if reach.d == 1 else f"{reach.d} features"
        verb = "gives" if reach.d == 1 else "give"
        fewer = (
            f"The first {some} ({', '.join(reach.features)}) {verb} one at {say(s.spec.budget)} (c = {fmt_c(reach.c)})."
        )
    else:
        fewer = "Fewer features give none at this budget either."
    return (
        f"{budget} {fewer} There, about half the releases or more give one. Or choose θ₀(c) under *Intervals for* "
        "for its recommended c."
    )


def _use_settings(values: dict) -> None:
    """Set several settings at once (a button's callback)."""
    for name, value in values.items():
        set_setting(name, value)


@st.cache_data(show_spinner=False, max_entries=128)
def _least_budget(n, d, budgets, method, privacy, loss, split, alpha, estimand, bound, rows_key, _rows):
    """:func:`dpci.recommend.theta_reach.least_budget_for_theta` on the rows ``rows_key`` names."""
    facts = dict(method=method, privacy=privacy, loss=loss, split=split, alpha=alpha, estimand=estimand)
    return least_budget_for_theta(n, d, budgets, theta_bound=bound, stand_in=_rows, **facts)


@st.cache_data(show_spinner=False, max_entries=512)
def _advise(n, d, method, privacy, budget, loss, split, alpha, estimand, bound, rows_key, _rows) -> Advice:
    """``rows_key`` names ``_rows`` (the rows are not hashed: the key says which they are)."""
    chosen = registry.get(method)
    facts = dict(method=method, privacy=privacy, budget=budget, loss=loss, split=split, alpha=alpha)
    facts.update(estimand=estimand, theta_bound=bound, stand_in=_rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what they warn is in the recommendation's advice
        try:
            rec = recommend_c(n, d, **facts)
        except ValueError as err:
            return Advice(None, None, None, str(err))
        if chosen.own_c(_measurement(facts), n, d) is not None:
            return Advice(rec, None, rec, rec.advice)
        if not math.isfinite(rec.width):  # no c gives an interval for theta: nothing to press
            said = NOTIONS[privacy].say(budget)
            return Advice(None, None, None, NO_THETA_AT_ANY_C.format(budget=said, n=n, d=d), no_theta=True)
        if rec.moved > MAX_MOVE and rec.estimand == "regularised":  # every c shrinks what it estimates
            return Advice(None, None, None, f"{rec.advice} No privacy cost.")
        slider_c, at_slider = _on_slider(rec, n, d, facts)
    return Advice(rec, slider_c, at_slider, rec.advice)


def _measurement(facts):
    """The measurement of these public facts: the spec's privacy map (the one the ledger charges)."""
    spec = ReleaseSpec(facts["method"], facts["privacy"], facts["budget"], facts["split"], facts["loss"])
    return spec.measure()


def _on_slider(rec: Recommendation, n, d, facts) -> tuple[float, Prediction]:
    """The slider value next to the recommended c with the better predicted score (among those the method
    runs at without its caution and that keep their level); the recommendation itself if none."""
    below = [v for v in C_VALUES if v <= rec.c][-1:]
    above = [v for v in C_VALUES if v >= rec.c][:1]
    best = (math.inf, None, None)
    measurement = _measurement(facts)
    for c in dict.fromkeys(below + above):
        try:
            if measurement.method.advice(measurement.at_c(c), n) is not None:
                continue
            at = predict(n, d, c, **facts)
        except ValueError:
            continue
        score = at.score if at.coverage >= rec.coverage - 0.02 else math.inf
        if score < best[0]:
            best = (score, c, at)
    if best[1] is None:
        return rec.c, rec
    return best[1], best[2]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def describe_prediction(at: Prediction) -> str:
    """The predicted width and, for θ₀(c), the size of what it estimates (the score it was chosen by)."""
    if at.from_release:
        some = "" if at.given >= 1.0 else "; some releases give none"
        return f"width ≈ {at.width:.2g} for θ where a release gives one, the correction's allowance ±{at.bias:.2g} included{some}"
    if at.bias is not None:
        return f"width ≈ {at.width:.2g}, predicted bias ±{at.bias:.2g} included"
    return f"width ≈ {at.width:.2g}, a typical coefficient of θ₀(c) ≈ {at.typical:.2g}"


DEFERRED = "_c_recommendation_slot"  # (its place in the sidebar, the settings, the data's shape) until drawn


def c_recommendation(sb, s: AppState, defer: bool = False) -> None:
    """Under the c control: the recommended c for these settings, its predicted width and bias, and a
    button that uses it. ``defer``: only keep its place; :func:`draw_deferred_recommendation` draws it
    there later in the run (a new ε costs a new search, about 0.1-0.2 s, which then no longer comes
    before the chart)."""

    shape = data_shape(s)
    if shape is None or "c" in st.session_state.get(UNUSED, ()):  # a page that sets c itself (a sweep over c)
        return
    if defer:
        st.session_state[DEFERRED] = (sb.container(), s, shape)
        return
    _draw_recommendation(sb, s, shape)


def draw_deferred_recommendation() -> None:
    """Draw the recommendation whose place the sidebar kept in this run (``defer``), if any."""
    kept = st.session_state.pop(DEFERRED, None)
    if kept is not None:
        _draw_recommendation(*kept)


def _draw_recommendation(sb, s: AppState, shape: tuple[int, int]) -> None:
    advice = advise(s, *shape)
    rec = advice.recommendation
    if rec is None:
        sb.caption(advice.message)
        reach = advice.reach
        if reach is not None and reach.d is not None:
            sb.button(
                f"Use d = {reach.d} and c = {fmt_c(reach.c)} (an interval for θ)",
                on_click=_use_settings,
                args=({"d": reach.d, "c": reach.c},),
                width="stretch",
                key="use_theta_reach",
            )
        return
    if advice.slider_c is None:  # a method that picks its own c
        sb.caption(f"{advice.message} Predicted: {describe_prediction(rec)}.")
        return
    now = _at_current(s, *shape)
    here = (
        f" At c = {fmt_c(s.spec.c)}: width ≈ {now.width:.2g}."
        if now is not None and s.spec.c != advice.slider_c
        else ""
    )
    wide = (
        f" ⚠️ Even so too wide to tell a typical coefficient (≈ {rec.typical:.2g}) from 0: more budget or rows help."
        if not rec.useful
        else ""
    )
    target = (
        " The interval is for θ₀(c), which changes with c: at another c (after a new ε, say) it estimates "
        "coefficients shrunk differently, so it can be wider even with more budget."
        if rec.bias is None
        else ""
    )
    sb.caption(
        f"**Recommended: c = {fmt_c(advice.slider_c)}** ({describe_prediction(advice.at_slider)}).{here}{wide} "
        f"Predicted on this dataset's own public rows: no privacy cost.{target}"
    )
    if s.spec.c != advice.slider_c:
        sb.button(
            f"Use the recommended c = {fmt_c(advice.slider_c)}",
            on_click=set_setting,
            args=("c", advice.slider_c),
            width="stretch",
            key="use_recommended_c",
        )


def _facts(s: AppState) -> tuple:
    """What a prediction of width depends on besides n, d, c and the data: the cached functions' keys."""
    return (
        s.spec.method,
        s.spec.privacy,
        s.spec.budget,
        s.spec.loss,
        tuple(s.spec.split),
        s.spec.alpha,
        *_estimand(s),
    )


def _estimand(s: AppState) -> tuple[str | None, float | None]:
    """(estimand, theta_bound) of :func:`dpci.recommend_c` for the interval the pages show: theta_0(c)'s when
    chosen; theta's with the stated bound B; else the estimators' default (None: theta from the release
    where the method and model give it, theta_0(c) where they do not)."""
    if s.view.estimand == "regularised":
        return "regularised", None
    if s.view.theta_bound > 0:
        return "unregularised", float(s.view.theta_bound)
    return None, None


def _at_current(s: AppState, n: int, d: int) -> Prediction | None:
    rows = prediction_rows(s)
    if rows is None:
        return None
    return _predict(n, d, s.spec.c, *_facts(s), dataset_key(s), rows)


@st.cache_data(show_spinner=False, max_entries=512)
def _predict(
    n, d, c, method, privacy, budget, loss, split, alpha, estimand, bound, rows_key, _rows
) -> Prediction | None:
    if not registry.get(method).uses_c:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return predict(
                n,
                d,
                c,
                method=method,
                privacy=privacy,
                budget=budget,
                loss=loss,
                split=split,
                alpha=alpha,
                estimand=estimand,
                theta_bound=bound,
                stand_in=_rows,
            )
        except ValueError:
            return None


def recommended_slider_c(s: AppState, n: int, d: int) -> float | None:
    """The slider's recommended c for these settings (None where there is none)."""
    return advise(s, n, d).slider_c


def recommended_cs(s: AppState, pairs, ns, d: int, epsilon: float, delta=None) -> dict:
    """(method, notion, n) -> the recommended c at each n of a sweep (its budget as the sweep gives it:
    budget_for), for the pages that sweep c to mark it; a method without one is left out."""
    from dpci.experiments.sweeps import budget_for

    marks = {}
    for method, notion in pairs:
        budget = budget_for(notion, epsilon, delta)
        for n in ns:
            facts = (method, notion, budget, s.spec.loss, None, s.spec.alpha, *_estimand(s))
            rec = _advise(int(n), int(d), *facts, "reference", None).recommendation  # the sweeps' stand-in
            if rec is not None:
                marks[(method, notion, n)] = rec.c
    return marks
