"""Streamlit helpers shared by app.py and pages/: the settings sidebar, cached data,
background jobs, URL sharing and error display. All computation lives in dpci.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from dataclasses import asdict, dataclass, replace

import numpy as np
import streamlit as st
from threadpoolctl import threadpool_limits

import dpci
from dpci.experiments import bootstrap
from dpci.accounting import default_split
from dpci.experiments.bootstrap import iter_variability
from dpci.data import load_adult, make_synthetic_logistic, population_theta0
from dpci.exceptions import DataValidationError
from ui.jobs import JobSlot
from dpci.losses import get_loss
from dpci.mechanisms import smallest_valid_c
from dpci.experiments.sweeps import subsample

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
# Numeric settings with a range (the sliders' ends; values from an address are clipped into it).
RANGES = {"d": (1, 20), "n": (0, 10**9), "h": (0.05, 2.0), "phi1": (0.05, 0.99), "phi2_rest": (0.05, 0.95),
          "seed": (0, 2**31 - 1)}
CHOICES = {"epsilon": EPSILONS, "rho": RHOS, "c": C_VALUES, "level": LEVELS, "m": MC_SAMPLES,
           "vi_replicates": VI_REPLICATES, "delta": DELTAS}


def _coerce(name, raw):
    """A setting's value from text (an address or a settings file); ValueError if unusable."""
    kind = FIELDS[name]
    if kind is str:
        return str(raw)
    value = float(raw)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number")
    if name in RANGES:
        low, high = RANGES[name]
        value = min(max(value, low), high)
    return kind(value)


def _nearest(value, choices):
    return min(choices, key=lambda v: abs(math.log(v) - math.log(value)) if v > 0 and value > 0 else abs(v - value))


def settings_values(raw) -> tuple[dict, list[str]]:
    """Settings from text values (an address or a settings file): unknown names and unusable values
    are ignored, numbers clipped to their range and snapped to the widgets' options. Returns the
    values and what was ignored."""
    values, ignored = asdict(Settings()), []
    for name in values:
        if name in raw:
            try:
                values[name] = _coerce(name, raw[name])
            except (TypeError, ValueError, OverflowError):
                ignored.append(name)
    for name, choices in CHOICES.items():
        values[name] = _nearest(values[name], choices)
    for name, choices in (("dataset", DATASETS), ("model", MODELS), ("mechanism", MECHANISMS),
                          ("privacy", PRIVACY)):
        if values[name] not in choices:
            values[name] = list(choices)[0]
    return values, ignored


def changed_settings(raw, values) -> list[str]:
    """The settings ``raw`` gives that could not be used as given (unusable, clipped to the range,
    snapped to the nearest option, or not a choice), as "name = given → used"."""
    changed = []
    for name, used in values.items():
        if name not in raw:
            continue
        given = str(raw[name])
        try:
            same = given == used if FIELDS[name] is str else float(given) == float(used)
        except (TypeError, ValueError):
            same = False
        if not same:
            changed.append(f"{name} = {given} → {used}")
    return changed


def settings_store() -> dict:
    """The session's settings, filled once from the URL's query parameters, else the defaults."""
    if STORE not in st.session_state:
        raw = {k: st.query_params[k] for k in st.query_params}
        values, _ = settings_values(raw)
        changed = changed_settings(raw, values)
        if changed:
            st.session_state["_url_warning"] = ("The address asked for settings the app cannot use; it uses the "
                                                f"nearest it can: {'; '.join(changed)}.")
        st.session_state[STORE] = values
    return st.session_state[STORE]


def load_settings_file(data: bytes):
    """Replace the session's settings by those of a downloaded settings file; ValueError if unusable."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"This is not a dpci settings file (JSON): {err}.") from None
    if not isinstance(raw, dict) or not set(raw) & set(FIELDS):
        raise ValueError("This JSON file holds no dpci settings; download one with 'Download these settings'.")
    values, _ = settings_values(raw)
    for name, value in values.items():
        set_setting(name, value)
    return changed_settings(raw, values)


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


def _store_widget(name):
    settings_store()[name] = st.session_state[WIDGET + name]


def _widget(factory, label, name, *args, **kwargs):
    """Draw a settings widget that shows the store and writes to it only when the user changes it.

    The widget's state is set from the store on every run: Streamlit may drop or reset the state of
    a widget that a page switch interrupted, and reading the widget back unconditionally once
    reset every slider to its minimum (settings lost on the way to another page).
    """
    key = WIDGET + name
    st.session_state[key] = settings_store()[name]
    return factory(label, *args, key=key, on_change=_store_widget, args=(name,), **kwargs)


CONTROLS_DRAWN = "_controls_drawn"  # session_state flag: this session's browser has the settings widgets


def first_paint() -> bool:
    """True on a session's first Explorer run: the chart is drawn before the settings widgets.

    A browser that loads the widgets' code together with the chart's draws the chart about half a
    second later (measured in bench/bench_app.py), so the first run sends the chart alone and its
    results fragment asks for the full page a tick later (:func:`controls_follow`).
    """
    return not st.session_state.get(CONTROLS_DRAWN) and not st.session_state.get("_chart_sent")


def waiting_sidebar():
    """A note in the sidebar where the widgets will be (see :func:`first_paint`); returns its slot,
    for a run that draws the widgets after all to clear."""
    slot = st.sidebar.empty()
    slot.caption("Loading the settings…")
    return slot


def chart_sent():
    """Note that this session's first chart has been sent to the browser."""
    st.session_state["_chart_sent"] = True


_WARMING = threading.Lock()


def warm_workers():
    """Start the bootstrap's worker processes in the background, unless they are running.

    A first paint calls this, so the bootstrap that starts at its results fragment's next tick
    finds its workers ready: starting them (each imports numpy, scipy and dpci) took a fresh
    server's first variability interval 2.3 s after the chart, against 1.1 s with running
    workers. joblib stops idle workers after 300 s, and cancelling a run stops them too, so this
    is worth checking at every first paint. Running workers are left alone: a warm-up call that
    failed while another run replaced the pool would abort, and so kill, the new pool.
    """
    if _WARMING.locked() or bootstrap.workers_running():
        return

    def warm():
        with _WARMING:
            try:
                bootstrap.warm_up_workers(VI_JOBS)
            except Exception:  # noqa: BLE001 - only a head start: the bootstrap starts them itself
                pass

    threading.Thread(target=warm, name="dpci-warm-workers", daemon=True).start()


def controls_follow():
    """At a results fragment's tick after a first paint: rerun the whole page, with the settings widgets."""
    if st.session_state.get("_chart_sent") and not st.session_state.get(CONTROLS_DRAWN):
        st.rerun(scope="app")


def sidebar(show_vi=True):
    """The settings sidebar; returns the current :class:`Settings`."""
    settings_store()
    st.session_state[CONTROLS_DRAWN] = True
    sb = st.sidebar
    if "_url_warning" in st.session_state:
        sb.warning(st.session_state.pop("_url_warning"))
    sb.header("Data")
    dataset = _widget(sb.selectbox, "Dataset", "dataset", DATASETS,
                      help="Adult: 30,162 people from the 1994 US census, predicting income > $50K.")
    if dataset == DATASETS[2]:
        sb.caption("The features of an uploaded CSV are chosen in the upload panel.")
    else:
        _widget(sb.slider, "Features d (plus a constant)", "d", *RANGES["d"],
                help="The first d features after one-hot encoding; the paper uses d = 10.")
    _widget(sb.number_input, "Rows n (0 = all)", "n", min_value=0, step=500,
            help="A fixed random subset of this many rows; smaller n shows how intervals widen.")
    sb.header("Model")
    model = _widget(sb.radio, "Model", "model", list(MODELS), horizontal=True, label_visibility="collapsed")
    if MODELS[model] == "huber":
        _widget(sb.slider, "Huber width h", "h", *RANGES["h"], step=0.05)
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
    _widget(sb.slider, "φ1: share for the coefficients", "phi1", *RANGES["phi1"], step=0.01)
    _widget(sb.slider, "φ2: share of the rest for the Hessian", "phi2_rest", *RANGES["phi2_rest"], step=0.025,
            help="The covariance gets the remainder, so φ1 + φ2 + φ3 = 1 always.")
    sb.caption("Split φ1 / φ2 / φ3 = " + " / ".join(f"{v:.3f}" for v in current_settings().split))
    sb.button("Paper's split (Table 2)", on_click=_restore_table2, width="stretch")
    sb.header("Interval")
    _widget(sb.select_slider, "Regularisation c", "c", C_VALUES, format_func=_fmt_c,
            help="c ||θ||² in the objective (the paper uses 0.001).")
    _widget(sb.select_slider, "Confidence level", "level", LEVELS, format_func=lambda v: f"{100 * v:g}%")
    # Drawn only when opened (a lazy expander): fewer widgets make the first page load faster.
    more = sb.expander("Samples and seed", key="more_settings", on_change="rerun")
    if more.open:
        _widget(more.select_slider, "Monte Carlo samples m", "m", MC_SAMPLES,
                help="Draws of the Monte Carlo step that turns the noisy Hessian and covariance into an interval.")
        if show_vi:
            _widget(more.select_slider, "Bootstrap replicates (variability)", "vi_replicates", VI_REPLICATES)
        _widget(more.number_input, "Seed", "seed", *RANGES["seed"], step=1,
                help="The same seed gives the same noise: fine for teaching, never for a real release.")
    else:
        s = settings_store()
        more.caption(f"m = {s['m']:,}" + (f", {s['vi_replicates']:,} bootstrap replicates" if show_vi else "")
                     + f", seed {s['seed']}")
    return current_settings()


@st.cache_data(show_spinner=False, max_entries=32)
def _load_builtin(dataset: str, d: int, c, loss_name, h):
    """(X, y, feature names, truth or None) for a built-in dataset (c, loss and h: synthetic only)."""
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
        try:
            # Only the synthetic truth depends on c and the loss: Adult's cache entry ignores them.
            synthetic = s.dataset == DATASETS[1]
            X, y, names, truth = _load_builtin(s.dataset, s.d, s.c if synthetic else None,
                                               MODELS[s.model] if synthetic else None, s.h if synthetic else None)
        except FileNotFoundError as err:  # a broken installation: say which file is missing
            raise DataValidationError(f"{err} Reinstall dpci, or pick another dataset.") from None
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


@st.cache_data(show_spinner=False, max_entries=16)
def cached_walkthrough(key: str, s: Settings):
    """The release taken apart for the How it works page (dpci.teaching); key names the data."""
    from dpci.teaching import walkthrough

    X, y, names, truth = load_data(s)
    return walkthrough(X, y, s.loss, s.mech, s.priv, s.budget, s.split, s.c, s.alpha, s.m, random_state=s.seed)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_nonprivate(key: str, s: Settings):
    X, y, names, truth = load_data(s)
    return dpci.nonprivate_confidence_intervals(X, y, s.loss, c=s.c, alpha=s.alpha)


def c_bound(s: Settings, n: int):
    """The smallest valid c of Algorithm 1 for these settings and n (None for output perturbation)."""
    if s.mech != "objective":
        return None
    alloc = dpci.allocate(s.budget, s.split, s.mech, s.priv)
    return smallest_valid_c(alloc.coef_epsilon, n, s.loss.t)


def c_problem(s: Settings, n: int):
    """(message, suggested c or None) when objective perturbation cannot run with this c, else None."""
    bound = c_bound(s, n)
    if bound is None or s.c > bound:
        return None
    eps1 = dpci.allocate(s.budget, s.split, s.mech, s.priv).coef_epsilon
    message = (f"c = {_fmt_c(s.c)} is too small for objective perturbation with n = {n:,} and ε₁ = {eps1:.3g}: "
               f"Algorithm 1 needs c > {bound:.3g}.")
    suggestion = next((v for v in C_VALUES if v > bound * 1.01), None)
    if suggestion is None:
        message += (" No c on the slider (at most 1) is large enough: give the coefficients more budget (a larger "
                    "total or φ1), use more rows, or switch to output perturbation.")
    return message, suggestion


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
    slot = st.session_state.get("slot_variability")
    job = slot.job if slot is not None else None
    return job if job is not None and job.key == variability_key(s) else None


MILESTONES = (50, 100, 200, 500, 1_000, 2_000, 3_000, 5_000, 7_500, 10_000)


FIRST_PREVIEW_WAIT = 0.4  # seconds; a warm worker pool yields its first replicates within about 0.15 s


def first_preview(job):
    """The job's latest state. A job started less than a second ago is given up to
    FIRST_PREVIEW_WAIT to reach the first drawn milestone, so the first variability interval is
    drawn now rather than at the next tick, a second later."""
    if job is NO_JOB:
        return None
    deadline = time.monotonic() + FIRST_PREVIEW_WAIT
    while (job.elapsed < 1.0 and not job.done and time.monotonic() < deadline
           and (job.latest is None or job.latest.done < MILESTONES[0])):
        time.sleep(0.02)
    return job.latest


def shown_variability(state, alpha):
    """Variability bounds at level 1 - alpha to draw, refreshed only at milestones of the replicate
    count: between them the chart stays identical, so browsers are not asked to redraw it twice a
    second. The job does not depend on the level, so alpha is the page's current one."""
    if state is None or state.done < MILESTONES[0]:
        return None
    reached = max([m for m in MILESTONES if m <= state.done] + ([state.done] if state.finished else []))
    return column_bounds(state.estimates[:reached], alpha)


def column_bounds(estimates, alpha):
    from dpci.intervals import column_quantiles

    return column_quantiles(estimates, [alpha / 2, 1 - alpha / 2]).T


def variability_job(s: Settings, X, y):
    """The background job computing variability intervals for these settings (kept across reruns).

    The key leaves out what variability intervals do not depend on (φ2, φ3, m, the level),
    so moving those sliders does not restart it.
    """
    slot = job_slot("variability")
    key = variability_key(s)
    kwargs = dict(mechanism=s.mech, privacy=s.priv, budget=s.budget, split=s.split, c=s.c, alpha=s.alpha,
                  n_replicates=s.vi_replicates, random_state=s.seed)
    return slot.ensure(key, lambda: iter_variability(X, y, s.loss, n_jobs=VI_JOBS, low_priority=True, **kwargs))


def settings_json(s: Settings) -> str:
    return json.dumps(asdict(s), indent=2, ensure_ascii=False)


def _apply_settings_file():
    file = st.session_state.get("settings_file")
    if file is None:
        return
    try:
        changed = load_settings_file(file.getvalue())
    except ValueError as err:
        st.session_state["_settings_message"] = ("error", str(err))
        return
    note = f" Changed to values the app can use: {'; '.join(changed)}." if changed else ""
    st.session_state["_settings_message"] = ("success", f"Loaded the settings of {file.name}.{note}")


def settings_file_panel(settings: Settings):
    """Download the settings as JSON, or load a file downloaded earlier (a teacher's prepared set-up)."""
    panel = st.expander("Save or load these settings", key="settings_panel", on_change="rerun")
    if not panel.open:  # drawn only when opened: the page loads faster
        return
    c1, c2 = panel.columns(2)
    c1.download_button("Download these settings (JSON)", settings_json(settings), "dpci-settings.json",
                       mime="application/json")
    c2.file_uploader("Load settings (JSON)", type=["json"], key="settings_file", on_change=_apply_settings_file)
    if st.session_state.get("settings_file") is None:  # the message lasts as long as its file is shown
        st.session_state.pop("_settings_message", None)
    if "_settings_message" in st.session_state:
        kind, text = st.session_state["_settings_message"]
        (c2.success if kind == "success" else c2.error)(text)


def explain_error(err: Exception):
    """Show a user-facing message for an exception, never a traceback."""
    st.error(str(err) if isinstance(err, ValueError) else f"Something went wrong: {type(err).__name__}: {err}")


def _read_upload(data: bytes, sep, target, positive, features, bounds):
    """read_uploaded_csv, its warnings collected as text instead of printed."""
    import warnings

    from dpci.data import read_uploaded_csv

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = read_uploaded_csv(data, target, positive_class=positive, features=features, bounds=bounds or None,
                                   sep=sep)
    return result, [str(w.message) for w in caught]


def _keep(key):
    st.session_state["kept_" + key] = st.session_state[key]


def kept_widget(factory, label, options, key, default=None, **kwargs):
    """A choice widget (radio, selectbox, multiselect, select_slider) whose choice survives a visit
    to another page: Streamlit drops the state of widgets a page does not draw, so the choice is
    also kept under another key and given back on every run. A kept choice no longer among the
    options gives way to ``default`` (else the first option)."""
    kept = st.session_state.get("kept_" + key)
    valid = kept is not None and (set(kept) <= set(options) if isinstance(kept, list) else kept in options)
    if not valid:
        kept = default if default is not None else options[0]
        st.session_state["kept_" + key] = kept
    st.session_state[key] = kept
    return factory(label, options, key=key, on_change=_keep, args=(key,), **kwargs)


def _uploaded_bytes():
    """(name, bytes) of the CSV in use: a new upload, else the one kept from earlier in this session."""
    file = st.file_uploader("A CSV file with a header row (at most 50 MB)", type=["csv", "txt"], key="upload_file")
    if file is not None:
        previous = st.session_state.get("upload_kept")
        if previous is None or previous[1] != file.getvalue():
            st.session_state.pop("kept_bounds", None)  # bounds belong to the file they were given for
        st.session_state["upload_kept"] = (file.name, file.getvalue())
        return st.session_state["upload_kept"]
    kept = st.session_state.get("upload_kept")
    if kept is not None:
        c1, c2 = st.columns([3, 1])
        c1.caption(f"Using {kept[0]} ({len(kept[1]) / 1e3:,.0f} kB), uploaded earlier in this session.")
        if c2.button("Forget this file"):
            for name in ("upload_kept", "upload_result", "upload_digest"):
                st.session_state.pop(name, None)
            st.rerun()
    return kept


def _bounds_editor(numeric, data_key):
    """Public bounds of the numeric features, starting from the observed range (flagged as not
    private); returns the bounds the user changed, kept across pages."""
    import pandas as pd

    kept = st.session_state.setdefault("kept_bounds", {})
    st.markdown("**Bounds of the numeric features.** Use bounds known *before* seeing the data (for example "
                "from a codebook: age 0 to 120). The defaults are the observed minimum and maximum, which "
                "are **not private**.")
    start = pd.DataFrame({"column": [c.name for c in numeric],
                          "lower": [kept.get(c.name, (c.lower, c.upper))[0] for c in numeric],
                          "upper": [kept.get(c.name, (c.lower, c.upper))[1] for c in numeric]})
    key = "upload_bounds_" + upload_digest((data_key + start.to_json()).encode())
    edited = st.data_editor(start, key=key, hide_index=True, disabled=["column"], width="stretch")
    bounds = dict(kept)
    for col, (_, row) in zip(numeric, edited.iterrows()):
        try:
            low, high = float(row["lower"]), float(row["upper"])
        except (TypeError, ValueError):
            raise ValueError(f"Give both bounds of {col.name!r} as numbers.") from None
        if (low, high) != (col.lower, col.upper):
            bounds[col.name] = (low, high)
    st.session_state["kept_bounds"] = bounds
    return {name: b for name, b in bounds.items() if name in {c.name for c in numeric}}


def _not_private_reason(result) -> str | None:
    """Why an uploaded dataset's intervals are not private, in the app's words (the library's
    warning names its Python arguments); None when nothing was taken from the data."""
    if not result.data_derived:
        return None
    numeric = {c.name for c in result.schema.numeric_columns}
    bounds = [c for c in result.data_derived if c in numeric]
    levels = [c for c in result.data_derived if c not in numeric]
    parts = []
    if bounds:
        parts.append(f"the bounds of {', '.join(bounds)} are the data's own minimum and maximum (type public "
                     "bounds into the table of the Explorer's upload panel)")
    if levels:
        parts.append(f"the categories of {', '.join(levels)} are the values seen in the data (leave these columns "
                     "out of the features here; in Python, dpci.data.read_uploaded_csv takes public category lists)")
    return "; ".join(parts) + ". Values taken from the data reveal something about individual rows."


def upload_not_private(s: Settings) -> str | None:
    """Why the intervals of the settings' dataset are not private (only an upload can be so), or None."""
    result = st.session_state.get("upload_result")
    return _not_private_reason(result) if s.dataset == DATASETS[2] and result is not None else None


def upload_panel() -> bool:
    """Upload a CSV, choose target, positive class, features and public bounds; stores the result.
    The file and the choices are kept for the session, so a visit to another page loses nothing.

    Returns True when a usable dataset is ready.
    """
    from dpci.data import guess_separator, inspect_uploaded_csv

    st.subheader("Your data")
    uploaded = _uploaded_bytes()
    if uploaded is None:
        st.session_state.pop("upload_result", None)
        st.info("Upload a CSV to see private intervals for your own data, or pick Adult or Synthetic in the sidebar.")
        return False
    name, data = uploaded
    try:
        sep = guess_separator(data)
        summary = inspect_uploaded_csv(data, sep=sep)
        candidates = summary.binary_columns or summary.columns
        c1, c2, c3 = st.columns(3)
        target = kept_widget(c1.selectbox, "Target column (two values)", candidates, "upload_target",
                             help="Columns with exactly two values are listed first.")
        others = [c for c in summary.columns if c != target]
        features = kept_widget(c3.multiselect, "Features", others, "upload_features", default=others)
        result, warnings_ = _read_upload(data, sep, target, None, features, None)
        classes = [result.schema.positive_class, result.schema.negative_class]
        positive = kept_widget(c2.selectbox, "Positive class (+1)", classes, "upload_positive",
                               help="The label the model predicts as +1; the other is -1.")
        numeric = [col for col in result.schema.numeric_columns if col.name in features]
        bounds = _bounds_editor(numeric, name + repr((target, features))) if numeric else {}
        if bounds or positive != classes[0]:
            result, warnings_ = _read_upload(data, sep, target, positive, features, bounds)
    except ValueError as err:
        st.error(str(err))
        st.session_state.pop("upload_result", None)
        return False
    for text in warnings_:
        st.warning(f"Not private: {_not_private_reason(result)}" if text.startswith("Not private") else text)
    for note in result.notes:
        # the positive class has its own selector here, and warnings are already shown above
        if note not in warnings_ and not note.startswith("positive_class not given"):
            st.info(note)
    st.session_state["upload_result"] = result
    choices = (target, positive, features, sorted(bounds.items()))
    st.session_state["upload_digest"] = upload_digest(data + repr(choices).encode())
    st.caption(f"{len(result.frame):,} usable rows ({result.n_dropped:,} dropped for missing values); "
               f"positive class: {result.schema.positive_class!r}.")
    return True


def loader(s: Settings):
    """d -> (X, y, names) for the settings' dataset (all rows), as the sweeps expect."""

    def load(d):
        X, y, names, _ = load_data(replace(s, d=int(d), n=0))
        return X, y, names

    return load


def session_alive(grace=15.0):
    """A callable telling a background job whether this browser session is still connected; a job
    whose session has been gone for ``grace`` seconds stops (abandoned tabs must not keep the
    server's cores busy). The grace period lets a page reload or a brief disconnection resume."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():  # bare mode or tests: no session to watch
        return None
    runtime, session_id, seen = Runtime.instance(), ctx.session_id, [time.monotonic()]

    def alive():
        now = time.monotonic()
        if runtime.is_active_session(session_id):
            seen[0] = now
        return now - seen[0] < grace

    return alive


def job_slot(name: str) -> JobSlot:
    if f"slot_{name}" not in st.session_state:
        st.session_state[f"slot_{name}"] = JobSlot(alive=session_alive())
    return st.session_state[f"slot_{name}"]


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


def poll_interval(job, first=False, first_paint=False):
    """How often a results fragment redraws: once a second while ``job`` runs; ``first`` asks for
    one tick a second after the first draw, which starts the job once the browser has had time to
    draw the chart (started at once, it slowed the first chart from under 3 s to 5 s here). After a
    session's first paint (see :func:`first_paint`) that tick comes after two seconds: the browser is
    still loading the chart's code, and the settings widgets that the tick brings would slow it."""
    if first:
        return 2.0 if first_paint else 1.0
    return 1.0 if job is not None and not job.done else None


def rerun_once_when_done(job, name):
    """After a job ends, one full rerun so the polling fragment stops."""
    if job is not None and job.done and st.session_state.get(f"_done_{name}") != job.key:
        st.session_state[f"_done_{name}"] = job.key
        st.rerun()
