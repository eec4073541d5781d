"""The rows in use for the settings: a built-in dataset or the session's upload (no privacy here: the
callers account for what they release). Below ui.data, which caches releases on these rows."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpci.data import load_adult, make_synthetic_logistic, population_theta0
from dpci.exceptions import DataValidationError
from dpci.experiments.sweeps import subsample
from ui.app_state import AppState
from ui.release_names import data_key
from ui.upload import upload_dataset

SYNTHETIC_THETA = (1.5, -1.0, 0.5, -0.3, 0.8, 0.2, -0.6, 1.0, -1.2, 0.4)  # the truth, repeated as needed (+ const 0.3)


@st.cache_data(show_spinner=False, max_entries=32)
def _load_builtin(dataset: str, d: int, c, loss, scaling="unit"):
    """(X, y, feature names, truth or None) for a built-in dataset (c and the loss: synthetic only;
    scaling: Adult only)."""
    if dataset == "adult":
        ds = load_adult(d=d, normalize=scaling)
        return ds.X, ds.y, list(ds.feature_names), None
    theta = np.append(np.resize(SYNTHETIC_THETA, d), 0.3)
    X, y = make_synthetic_logistic(50_000, theta, random_state=20261122)
    truth = population_theta0(theta, c, loss=loss)
    return X, y, [f"x{j + 1}" for j in range(d)] + ["const"], truth


def truth_c(s: AppState) -> float:
    """The c of the synthetic data's true coefficients an interval is for: the settings' c (theta_0(c)),
    or none for the unregularised estimand (a loss without a unique unpenalised minimiser: 1e-9)."""
    if s.shown_estimand == "regularised":
        return s.spec.c
    return 0.0 if getattr(s.spec.loss, "curvature_drift", None) is not None else 1e-9


def dataset_key(s: AppState) -> str:
    """A short key naming the rows in use (for caches and job keys)."""
    return data_key(s, st.session_state.get("upload_digest", ""))


def load_data(s: AppState):
    """(X, y, names, truth) for the settings, or raise DataValidationError with a message."""
    if s.data.dataset == "upload":
        upload = st.session_state.get("upload_result")
        if upload is None:
            raise DataValidationError("No CSV uploaded yet: upload one above, or pick Adult or Synthetic.")
        ds = upload_dataset(st.session_state["upload_digest"], s.data.d, s.data.scaling)
        X, y, names, truth = ds.X, ds.y, list(ds.feature_names), None
    else:
        try:
            # Only the synthetic truth depends on c and the loss: Adult's cache entry ignores them.
            synthetic = s.data.dataset == "synthetic"
            X, y, names, truth = _load_builtin(
                s.data.dataset,
                s.data.d,
                truth_c(s) if synthetic else None,
                s.spec.loss if synthetic else None,
                s.data.scaling,
            )
        except FileNotFoundError as err:  # a broken installation: say which file is missing
            raise DataValidationError(f"{err} Reinstall dpci, or pick another dataset.") from None
    if s.data.n and s.data.n < len(X):
        if s.data.n < 100:
            raise DataValidationError(f"n = {s.data.n} is too small: use at least 100 rows (or 0 for all).")
        X, y = subsample(X, y, s.data.n, seed=0)
    return X, y, names, truth
