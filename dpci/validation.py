"""Checks of the input contract: finite numbers, rows in the unit L2 ball, two labels.

Every check takes ``private_errors``: False (the default) names what it found (a row index, a
norm, a label value) to help fix the data; True says only what is wrong, quoting no data value,
row index or count taken from the data, so that an error shown to others leaks nothing the
release would not. What is public is quoted either way: n, d, column names (the schema) and the
label set ``classes``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning

from .exceptions import DataValidationError

# Rows with norm in (1, 1 + NORM_TOL] are taken as rounding error and projected onto
# the unit sphere (a fixed per-row map, so it costs no privacy); larger norms are refused.
NORM_TOL = 1e-9


def check_features(X, n_features=None, *, private_errors=False):
    """Return (X as a float ndarray, feature names or None); refuse NaN/inf and wrong shapes."""
    arr, names, _ = _features_and_squared_norms(X, n_features, private_errors=private_errors)
    return arr, names


def _features_and_squared_norms(X, n_features=None, *, private_errors=False):
    """:func:`check_features`, and the rows' squared L2 norms, which are read for the finite check: a
    NaN or infinite entry makes its row's squared norm NaN or infinite, so finite squared norms mean
    finite entries (and the entries are looked at only when they are not: an overflow of finite ones)."""
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
    if _is_complex(X):  # "Complex data not supported" is scikit-learn's wording
        raise DataValidationError("Complex data not supported: X holds complex numbers; dpci needs real features.")
    try:
        arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise DataValidationError(
            "X must contain only numbers; encode categorical columns first (dpci.data.UnitBallPreprocessor does)."
        ) from None
    if arr.ndim != 2:
        raise DataValidationError(f"X must be a 2-D array (rows x features), got {arr.ndim} dimension(s).")
    if arr.shape[0] == 0 or arr.shape[1] == 0:  # n and d are public; the wording after the colon is scikit-learn's
        what = "sample(s)" if arr.shape[0] == 0 else "feature(s)"
        raise DataValidationError(
            f"X is empty: found array with 0 {what} (shape={arr.shape}) while a minimum of 1 is required."
        )
    if n_features is not None and arr.shape[1] != n_features:
        raise DataValidationError(f"X has {arr.shape[1]} features, but the model was fitted with {n_features}.")
    sq = np.einsum("ij,ij->i", arr, arr)
    if not np.isfinite(sq).all() and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        where = "" if private_errors else f" (first at row {bad[0]}, column {bad[1]})"
        raise DataValidationError(f"X contains NaN or infinite values{where}; drop or impute them.")
    return arr, names, sq


def _is_complex(X):
    """Whether X holds complex numbers, asked of its dtype(s) only: ``np.iscomplexobj`` would go through
    the array-function protocol, which array-likes (``__array__`` only) need not support."""
    if hasattr(X, "dtypes"):  # a DataFrame: one dtype per column
        return any(isinstance(t, np.dtype) and t.kind == "c" for t in X.dtypes)
    dtype = getattr(X, "dtype", None)
    if not isinstance(dtype, np.dtype):
        try:
            dtype = np.asarray(X).dtype
        except (TypeError, ValueError):  # ragged or mixed: check_features refuses it next
            return False
    return dtype.kind == "c"


def unit_ball_divisors(X, *, private_errors=False, squared_norms=None):
    """Refuse rows with ||x|| > 1 + NORM_TOL; return what brings the rows just outside (rounding) onto
    the sphere: each row's divisor, its norm for those and 1 for the others (dividing by 1 leaves a
    row exactly as it is), or None when no row is outside. ``squared_norms``: the rows' squared
    norms if already known (``np.einsum("ij,ij->i", X, X)``)."""
    sq = np.einsum("ij,ij->i", X, X) if squared_norms is None else squared_norms
    worst = int(np.argmax(sq))
    if sq[worst] > (1.0 + NORM_TOL) ** 2:
        which = "a row has L2 norm" if private_errors else f"row {worst} has L2 norm {np.sqrt(sq[worst]):.6g}"
        raise DataValidationError(
            f"{which} > 1. The privacy guarantee assumes every row "
            "lies in the unit ball (Section 3): scale features by public bounds and divide each row by its "
            "norm, e.g. with dpci.data.UnitBallPreprocessor."
        )
    return np.where(sq > 1.0, np.sqrt(sq), 1.0) if sq[worst] > 1.0 else None


def check_unit_ball(X, *, private_errors=False):
    """Refuse rows with ||x|| > 1 + NORM_TOL; project rows just outside (rounding) onto the sphere."""
    divisors = unit_ball_divisors(X, private_errors=private_errors)
    return X if divisors is None else X / divisors[:, None]


def check_classes(classes):
    """The public label set ``classes=(negative, positive)`` as a 2-element array (``classes[1]`` is +1).

    A parameter, not data: refused with a ValueError naming what was given.
    """
    if isinstance(classes, (str, bytes)) or not hasattr(classes, "__len__") or len(classes) != 2:
        raise ValueError(f"classes must be a pair (negative label, positive label), got {classes!r}.")
    labels = list(classes.tolist() if isinstance(classes, np.ndarray) else classes)
    if any(v is None or (isinstance(v, float) and v != v) for v in labels) or labels[0] == labels[1]:
        raise ValueError(f"classes must hold two distinct labels, neither None nor NaN; got {classes!r}.")
    arr = np.asarray(labels)
    if arr.dtype.kind in "US" and not all(isinstance(v, (str, bytes)) for v in labels):
        arr = np.asarray(labels, dtype=object)  # (0, "yes") stays a number and a string, not "0" and "yes"
    return arr


def _label_vector(y, n_rows):
    """y as a 1-D array of n_rows labels (an (n, 1) column is accepted)."""
    given = y
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:  # accepted with scikit-learn's warning
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; its one column is used "
            "(pass y.ravel() to avoid this warning).",
            DataConversionWarning,
            stacklevel=5,
        )
        y = y[:, 0]
    if y.ndim != 1:  # y=None is a 0-D array here; scikit-learn's wording for it
        none = "Fitting requires y to be passed, but the target y is None: give one label per row of X."
        raise DataValidationError(none if given is None else f"y must be one-dimensional, got shape {y.shape}.")
    if y.shape[0] != n_rows:
        raise DataValidationError(f"X has {n_rows} rows but y has {y.shape[0]} labels.")
    return y


def _equal(y, label):
    """Elementwise y == label as a boolean array (False where the types cannot be compared)."""
    try:
        same = np.asarray(y == label, dtype=bool)
    except (TypeError, ValueError):
        same = np.array([v == label for v in y.tolist()], dtype=bool)
    return same if same.shape == y.shape else np.zeros(y.shape, dtype=bool)


def _first_quoted(y, where):
    """The first label at the indices ``where``, quoted with how many there are (never under private_errors)."""
    i = where[0]
    return f"y[{i}] = {y[i : i + 1].tolist()[0]!r} ({where.size} of {y.size} labels)"


def _continuous(y):
    """scikit-learn's words for float labels that are not whole numbers (a regression target), else ""
    (it describes the labels, so never under private_errors)."""
    if y.dtype.kind == "f" and np.any(y != np.round(y)):
        return " (Unknown label type: continuous; y looks like a regression target)"
    return ""


def _signs_by_classes(y, classes, private_errors):
    """y coded by the public label set: classes[1] -> +1, classes[0] -> -1; one class alone is fine."""
    positive, negative = _equal(y, classes[1]), _equal(y, classes[0])
    outside = np.flatnonzero(~(positive | negative))
    if outside.size:
        found = "" if private_errors else f": {_first_quoted(y, outside)}{_continuous(y)}"
        raise DataValidationError(
            f"y holds a label outside classes={tuple(classes.tolist())!r}{found}. "
            "Only binary classification is supported, over the public label set: "
            "drop those rows, or recode them to one of the two classes."
        )
    return np.where(positive, 1.0, -1.0)


def _learned_labels(y):
    """The distinct labels of y in order and where y holds the second, as ``np.unique(y,
    return_inverse=True)`` gives them; for numbers and strings that are two labels, two comparisons
    over y instead of a sort."""
    if y.dtype.kind in "biufUS" and y.size:
        first = y[0]
        is_first = y == first
        second = y[int(np.argmin(is_first))]  # the first label unlike y[0] (y[0] itself if none is)
        is_second = y == second
        if second != first and (is_first | is_second).all():
            if first < second:
                return np.array([first, second], dtype=y.dtype), is_second
            return np.array([second, first], dtype=y.dtype), is_first
    try:
        learned, codes = np.unique(y, return_inverse=True)
    except TypeError:
        raise DataValidationError("y mixes label types that cannot be compared; use two labels of one type.") from None
    return learned, codes.reshape(-1) == 1


def check_labels(y, n_rows, classes=None, *, private_errors=False):
    """Map two labels to -1/+1; return (signs, classes). classes[1] is the positive class.

    With ``classes`` (the public label set) y is coded by it, and a y holding only one of them is
    accepted; without it the two labels are learned from y (sorted), which is not private.
    """
    y = _label_vector(y, n_rows)
    if y.dtype.kind in "fc" and not np.isfinite(y).all():
        found = "NaN" if np.isnan(y).any() else f"infinity or a value too large for dtype({y.dtype.name!r})"
        said = "y contains NaN or infinite values" if private_errors else f"Input y contains {found}"  # sklearn's
        raise DataValidationError(f"{said}; drop those rows.")
    if y.dtype == object and any(v is None or (isinstance(v, float) and v != v) for v in y):
        raise DataValidationError("y contains missing values; drop those rows.")
    if classes is not None:
        classes = check_classes(classes)
        return _signs_by_classes(y, classes, private_errors), classes
    learned, positive = _learned_labels(y)
    if len(learned) != 2:
        shown = ", ".join(map(repr, learned[:5].tolist())) + (" ..." if len(learned) > 5 else "")
        found = "" if private_errors else f", found {len(learned)}: {shown}{_continuous(y)}"
        raise DataValidationError(
            f"Only binary classification is supported: y must have exactly two distinct labels{found}. "
            "Pass classes=(negative, positive) to name the public label set (then one class alone is accepted)."
        )
    return np.where(positive, 1.0, -1.0), learned


def check_signs(y, n_rows, *, private_errors=False):
    """Labels already coded -1/+1 (the low-level functions of dpci.release); return them as floats.

    The sensitivities (Lemmas 2-5) assume y_i in {-1, +1}; any other value voids the guarantee.
    """
    y = _label_vector(y, n_rows)
    # Only numbers count: strings such as "1" or ">50K" are labels for the estimators to code.
    signs = y.astype(float) if y.dtype.kind in "biuf" else np.full(y.shape, np.nan)
    bad = np.flatnonzero((signs != 1.0) & (signs != -1.0))
    if bad.size:
        found = "" if private_errors else f", but {_first_quoted(y, bad)} are neither"
        raise DataValidationError(
            f"y must hold exactly the values -1 and +1 (this low-level function takes coded labels){found}. "
            "dpci.PrivateLogisticRegression and dpci.PrivateHuberSVM accept any two labels and code them for you."
        )
    return signs


def check_signed_data(X, y, *, private_errors=False):
    """Validate the input of dpci.release: return (X in the unit ball, y as -1.0/+1.0 floats)."""
    X, y, divisors = check_signed_parts(X, y, private_errors=private_errors)
    return (X if divisors is None else X / divisors[:, None]), y


def check_signed_parts(X, y, *, private_errors=False):
    """:func:`check_signed_data` without the projection: (X as a float array, y as -1.0/+1.0 floats, the
    :func:`unit_ball_divisors` of X), for a release that projects its rows as it builds the margin
    rows (``dpci.solver.margin_rows(X, y, divisors)``) rather than copy X first."""
    X, _, sq = _features_and_squared_norms(X, private_errors=private_errors)
    divisors = unit_ball_divisors(X, private_errors=private_errors, squared_norms=sq)
    return X, check_signs(y, X.shape[0], private_errors=private_errors), divisors


def check_data(X, y, classes=None, *, private_errors=False):
    """Validate a training set; return (X, signs in {-1,+1}, classes, names, divisors).

    ``classes`` is the public label set (see :func:`check_labels`); None learns it from y. X is the
    float array as given: ``divisors`` (:func:`unit_ball_divisors`) bring its rows just outside the
    unit ball onto the sphere, and the release applies them as it builds its margin rows.
    """
    X, names, sq = _features_and_squared_norms(X, private_errors=private_errors)
    signs, classes = check_labels(y, X.shape[0], classes, private_errors=private_errors)
    return X, signs, classes, names, unit_ball_divisors(X, private_errors=private_errors, squared_norms=sq)
