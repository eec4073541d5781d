"""What the sweep pages tune on: by default a stand-in built from the data's public facts (no
privacy spent, dpci.data.standin); the real data only by an explicit choice, labelled not private
wherever its results appear and recorded on the privacy ledger. And at which privacy zCDP meets epsilon-DP.
"""

from __future__ import annotations

import streamlit as st

from dpci.data.preprocessing import CONSTANT_NAME
from dpci.data.standin import PublicFacts, stand_in
from dpci.presentation.figures import method_label
from dpci.presentation.tables import escape_markdown
from ui import privacy
from ui.app_state import AppState
from ui.data import explain_error, load_data, loader
from ui.state import kept_widget

STAND_IN = "A stand-in from public facts (costs no privacy)"
REAL = "The real data (not private)"
PAPER_RHO = "the paper's ρ = ε²/2 (a weaker guarantee)"
EQUAL = "equal (ε, δ), δ from the sidebar"


REAL_RELEASES = "The real data (private releases, on the privacy ledger)"

#: The sweep pages' introductions, under their titles.
COVERAGE_INTRO = (
    "A 95% interval should contain the true coefficient at least 95% of the time (**coverage**) while staying "
    "short (**length**). With few rows, privacy noise dominates and intervals can miss. These heatmaps repeat "
    "each method on resampled subsets of the data (Figures 9 to 12 of the paper); the last view asks how many "
    "rows a private interval needs to be as short as a non-private one (Figure 13). The budget axis is ε; zCDP "
    "methods run at equal (ε, δ), or at the paper's ρ = ε²/2, a weaker guarantee."
)
COMPARE_INTRO = (
    "Objective or output perturbation, pure ε-DP or ρ-zCDP: which gives the shortest honest intervals? Solid "
    "lines are the private intervals' mean length; dashed lines the **variability intervals**, the true spread "
    "of each method's estimate, a lower bound no private interval can beat (Figures 14 to 16). The gap is the "
    "cost of estimating the interval privately."
)


def source(s: AppState, releases: bool = False) -> str:
    """The data a sweep runs on: the synthetic data as they are (public), else the user's choice.
    ``releases``: what runs on the real data is a private release (an accuracy-first search), not
    a non-private sweep."""
    if s.data.dataset == "synthetic":
        st.caption("The synthetic data are public (no real people): sweeps run on them directly.")
        return "synthetic"
    real = REAL_RELEASES if releases else REAL
    choice = kept_widget(
        st.radio,
        "Run on",
        [STAND_IN, real],
        "sweep_source",
        horizontal=True,
        help="Every look at the real data is a privacy cost, and a choice made from it is never paid for. The "
        "stand-in has only the public facts of your data (n, the feature names) and costs nothing.",
    )
    if choice == STAND_IN:
        facts = _facts(s, s.data.d)
        st.caption(
            f"Stand-in: synthetic rows with {escape_markdown(facts.describe())}; labels from a public guess of the coefficients."
        )
        return "stand-in"
    if releases:
        st.info(
            "Running on the real data: every search is a private release, paid for on the privacy ledger before it runs."
        )
    else:
        st.warning(
            "Running on the real data: the results are computed without privacy and are **not private**; a split "
            "or c chosen from them is chosen from the data, and Present will say so."
        )
    return "real"


def _facts(s: AppState, d: int) -> PublicFacts:
    """n and the feature names: public facts (the rows are read only for their count and names)."""
    X, _, names, _ = load_data(s.changed(d=int(d)))
    return PublicFacts(len(X), tuple(v for v in names if v != CONSTANT_NAME), privacy.dataset_label(s))


def row_choices(s: AppState, options, default):
    """(choices, default) of a sweep page's row counts: only those the data have (an upload may have
    fewer rows than the page's usual choices, and a larger n would only end in an error)."""
    try:
        rows = len(load_data(s.changed(n=0))[0])
    except ValueError:  # no data yet: the page says so where it loads them
        return list(options), default
    kept = [v for v in options if v <= rows] or [min(options)]
    if isinstance(default, list):
        return kept, [v for v in default if v in kept] or kept[:1]
    return kept, max((v for v in kept if v <= default), default=kept[0])


def skipped_note(frame, axes) -> None:
    """Say which settings a sweep skipped (``skip_invalid``: objective perturbation with c too small
    there) and how to include them, naming each by its method and its ``axes`` values."""
    if "skipped" not in frame:
        return
    rows = frame[frame["skipped"].fillna("").astype(str) != ""]
    if rows.empty:
        return
    names = [
        f"{method_label(r['mechanism'], r['privacy'])} at "
        + ", ".join(f"{'ε' if a == 'epsilon' else a} = {r[a]:g}" for a in axes if a in r)
        for _, r in rows.iterrows()
    ]
    st.warning(
        escape_markdown(
            f"Skipped {len(rows)} setting{'s' if len(rows) > 1 else ''}: {'; '.join(names)}. Objective "
            f"perturbation cannot run there with the sidebar's c: {rows['skipped'].iloc[0].split(': ', 1)[-1]}"
            f"{' for the first' if len(rows) > 1 else ''}. Raise c in the sidebar to include them."
        )
    )


def sweep_source(s: AppState):
    """(where, load) of a page's sweeps: :func:`source` and :func:`sweep_loader`; an error that stops
    the data from loading is explained and the page stops."""
    try:
        where = source(s)
        load = sweep_loader(s, where)  # here: the sweep's thread cannot read the session's upload
    except ValueError as err:
        explain_error(err)
        st.stop()
    return where, load


def sweep_loader(s: AppState, where: str):
    """``load(d)`` for the sweeps on the chosen source (all rows, as :func:`ui.data.loader`)."""
    real = loader(s)  # built here, in the page's run (the sweep calls it from a background thread)
    if where != "stand-in":
        return real

    label = privacy.dataset_label(s)

    def load(d):
        X, _, names = real(d)  # only the count of rows and the names are read
        return stand_in(PublicFacts(len(X), tuple(v for v in names if v != CONSTANT_NAME), label))

    return load


def sweep_arrays(s: AppState, where: str):
    """(X, y, names) at the settings' d and n on the chosen source."""
    if where != "stand-in":
        X, y, names, _ = load_data(s)
        return X, y, names
    return stand_in(_facts(s, s.data.d))


def note_real_sweep(s: AppState, where: str, what: str, key) -> None:
    """A sweep that ran on the real data goes on the privacy ledger as a result no guarantee covers."""
    if where == "real":
        privacy.note_not_private(s, f"sweep:{what}:{hash(key)}", f"{what} run on the real data")


def note_chosen_from_data(s: AppState, where: str, what: str) -> None:
    if where == "real":
        privacy.note_not_private(s, f"chosen:{what}", f"{what} chosen from a sweep on the real data")


def comparison_delta(s: AppState, pairs) -> float | None:
    """None: zCDP methods run at the paper's rho = epsilon^2/2; else the delta of an equal-(epsilon,
    delta) comparison. Asked only when the chosen methods mix the two notions."""
    if len({p for _, p in pairs}) < 2:
        return None
    choice = kept_widget(
        st.radio,
        "Compare zCDP with ε-DP at",
        [EQUAL, PAPER_RHO],
        "equal_privacy",
        horizontal=True,
        help="At the paper's ρ = ε²/2, a zCDP method promises much less than ε-DP: ρ = 0.5 is (5.76, 10⁻⁶)-DP, "
        "not (1, 0). At equal (ε, δ) both promise the same.",
    )
    return s.view.delta if choice == EQUAL else None


PRECISIONS = (0.0, 0.005, 0.01, 0.02)  # 0: every repetition


def coverage_precision(container, key: str) -> float | None:
    """The sweep's stopping rule, chosen beside its repetitions: a setting's coverage run stops
    once the coverage's standard error is below the chosen value (checked from 100 repetitions on), else
    it runs every repetition. Returns the ``precision`` for :class:`dpci.experiments.sweeps.Replication`."""
    chosen = kept_widget(
        container.select_slider,
        "Stop a setting early at coverage ±",
        list(PRECISIONS),
        key,
        default=0.01,
        format_func=lambda p: "never" if not p else f"{100 * p:g}%",
        help="Each setting stops once its coverage's standard error is below this (checked from 100 repetitions "
        "on); 'never' runs every repetition. Fewer repetitions, same answer within the error shown.",
    )
    return float(chosen) or None
