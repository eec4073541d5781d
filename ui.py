"""Streamlit helpers shared by app.py and pages/: the settings sidebar, cached data,
background jobs, URL sharing and error display. All computation lives in dpci.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, replace

import numpy as np
import streamlit as st
from threadpoolctl import threadpool_limits

import dpci
from dpci.accounting import default_split
from dpci.bootstrap import iter_variability
from dpci.data import load_adult, make_synthetic_logistic, population_theta0
from dpci.exceptions import DataValidationError
from dpci.jobs import JobSlot
from dpci.losses import get_loss
from dpci.mechanisms import smallest_valid_c, suggest_c
from dpci.sweeps import subsample

# One BLAS thread: the background jobs run in Python threads of this server process, and
# multi-threaded BLAS busy-waiting against them slowed the bootstrap more than tenfold.
threadpool_limits(limits=1)
# The bootstrap runs in worker processes (joblib), so the server's own Python thread,
# which draws the pages, never competes with it for the interpreter lock.
VI_JOBS = 2

DATASETS = ("Adult (UCI census)", "Synthetic (known truth)", "Uploaded CSV")
MODELS = {"Logistic regression": "logistic", "Huberized SVM": "huber"}
MECHANISMS = {"Objective perturbation": "objective", "Output perturbation": "output"}
PRIVACY = {"Pure ε-DP": "pure", "ρ-zCDP": "zcdp"}
EPSILONS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
RHOS = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0)
C_VALUES = tuple(float(f"{m}e{e}") for e in range(-7, 0) for m in (1, 2, 5)) + (1.0,)
LEVELS = (0.8, 0.9, 0.95, 0.99)
MC_SAMPLES = (1_000, 2_000, 5_000, 10_000, 20_000)
VI_REPLICATES = (500, 1_000, 2_000, 5_000, 10_000)
DELTAS = tuple(10.0**-k for k in range(3, 13))
SYNTHETIC_THETA = (1.5, -1.0, 0.5, -0.3, 0.8, 0.2, -0.6, 1.0, -1.2, 0.4)  # the truth, repeated as needed (+ const 0.3)


@dataclass(frozen=True)
class Settings:
    """Everything the Explorer's results depend on (also what a shared URL stores)."""

    dataset: str = DATASETS[0]
    d: int = 10
    n: int = 0  # 0: all rows
    model: str = "Logistic regression"
    h: float = 0.5
    mechanism: str = "Objective perturbation"
    privacy: str = "Pure ε-DP"
    epsilon: float = 1.0
    rho: float = 0.5
    phi1: float = 0.65
    phi2_rest: float = 0.5
    c: float = 1e-3
    level: float = 0.95
    m: int = 10_000
    vi_replicates: int = 10_000
    seed: int = 0
    delta: float = 1e-6

    @property
    def mech(self):
        return MECHANISMS[self.mechanism]

    @property
    def priv(self):
        return PRIVACY[self.privacy]

    @property
    def loss(self):
        return get_loss(MODELS[self.model], self.h)

    @property
    def budget(self):
        return self.epsilon if self.priv == "pure" else self.rho

    @property
    def split(self):
        rest = 1.0 - self.phi1
        return (self.phi1, rest * self.phi2_rest, rest * (1.0 - self.phi2_rest))

    @property
    def alpha(self):
        return 1.0 - self.level


FIELDS = {f: type(getattr(Settings(), f)) for f in Settings.__dataclass_fields__}
STORE = "dpci_settings"  # session_state key of the settings dict; it outlives the widgets
WIDGET = "w_"  # session_state prefix of the settings widgets (Streamlit drops a widget's state when a
# page does not draw it, so the widgets only mirror the store)
CHOICES = {"epsilon": EPSILONS, "rho": RHOS, "c": C_VALUES, "level": LEVELS, "m": MC_SAMPLES,
           "vi_replicates": VI_REPLICATES, "delta": DELTAS}


def _coerce(name, raw):
    kind = FIELDS[name]
    return kind(float(raw)) if kind is int else kind(raw)


def _nearest(value, choices):
    return min(choices, key=lambda v: abs(math.log(v) - math.log(value)) if v > 0 and value > 0 else abs(v - value))


def settings_store() -> dict:
    """The session's settings, filled once from the URL's query parameters, else the defaults."""
    if STORE not in st.session_state:
        values = asdict(Settings())
        for name in values:
            if name in st.query_params:
                try:
                    values[name] = _coerce(name, st.query_params[name])
                except (TypeError, ValueError):
                    st.session_state["_url_warning"] = f"Ignored the address's value for {name!r}."
        for name, choices in CHOICES.items():  # values from a URL must be among the widgets' options
            values[name] = _nearest(values[name], choices)
        for name, choices in (("dataset", DATASETS), ("model", MODELS), ("mechanism", MECHANISMS),
                              ("privacy", PRIVACY)):
            if values[name] not in choices:
                values[name] = list(choices)[0]
        st.session_state[STORE] = values
    return st.session_state[STORE]


def current_settings() -> Settings:
    return Settings(**settings_store())


def share_settings(settings: Settings):
    """Mirror the settings in the URL so a teacher can reopen or share the same configuration."""
    st.query_params.from_dict({k: str(v) for k, v in asdict(settings).items()})


def set_setting(name, value):
    """Set a setting and the widget showing it (usable as a button callback)."""
    settings_store()[name] = value
    st.session_state[WIDGET + name] = value


def _restore_table2():
    store = settings_store()
    phi1, phi2, phi3 = default_split(MECHANISMS[store["mechanism"]], PRIVACY[store["privacy"]])
    set_setting("phi1", phi1)
    set_setting("phi2_rest", round(phi2 / (phi2 + phi3), 3))


def _fmt_c(v):
    return f"{v:.0e}".replace("e-0", "e-")


def _widget(factory, label, name, *args, **kwargs):
    """Draw a settings widget that shows, and writes back to, the store."""
    key = WIDGET + name
    if key not in st.session_state:
        st.session_state[key] = settings_store()[name]
    value = factory(label, *args, key=key, **kwargs)
    settings_store()[name] = value
    return value


def sidebar(show_vi=True):
    """The settings sidebar; returns the current :class:`Settings`."""
    settings_store()
    sb = st.sidebar
    if "_url_warning" in st.session_state:
        sb.warning(st.session_state.pop("_url_warning"))
    sb.header("Data")
    _widget(sb.selectbox, "Dataset", "dataset", DATASETS,
            help="Adult: 30,162 people from the 1994 US census, predicting income > $50K.")
    _widget(sb.slider, "Features d (plus a constant)", "d", 1, 20,
            help="The first d features after one-hot encoding; the paper uses d = 10.")
    _widget(sb.number_input, "Rows n (0 = all)", "n", min_value=0, step=500,
            help="A fixed random subset of this many rows; smaller n shows how intervals widen.")
    sb.header("Model")
    model = _widget(sb.radio, "Model", "model", list(MODELS), horizontal=True, label_visibility="collapsed")
    if MODELS[model] == "huber":
        _widget(sb.slider, "Huber width h", "h", 0.05, 2.0, step=0.05)
    _widget(sb.radio, "Mechanism", "mechanism", list(MECHANISMS),
            help="Objective perturbation adds noise to the training objective (Algorithm 1); output "
                 "perturbation adds it to the trained coefficients (Algorithm 4).")
    sb.header("Privacy")
    privacy = _widget(sb.radio, "Privacy notion", "privacy", list(PRIVACY), horizontal=True)
    if PRIVACY[privacy] == "pure":
        _widget(sb.select_slider, "Total budget ε", "epsilon", EPSILONS,
                help="Smaller ε means stronger privacy and wider intervals.")
    else:
        _widget(sb.select_slider, "Total budget ρ", "rho", RHOS,
                help="ρ-zCDP; ρ = ε²/2 matches ε-DP in the paper's comparisons.")
        _widget(sb.select_slider, "δ for the (ε, δ) equivalent", "delta", DELTAS, format_func=lambda v: f"{v:.0e}")
    _widget(sb.slider, "φ1: share for the coefficients", "phi1", 0.05, 0.99, step=0.01)
    _widget(sb.slider, "φ2: share of the rest for the Hessian", "phi2_rest", 0.05, 0.95, step=0.025,
            help="The covariance gets the remainder, so φ1 + φ2 + φ3 = 1 always.")
    sb.caption("Split φ1 / φ2 / φ3 = " + " / ".join(f"{v:.3f}" for v in current_settings().split))
    sb.button("Paper's split (Table 2)", on_click=_restore_table2, width="stretch")
    sb.header("Interval")
    _widget(sb.select_slider, "Regularisation c", "c", C_VALUES, format_func=_fmt_c,
            help="c ||θ||² in the objective (the paper uses 0.001).")
    _widget(sb.select_slider, "Confidence level", "level", LEVELS, format_func=lambda v: f"{100 * v:g}%")
    _widget(sb.select_slider, "Monte Carlo samples m", "m", MC_SAMPLES)
    if show_vi:
        _widget(sb.select_slider, "Bootstrap replicates (variability)", "vi_replicates", VI_REPLICATES)
    _widget(sb.number_input, "Seed", "seed", min_value=0, max_value=2**31 - 1, step=1)
    return current_settings()


@st.cache_data(show_spinner=False, max_entries=32)
def _load_builtin(dataset: str, d: int, c: float, loss_name: str, h: float):
    """(X, y, feature names, truth or None) for a built-in dataset."""
    if dataset == DATASETS[0]:
        ds = load_adult(d=d)
        return ds.X, ds.y, list(ds.feature_names), None
    theta = np.append(np.resize(SYNTHETIC_THETA, d), 0.3)
    X, y = make_synthetic_logistic(50_000, theta, random_state=20261122)
    truth = population_theta0(theta, c, loss=loss_name, h=h if loss_name == "huber" else None)
    return X, y, [f"x{j + 1}" for j in range(d)] + ["const"], truth


def dataset_key(s: Settings) -> str:
    """A short key naming the rows in use (for caches and job keys)."""
    upload = st.session_state.get("upload_digest", "") if s.dataset == DATASETS[2] else ""
    return f"{s.dataset}|{s.d}|{s.n}|{upload}"


def load_data(s: Settings):
    """(X, y, names, truth) for the settings, or raise DataValidationError with a message."""
    if s.dataset == DATASETS[2]:
        upload = st.session_state.get("upload_result")
        if upload is None:
            raise DataValidationError("No CSV uploaded yet: upload one above, or pick Adult or Synthetic.")
        ds = _upload_dataset(st.session_state["upload_digest"], s.d)
        X, y, names, truth = ds.X, ds.y, list(ds.feature_names), None
    else:
        X, y, names, truth = _load_builtin(s.dataset, s.d, s.c, MODELS[s.model], s.h)
    if s.n and s.n < len(X):
        if s.n < 100:
            raise DataValidationError(f"n = {s.n} is too small: use at least 100 rows (or 0 for all).")
        X, y = subsample(X, y, s.n, seed=0)
    return X, y, names, truth


@st.cache_data(show_spinner=False, max_entries=8)
def _upload_dataset(digest: str, d: int):
    """The uploaded file preprocessed with its first d features (digest names the upload)."""
    result = st.session_state["upload_result"]
    return result.to_dataset(d=min(d, len(result.schema.feature_names())))


def upload_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


@st.cache_data(show_spinner=False, max_entries=64)
def cached_release(key: str, s: Settings):
    """One private release (Algorithm 3 or 5) for the settings; key names the data."""
    X, y, names, truth = load_data(s)
    rel = dpci.private_confidence_intervals(X, y, s.loss, s.mech, s.priv, s.budget, s.split, s.c, s.alpha, s.m,
                                            random_state=s.seed)
    return rel


@st.cache_data(show_spinner=False, max_entries=64)
def cached_nonprivate(key: str, s: Settings):
    X, y, names, truth = load_data(s)
    return dpci.nonprivate_confidence_intervals(X, y, s.loss, c=s.c, alpha=s.alpha)


def c_problem(s: Settings, n: int):
    """A message and a suggested c when objective perturbation cannot run with this c, else None."""
    if s.mech != "objective":
        return None
    alloc = dpci.allocate(s.budget, s.split, s.mech, s.priv)
    bound = smallest_valid_c(alloc.coef_epsilon, n, s.loss.t)
    if s.c > bound:
        return None
    suggestion = next((v for v in C_VALUES if v > bound * 1.01), None)
    return (f"c = {_fmt_c(s.c)} is too small for objective perturbation with n = {n:,} and ε₁ = "
            f"{alloc.coef_epsilon:.3g}: Algorithm 1 needs c > {bound:.3g}.", suggestion or suggest_c(bound))


class _NoJob:
    """Stands in for a job not started yet."""

    latest = None
    error = None
    done = False
    key = None
    elapsed = 0.0


NO_JOB = _NoJob()


def variability_key(s: Settings):
    return (dataset_key(s), s.model, s.h, s.mech, s.priv, round(s.budget * s.split[0], 12), s.c, s.seed,
            s.vi_replicates)


def existing_variability_job(s: Settings):
    """The variability job for these settings if one was started, else None."""
    slot = st.session_state.get("vi_slot")
    job = slot.job if slot is not None else None
    return job if job is not None and job.key == variability_key(s) else None


MILESTONES = (50, 100, 200, 500, 1_000, 2_000, 3_000, 5_000, 7_500, 10_000)


def shown_variability(state):
    """Variability bounds to draw, refreshed only at milestones of the replicate count: between
    them the chart stays identical, so browsers are not asked to redraw it twice a second."""
    if state is None or state.done < MILESTONES[0]:
        return None
    reached = max([m for m in MILESTONES if m <= state.done] + ([state.done] if state.finished else []))
    return column_bounds(state.estimates[:reached], state.alpha)


def column_bounds(estimates, alpha):
    from dpci.intervals import column_quantiles

    return column_quantiles(estimates, [alpha / 2, 1 - alpha / 2]).T


def variability_job(s: Settings, X, y):
    """The background job computing variability intervals for these settings (kept across reruns).

    The key leaves out what variability intervals do not depend on (φ2, φ3, m, the level),
    so moving those sliders does not restart it.
    """
    slot = st.session_state.setdefault("vi_slot", JobSlot())
    key = variability_key(s)
    kwargs = dict(mechanism=s.mech, privacy=s.priv, budget=s.budget, split=s.split, c=s.c, alpha=s.alpha,
                  n_replicates=s.vi_replicates, random_state=s.seed)
    return slot.ensure(key, lambda: iter_variability(X, y, s.loss, n_jobs=VI_JOBS, low_priority=True, **kwargs))


def settings_json(s: Settings) -> str:
    return json.dumps(asdict(s), indent=2, ensure_ascii=False)


def settings_from_json(text: str) -> Settings:
    raw = json.loads(text)
    unknown = set(raw) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown settings: {', '.join(sorted(unknown))}")
    return replace(Settings(), **{k: _coerce(k, v) for k, v in raw.items()})


def explain_error(err: Exception):
    """Show a user-facing message for an exception, never a traceback."""
    st.error(str(err) if isinstance(err, ValueError) else f"Something went wrong: {type(err).__name__}: {err}")


def _read_upload(data: bytes, target, positive, features, bounds):
    """read_uploaded_csv, with its warnings collected as text instead of printed."""
    import warnings

    from dpci.data import read_uploaded_csv

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = read_uploaded_csv(data, target, positive_class=positive, features=features, bounds=bounds or None)
    return result, [str(w.message) for w in caught]


def upload_panel() -> bool:
    """Upload a CSV, choose target, positive class, features and public bounds; stores the result.

    Returns True when a usable dataset is ready.
    """
    import pandas as pd

    from dpci.data import inspect_uploaded_csv

    st.subheader("Your data")
    file = st.file_uploader("A CSV file with a header row (at most 50 MB)", type=["csv", "txt"], key="upload_file")
    if file is None:
        st.session_state.pop("upload_result", None)
        st.info("Upload a CSV to see private intervals for your own data, or pick Adult or Synthetic in the sidebar.")
        return False
    data = file.getvalue()
    try:
        summary = inspect_uploaded_csv(data)
        candidates = summary.binary_columns or summary.columns
        c1, c2 = st.columns(2)
        target = c1.selectbox("Target column (two values)", candidates, key="upload_target",
                              help="Columns with exactly two values are listed first.")
        others = [c for c in summary.columns if c != target]
        features = c2.multiselect("Features", others, default=others, key="upload_features")
        result, warnings_ = _read_upload(data, target, None, features, None)
        numeric = [col for col in result.schema.numeric_columns if col.name in features]
        bounds = {}
        if numeric:
            st.markdown("**Bounds of the numeric features.** Use bounds known *before* seeing the data (for example "
                        "from a codebook: age 0 to 120). The defaults are the observed minimum and maximum, which "
                        "are **not private**.")
            observed = pd.DataFrame({"column": [c.name for c in numeric], "lower": [c.lower for c in numeric],
                                     "upper": [c.upper for c in numeric]})
            edited = st.data_editor(observed, key="upload_bounds", hide_index=True, disabled=["column"],
                                    width="stretch")
            for (_, before), (_, after) in zip(observed.iterrows(), edited.iterrows()):
                if (after["lower"], after["upper"]) != (before["lower"], before["upper"]):
                    bounds[after["column"]] = (float(after["lower"]), float(after["upper"]))
            if bounds:
                result, warnings_ = _read_upload(data, target, None, features, bounds)
    except ValueError as err:
        st.error(str(err))
        st.session_state.pop("upload_result", None)
        return False
    for text in warnings_:
        st.warning(text)
    for note in result.notes:
        st.info(note)
    st.session_state["upload_result"] = result
    st.session_state["upload_digest"] = upload_digest(data + repr((target, features, sorted(bounds.items()))).encode())
    st.caption(f"{len(result.frame):,} usable rows ({result.n_dropped:,} dropped for missing values); "
               f"positive class: {result.schema.positive_class!r}.")
    return True


def loader(s: Settings):
    """d -> (X, y, names) for the settings' dataset (all rows), as the sweeps expect."""

    def load(d):
        X, y, names, _ = load_data(replace(s, d=int(d), n=0))
        return X, y, names

    return load


def job_slot(name: str) -> JobSlot:
    return st.session_state.setdefault(f"slot_{name}", JobSlot())


def current_job(name: str, key):
    """The page's job if it was started for exactly these inputs, else None."""
    job = job_slot(name).job
    return job if job is not None and job.key == key else None


def sweep_progress(job):
    """Show a sweep job's progress and error; return its latest state (or None)."""
    if job is None:
        return None
    state = job.latest
    if job.error:
        st.error(job.error)
    elif state is None:
        st.progress(0.0, text="Starting…")
    elif not state.finished:
        inner = state.replicates_done / state.replicates_total if state.replicates_total else 0.0
        frac = (state.settings_done + inner) / max(state.settings_total, 1)
        st.progress(min(frac, 1.0), text=f"Setting {state.settings_done + 1} of {state.settings_total}: "
                                          f"{state.replicates_done} / {state.replicates_total} repetitions, "
                                          f"{job.elapsed:.0f} s")
    else:
        st.success(f"Done: {state.settings_total} settings in {job.elapsed:.0f} s.")
    return state


def poll_interval(job, first=False):
    """How often a results fragment redraws: once a second while ``job`` runs; ``first`` asks for
    one quick tick (to start a job right after the first draw)."""
    if first:
        return 0.5
    return 1.0 if job is not None and not job.done else None


def rerun_once_when_done(job, name):
    """After a job ends, one full rerun so the polling fragment stops."""
    if job is not None and job.done and st.session_state.get(f"_done_{name}") != job.key:
        st.session_state[f"_done_{name}"] = job.key
        st.rerun()
