"""The data and the cached computations the pages draw (built-in datasets or an upload, private
and non-private releases, the bound on c), and how their errors are shown.
"""

from __future__ import annotations

import json

import streamlit as st

import dpci
from dpci import methods as registry
from dpci.data import load_adult
from dpci.exceptions import DataValidationError, RegularisationTooSmall
from dpci.losses import loss_to_dict
from dpci.presentation.odds import feature_changes
from dpci.presentation.tables import escape_markdown
from dpci.solver import ConvergenceError
from ui import privacy
from ui.app_state import AppState
from ui.datasets import dataset_key, load_data
from ui.settings import C_VALUES, fmt_c
from ui.upload import upload_dataset


@st.cache_data(show_spinner=False, max_entries=32)
def _adult_changes(d: int, scaling: str):
    return feature_changes(load_adult(d=d, normalize=scaling).preprocessor)


def public_changes(s: AppState):
    """The public change of each feature that Present states odds ratios for
    (:func:`dpci.presentation.odds.feature_changes`); None for the synthetic data (no units) and for
    rows scaled to length 1 (no odds ratio per feature)."""
    if s.data.dataset == "adult":
        return _adult_changes(s.data.d, s.data.scaling)
    if s.data.dataset == "upload" and st.session_state.get("upload_result") is not None:
        return feature_changes(upload_dataset(st.session_state["upload_digest"], s.data.d, s.data.scaling).preprocessor)
    return None


class Refused(Exception):
    """The ledger would refuse a new release of these settings (its budget cannot pay); nothing was drawn."""


def seeded_spec(s: AppState):
    """The settings' release specification with their public seed (teaching mode, and the preview's
    stand-in: reproducible and not private)."""
    return s.spec.replace(seed=s.data.seed)


def results_key(s: AppState, *extra) -> tuple:
    """The one cache key of a page's results: the rows in use and the release specification (its key,
    with the settings' seed), and what the page adds of its own (its sweep's values, its repetitions).
    Every setting a result depends on is in the specification, so no page lists settings by hand."""
    return (dataset_key(s), seeded_spec(s).key, *extra)


def fit_key(s: AppState, c: float | None = None) -> str:
    """What a non-private fit depends on: the loss with its parameters, c (the settings' unless given) and alpha."""
    return json.dumps([loss_to_dict(s.spec.loss), s.spec.c if c is None else c, s.spec.alpha])


# The caches below are keyed by what changes their result: the rows (``key``, dataset_key), the spec's key
# or the fit's, and whose ledger it is; the settings themselves (``_s``, view options included) are not hashed.
def teaching_release(key: str, s: AppState):
    """Teaching mode's release of these settings (their public seed): cached per rows, spec and visitor."""
    return _teaching_release(key, seeded_spec(s).key, privacy.dataset_ref(s).key, privacy.visitor(), s)


@st.cache_data(show_spinner=False, max_entries=64)
def _teaching_release(key: str, spec_key: str, ledger_key: str, visitor: str, _s: AppState):
    """Teaching mode's release (public seed): the ledger records it as not private (once per visitor)."""
    s = _s
    X, y, _, _ = load_data(s)
    with privacy.ledger().watching(dataset=ledger_key, session=visitor):
        return seeded_spec(s).release(X, y)


def preview_arrays(s: AppState):
    """(X, y, names) of the stand-in an upload is previewed on: synthetic rows with the upload's public
    facts only (n and the feature names, dpci.data.standin), so exploring costs nothing."""
    from dpci.data.preprocessing import CONSTANT_NAME
    from dpci.data.standin import PublicFacts, stand_in

    X, _, names, _ = load_data(s)  # read for its count of rows and its names only
    facts = PublicFacts(len(X), tuple(v for v in names if v != CONSTANT_NAME), "preview")
    return stand_in(facts)


def preview_release(key: str, s: AppState):
    """The release of these settings on the preview's stand-in (its public seed: free, nothing private)."""
    return _preview_release(key, seeded_spec(s).key, s)


@st.cache_data(show_spinner=False, max_entries=32)
def _preview_release(key: str, spec_key: str, _s: AppState):
    X, y, _ = preview_arrays(_s)
    return seeded_spec(_s).release(X, y)


def preview_nonprivate(key: str, s: AppState):
    return _preview_nonprivate(key, fit_key(s), s)


@st.cache_data(show_spinner=False, max_entries=32)
def _preview_nonprivate(key: str, fit: str, _s: AppState):
    X, y, _ = preview_arrays(_s)
    return dpci.nonprivate_confidence_intervals(X, y, _s.spec.loss, c=_s.spec.c, alpha=_s.spec.alpha)


def cached_walkthrough(key: str, s: AppState):
    """The release taken apart for the How it works page (dpci.teaching), in teaching mode: the same
    draws as the Explorer's teaching release at these settings; recorded as not private."""
    return _walkthrough(key, seeded_spec(s).key, privacy.dataset_ref(s).key, privacy.visitor(), s)


@st.cache_data(show_spinner=False, max_entries=16)
def _walkthrough(key: str, spec_key: str, ledger_key: str, visitor: str, _s: AppState):
    from dpci.teaching import walkthrough

    s = _s
    X, y, _, _ = load_data(s)
    with privacy.ledger().watching(dataset=ledger_key, session=visitor):
        return walkthrough(
            X,
            y,
            s.spec.loss,
            s.spec.method,
            s.spec.privacy,
            s.spec.budget,
            s.spec.split,
            s.spec.c,
            s.spec.alpha,
            s.spec.n_samples,
            random_state=s.data.seed,
        )


def cached_nonprivate(key: str, s: AppState, symbol: str = "θ₀(c)"):
    """The non-private reference for the estimand the chart is for (``symbol``): theta_0(c)'s fit at the
    settings' c, or theta's without penalty (logistic regression; None where the rows are separable and
    it does not exist). Recorded on the ledger as a result no guarantee covers."""
    c = 0.0 if symbol == "θ" and getattr(s.spec.loss, "curvature_drift", None) is not None else s.spec.c
    return _nonprivate(key, fit_key(s, c), privacy.dataset_ref(s).key, privacy.visitor(), c, s)


@st.cache_data(show_spinner=False, max_entries=64)
def _nonprivate(key: str, fit: str, ledger_key: str, visitor: str, c: float, _s: AppState):
    s = _s
    X, y, _, _ = load_data(s)
    with privacy.ledger().watching(dataset=ledger_key, session=visitor):
        try:
            return dpci.nonprivate_confidence_intervals(X, y, s.spec.loss, c=c, alpha=s.spec.alpha)
        except ConvergenceError:  # no unpenalised minimiser (separable rows): no reference to draw
            return None


def chosen_method(s: AppState):
    """The registered method the settings name."""
    return registry.get(s.spec.method)


def c_bound(s: AppState, n: int):
    """The bound c must exceed for the settings' method and n (None when any c > 0 works)."""
    measured = s.spec.measure()
    return measured.method.smallest_c(measured, n)


def c_problem(s: AppState, n: int):
    """(message, suggested c or None) when the method cannot run with this c (the library's
    RegularisationTooSmall, e.g. objective perturbation's Algorithm 1) or with these settings at all
    (another ValueError of its noise law: no c helps), else None."""
    measured = s.spec.measure()
    method, alloc = measured.method, measured.allocation
    try:
        method.coefficient_noise_law(measured, n)
        return None
    except RegularisationTooSmall as err:
        bound, safe = err.smallest_c, err.suggested_c
    except ValueError as err:  # settings the method cannot take at all (e.g. a loss it does not support)
        return f"{method.label[:1].upper() + method.label[1:]} cannot run with these settings: {err}", None
    eps1 = f" and ε₁ = {alloc.coef_epsilon:.3g}" if alloc.coef_epsilon is not None else ""
    message = (
        f"c = {fmt_c(s.spec.c)} is too small for {method.label} with n = {n:,}{eps1}: "
        f"it needs c > {bound:.3g}, and c ≥ {safe:.2g} for intervals that keep their coverage."
    )
    suggestion = _slider_c_at_least(safe)
    if suggestion is None:
        message += f" No c on the slider (at most 1) is large enough: {method.remedy}."
    return message, suggestion


def _slider_c_at_least(c: float):
    return next((v for v in C_VALUES if v >= c), None)


def c_caution(s: AppState, n: int):
    """(message, suggested c) when c is valid but the method advises against it (its intervals are
    likely to under-cover: :meth:`dpci.methods.Method.advice`), else None."""
    measured = s.spec.measure()
    advice = measured.method.advice(measured, n)
    if advice is None:
        return None
    suggestion = _slider_c_at_least(advice.suggested_c) if advice.suggested_c is not None else None
    return advice.message, suggestion


def loader(s: AppState):
    """d -> (X, y, names) for the settings' dataset (all rows), as the sweeps expect. What it needs
    from the session (an upload) is read here, in the page's run: the sweep calls it from a
    background thread, which cannot read the session's state."""
    if s.data.dataset == "upload":
        result = st.session_state.get("upload_result")
        if result is None:
            raise DataValidationError("No CSV uploaded yet: upload one on the Explorer, or pick Adult or Synthetic.")

        def load_upload(d):
            ds = result.to_dataset(d=min(int(d), len(result.schema.feature_names())), normalize=s.data.scaling)
            return ds.X, ds.y, list(ds.feature_names)

        return load_upload

    def load(d):
        X, y, names, _ = load_data(s.changed(d=int(d), n=0))
        return X, y, names

    return load


def explain_error(err: Exception):
    """Show a user-facing message for an exception, never a traceback."""
    text = str(err) if isinstance(err, ValueError) else f"Something went wrong: {type(err).__name__}: {err}"
    st.error(escape_markdown(text))  # messages quote column names and values from the user's file
