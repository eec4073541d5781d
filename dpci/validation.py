"""Checks of the input contract: finite numbers, rows in the unit L2 ball, two labels."""

from __future__ import annotations

import numpy as np

from .exceptions import DataValidationError

# Rows with norm in (1, 1 + NORM_TOL] are taken as rounding error and projected onto
# the unit sphere (a fixed per-row map, so it costs no privacy); larger norms are refused.
NORM_TOL = 1e-9


def check_features(X, n_features=None):
    """Return (X as a float ndarray, feature names or None); refuse NaN/inf and wrong shapes."""
    names = None
    if hasattr(X, "tocsr") or hasattr(X, "sparse"):  # scipy.sparse matrices and arrays
        raise DataValidationError("X is a sparse matrix; dpci needs dense rows: pass X.toarray().")
    if hasattr(X, "columns"):
        names = np.asarray([str(col) for col in X.columns], dtype=object)
        repeated = sorted({n for n, k in zip(*np.unique(names, return_counts=True)) if k > 1})
        if repeated:
            raise DataValidationError(f"X has duplicate column names {repeated[:5]}; give every feature its own name.")
        if X.isna().to_numpy().any():
            raise DataValidationError("X contains missing values (NaN or pandas NA); drop or impute them first.")
    if np.iscomplexobj(X) or (
        hasattr(X, "dtypes") and any(np.issubdtype(t, np.complexfloating) for t in X.dtypes if isinstance(t, np.dtype))
    ):
        raise DataValidationError("X holds complex numbers; dpci needs real features.")
    try:
        arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise DataValidationError(
            "X must contain only numbers; encode categorical columns first (dpci.data.UnitBallPreprocessor does)."
        ) from None
    if arr.ndim != 2:
        raise DataValidationError(f"X must be a 2-D array (rows x features), got {arr.ndim} dimension(s).")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise DataValidationError(f"X is empty (shape {arr.shape}).")
    if n_features is not None and arr.shape[1] != n_features:
        raise DataValidationError(f"X has {arr.shape[1]} features, but the model was fitted with {n_features}.")
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise DataValidationError(
            f"X contains NaN or infinite values (first at row {bad[0]}, column {bad[1]}); drop or impute them."
        )
    return arr, names


def check_unit_ball(X):
    """Refuse rows with ||x|| > 1 + NORM_TOL; project rows just outside (rounding) onto the sphere."""
    sq = np.einsum("ij,ij->i", X, X)
    worst = int(np.argmax(sq))
    if sq[worst] > (1.0 + NORM_TOL) ** 2:
        raise DataValidationError(
            f"row {worst} has L2 norm {np.sqrt(sq[worst]):.6g} > 1. The privacy guarantee assumes every row "
            "lies in the unit ball (Section 3): scale features by public bounds and divide each row by its "
            "norm, e.g. with dpci.data.UnitBallPreprocessor."
        )
    over = sq > 1.0
    if over.any():
        X = X.copy()
        X[over] /= np.sqrt(sq[over])[:, None]
    return X


def _label_vector(y, n_rows):
    """y as a 1-D array of n_rows labels (an (n, 1) column is accepted)."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise DataValidationError(f"y must be one-dimensional, got shape {y.shape}.")
    if y.shape[0] != n_rows:
        raise DataValidationError(f"X has {n_rows} rows but y has {y.shape[0]} labels.")
    return y


def check_labels(y, n_rows):
    """Map two labels to -1/+1; return (signs, classes). classes[1] is the positive class."""
    y = _label_vector(y, n_rows)
    if y.dtype.kind in "fc" and not np.isfinite(y).all():
        raise DataValidationError("y contains NaN or infinite values; drop those rows.")
    if y.dtype == object and any(v is None or (isinstance(v, float) and v != v) for v in y):
        raise DataValidationError("y contains missing values; drop those rows.")
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError:
        raise DataValidationError("y mixes label types that cannot be compared; use two labels of one type.") from None
    if len(classes) != 2:
        shown = ", ".join(map(repr, classes[:5].tolist())) + (" ..." if len(classes) > 5 else "")
        raise DataValidationError(
            f"y must have exactly two distinct labels for binary classification, found {len(classes)}: {shown}."
        )
    return np.where(codes == 1, 1.0, -1.0), classes


def check_signs(y, n_rows):
    """Labels already coded -1/+1 (the low-level functions of dpci.release); return them as floats.

    The sensitivities (Lemmas 2-5) assume y_i in {-1, +1}; any other value voids the guarantee.
    """
    y = _label_vector(y, n_rows)
    # Only numbers count: strings such as "1" or ">50K" are labels for the estimators to code.
    signs = y.astype(float) if y.dtype.kind in "biuf" else np.full(y.shape, np.nan)
    bad = np.flatnonzero((signs != 1.0) & (signs != -1.0))
    if bad.size:
        raise DataValidationError(
            f"y must hold exactly the values -1 and +1 (this low-level function takes coded labels), but "
            f"y[{bad[0]}] = {y[bad[0] : bad[0] + 1].tolist()[0]!r} ({bad.size} of {n_rows} labels are neither). "
            "dpci.PrivateLogisticRegression and dpci.PrivateHuberSVM accept any two labels and code them for you."
        )
    return signs


def check_signed_data(X, y):
    """Validate the input of dpci.release: return (X in the unit ball, y as -1.0/+1.0 floats)."""
    X, _ = check_features(X)
    return check_unit_ball(X), check_signs(y, X.shape[0])


def check_data(X, y):
    """Validate a training set; return (X in the unit ball, signs in {-1,+1}, classes, names)."""
    X, names = check_features(X)
    signs, classes = check_labels(y, X.shape[0])
    return check_unit_ball(X), signs, classes, names
