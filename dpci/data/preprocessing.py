"""Preprocessing of Section 7.1 of Wang, Kifer & Lee, with public bounds.

Steps (in this order), applied by :class:`UnitBallPreprocessor`:

1. Numeric columns are scaled into [-1, 1] with the schema's *public* bounds:
   ``x' = 2 (x - lower) / (upper - lower) - 1`` (after ``log1p`` for columns
   flagged so), and values outside the bounds are clipped to the nearest
   bound. The paper (Section 7.1) instead divides each attribute by its
   observed maximum; that is data-dependent and breaks the privacy guarantee
   (ERRATA.md), so it is deliberately not offered.
2. Categorical columns are one-hot encoded against the schema's public
   category list ("an attribute with cardinality k becomes k binary
   attributes", Section 7.1); an unknown value is an error by default.
3. Design-matrix column order: numeric columns in schema order, then the
   one-hot blocks in schema order (categories in schema order).
4. Optional selection: the first ``d`` of those columns, or a named subset
   (Section 7.1: "taking ... the first d1 features").
5. The constant feature (value 1, named ``"const"``) is appended as the last
   column (Section 7.1: "add a column of ones as the constant feature").
6. Each row is mapped into the unit L2 ball. The paper divides every row by
   its norm (Section 3: ||x_i|| = 1); because the constant is added *before*
   this step, its value in row i becomes 1/||x_i|| (ERRATA.md).

Every step acts on one record at a time with public parameters, so changing
one record changes only that record's row of the design matrix; this is what
the sensitivity analysis of the estimators assumes.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from dpci.data.schema import Schema
from dpci.exceptions import DataValidationError

#: Name of the constant feature appended by the preprocessing.
CONSTANT_NAME = "const"

_NORMALIZE = ("unit", "project", "global")


def _check_frame(X, schema: Schema, needed: Sequence[str]) -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        raise DataValidationError(
            f"UnitBallPreprocessor needs a pandas DataFrame with the schema's column names, got {type(X).__name__}."
        )
    missing = [c for c in needed if c not in X.columns]
    if missing:
        raise DataValidationError(
            f"The data lack column(s) {missing} required by schema {schema.name!r}; "
            f"available columns: {list(X.columns)}."
        )
    na = X[list(needed)].isna().sum()
    na = na[na > 0]
    if len(na):
        detail = ", ".join(f"{k!r}: {int(v)}" for k, v in na.items())
        raise DataValidationError(
            f"Missing values in {detail}. Drop incomplete rows before preprocessing "
            "(the loaders and read_uploaded_csv do this)."
        )
    return X


def scale_numeric(values, lower: float, upper: float, log1p: bool = False) -> np.ndarray:
    """Scale values into [-1, 1] with public bounds, clipping outside values.

    Parameters
    ----------
    values : array-like of float
        Raw values of one numeric column.
    lower, upper : float
        Public bounds (from documentation, never from the data: an observed
        maximum leaks information and breaks the privacy guarantee).
    log1p : bool, default False
        Apply ``log(1 + x)`` to values and bounds first.

    Returns
    -------
    numpy.ndarray
        ``2 (v - lower) / (upper - lower) - 1`` clipped to [-1, 1].
    """
    v = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        raise DataValidationError("Numeric column contains NaN or infinite values.")
    lo, hi = float(lower), float(upper)
    if log1p:
        v = np.log1p(np.maximum(v, lo))  # clip below first so log1p is defined
        lo, hi = np.log1p(lo), np.log1p(hi)
    scale = 2.0 / (hi - lo)
    return np.clip((v - lo) * scale - 1.0, -1.0, 1.0)


def count_out_of_bounds(frame: pd.DataFrame, schema: Schema) -> dict[str, int]:
    """Number of values of each numeric column that the preprocessing clips.

    Parameters
    ----------
    frame : pandas.DataFrame
        Raw data.
    schema : Schema
        Schema with public bounds.

    Returns
    -------
    dict
        ``{column: count}`` for columns with at least one value outside its
        public bounds. Reporting these counts to a user reveals data; use it
        for diagnostics on data you may inspect.
    """
    out = {}
    for col in schema.numeric_columns:
        if col.name not in frame.columns:
            continue
        v = pd.to_numeric(frame[col.name], errors="coerce").to_numpy(dtype=np.float64)
        k = int(np.sum((v < col.lower) | (v > col.upper)))
        if k:
            out[col.name] = k
    return out


def encode_labels(values, positive_class, negative_class) -> np.ndarray:
    """Map a binary label column to {-1.0, +1.0} (Section 7.1).

    Parameters
    ----------
    values : array-like
        Raw labels.
    positive_class, negative_class : object
        Values mapped to +1 and -1; compared as strings.

    Returns
    -------
    numpy.ndarray of float64
        +1.0 where the label equals ``positive_class``, -1.0 where it equals
        ``negative_class``.

    Raises
    ------
    DataValidationError
        If a label is missing or is neither class.
    """
    s = pd.Series(values)
    if s.isna().any():
        raise DataValidationError(f"The label has {int(s.isna().sum())} missing value(s); drop those rows first.")
    s = s.astype(str)
    pos, neg = str(positive_class), str(negative_class)
    is_pos = (s == pos).to_numpy()
    is_neg = (s == neg).to_numpy()
    bad = ~(is_pos | is_neg)
    if bad.any():
        others = sorted(set(s[bad]))[:5]
        raise DataValidationError(
            f"Label values must be {pos!r} (positive) or {neg!r} (negative); found also {others}."
        )
    return np.where(is_pos, 1.0, -1.0)


class UnitBallPreprocessor(TransformerMixin, BaseEstimator):
    """Map raw records to rows in the unit L2 ball (Section 7.1, public bounds).

    All parameters come from the :class:`~dpci.data.Schema`, never from the
    data: ``fit`` only checks that the needed columns exist, so the fitted
    state is identical for any two datasets with the same columns. This is
    essential for privacy; scaling by observed maxima as in the paper leaks
    information and invalidates the guarantee (ERRATA.md).

    Parameters
    ----------
    schema : Schema
        Public description of the columns (bounds, category lists).
    d : int, optional
        Keep only the first ``d`` design-matrix columns (before the constant
        is added: the paper's convention, Section 7.1). Column order: numeric
        columns in schema order, then the one-hot blocks of the categorical
        columns in schema order. A one-hot block may be cut in the middle.
    features : sequence of str, optional
        Keep only these features, in this order. An entry is either a raw
        column name (all its design-matrix columns) or a design-matrix name
        such as ``"sex=Female"``. Mutually exclusive with ``d``.
    add_constant : bool, default True
        Append the constant feature (value 1 before normalisation) named
        ``"const"`` as the last column.
    normalize : {"unit", "project", "global"}, default "unit"
        How rows are mapped into the unit ball.
        ``"unit"``: divide each row by its L2 norm (the paper; every row has
        norm exactly 1 unless it is all zeros).
        ``"project"``: divide only rows with norm > 1.
        ``"global"``: divide every row by the public maximum norm
        ``sqrt(#numeric + #categorical blocks + constant)`` of the selected
        columns, which keeps relative magnitudes across rows.
        All three act row by row with public constants.
    handle_unknown : {"error", "ignore"}, default "error"
        What to do with a categorical value absent from the public list:
        raise, or encode it as all zeros.
    dtype : numpy dtype, default numpy.float64
        Dtype of the output matrix (``float32`` halves memory for KDD Cup).

    Attributes
    ----------
    feature_names_out_ : numpy.ndarray of str
        Output column names (the constant last, if added).
    lower_, upper_ : dict
        Public bounds of the numeric columns used.
    categories_ : dict
        Public category lists of the categorical columns used.
    n_features_in_ : int
        Number of raw columns the transformer reads.

    Notes
    -----
    Numeric values outside the public bounds are clipped to the bounds before
    scaling, so a record with an out-of-range value still maps into [-1, 1].
    """

    def __init__(
        self,
        schema: Schema,
        d: int | None = None,
        features: Sequence[str] | None = None,
        add_constant: bool = True,
        normalize: str = "unit",
        handle_unknown: str = "error",
        dtype=np.float64,
    ):
        self.schema = schema
        self.d = d
        self.features = features
        self.add_constant = add_constant
        self.normalize = normalize
        self.handle_unknown = handle_unknown
        self.dtype = dtype

    # ------------------------------------------------------------------ fit
    def _selection(self) -> list[tuple[str, str | None]]:
        """List of (raw column, category or None) for the selected outputs."""
        schema = self.schema
        full: list[tuple[str, str | None]] = []
        for col in schema.ordered_columns():
            if col.is_numeric:
                full.append((col.name, None))
            else:
                full.extend((col.name, cat) for cat in col.categories)
        names = schema.feature_names()
        if self.d is not None and self.features is not None:
            raise DataValidationError("Give either d or features, not both.")
        if self.d is not None:
            d = self.d
            if not isinstance(d, numbers.Integral) or isinstance(d, bool) or not 1 <= d <= len(full):
                raise DataValidationError(
                    f"d must be an integer between 1 and {len(full)} (the number of features "
                    f"of {schema.name!r} after one-hot encoding), got {d!r}."
                )
            return full[: int(d)]
        if self.features is not None:
            if isinstance(self.features, str):
                raise DataValidationError("features must be a list of names, not a string.")
            index = dict(zip(names, full))
            chosen: list[tuple[str, str | None]] = []
            for f in self.features:
                if f in schema.column_names:
                    col = schema.column(f)
                    chosen.extend([(f, None)] if col.is_numeric else [(f, c) for c in col.categories])
                elif f in index:
                    chosen.append(index[f])
                else:
                    raise DataValidationError(
                        f"Unknown feature {f!r}: use a column name {schema.column_names} "
                        "or a one-hot name such as 'column=category'."
                    )
            if not chosen:
                raise DataValidationError("features is empty; select at least one feature.")
            if len(set(chosen)) != len(chosen):
                raise DataValidationError("features selects the same design-matrix column twice.")
            return chosen
        return full

    def fit(self, X, y=None):
        """Validate parameters and columns; no statistic of ``X`` is used.

        Parameters
        ----------
        X : pandas.DataFrame
            Raw data with the schema's column names (only checked for
            presence and missing values).
        y : ignored

        Returns
        -------
        self
        """
        if not isinstance(self.schema, Schema):
            raise DataValidationError("schema must be a dpci.data.Schema.")
        if self.normalize not in _NORMALIZE:
            raise DataValidationError(f"normalize must be one of {_NORMALIZE}, got {self.normalize!r}.")
        if self.handle_unknown not in ("error", "ignore"):
            raise DataValidationError("handle_unknown must be 'error' or 'ignore'.")
        sel = self._selection()
        used = list(dict.fromkeys(name for name, _ in sel))
        _check_frame(X, self.schema, used)
        self.selection_ = sel
        self.columns_used_ = used
        self.n_features_in_ = len(used)
        self.feature_names_in_ = np.asarray(used, dtype=object)
        cols = [self.schema.column(n) for n in used]
        self.lower_ = {c.name: c.lower for c in cols if c.is_numeric}
        self.upper_ = {c.name: c.upper for c in cols if c.is_numeric}
        self.categories_ = {c.name: c.categories for c in cols if not c.is_numeric}
        out = [name if cat is None else f"{name}={cat}" for name, cat in sel]
        if self.add_constant:
            out.append(CONSTANT_NAME)
        self.feature_names_out_ = np.asarray(out, dtype=object)
        # public maximum squared norm: each numeric column contributes <= 1,
        # each one-hot block <= 1 (at most one indicator is on), constant 1.
        self.max_norm_ = float(np.sqrt(len(used) + (1 if self.add_constant else 0)))
        return self

    # ------------------------------------------------------------ transform
    def _codes(self, series: pd.Series, name: str, categories: tuple[str, ...]) -> np.ndarray:
        index = pd.Index(list(categories))
        if isinstance(series.dtype, pd.CategoricalDtype):
            # recode the (few) categories, then look up the (many) codes
            mapping = index.get_indexer(series.cat.categories.astype(str))
            codes = np.append(mapping, -1)[series.cat.codes.to_numpy()]
        else:
            if not (pd.api.types.is_string_dtype(series.dtype) or series.dtype == object):
                series = series.astype(str)
            codes = index.get_indexer(series.to_numpy(dtype=object))
        unknown = codes < 0
        if unknown.any() and self.handle_unknown == "error":
            vals = sorted({str(v) for v in series[unknown]})[:5]
            raise DataValidationError(
                f"Column {name!r} has value(s) {vals} not in the schema's public category "
                f"list. Add them to the schema, map them to a listed category, or use "
                "handle_unknown='ignore' to encode them as all zeros."
            )
        return codes

    def transform(self, X) -> np.ndarray:
        """Map raw records to rows in the unit ball.

        Parameters
        ----------
        X : pandas.DataFrame
            Raw data with the schema's column names and no missing values.

        Returns
        -------
        numpy.ndarray of shape (n_rows, len(feature_names_out_))
            Rows with L2 norm <= 1 (up to rounding).
        """
        if not hasattr(self, "selection_"):
            raise DataValidationError("Call fit before transform.")
        _check_frame(X, self.schema, self.columns_used_)
        n = len(X)
        out = np.zeros((n, len(self.feature_names_out_)), dtype=self.dtype)
        rows = np.arange(n)
        for name, positions in self._plan().items():
            col = self.schema.column(name)
            if col.is_numeric:
                try:
                    raw = pd.to_numeric(X[name], errors="raise")
                except (ValueError, TypeError):
                    raise DataValidationError(f"Numeric column {name!r} contains non-numeric values.") from None
                try:
                    out[:, positions[0]] = scale_numeric(raw, col.lower, col.upper, col.log1p)  # type: ignore[arg-type]
                except DataValidationError as exc:
                    raise DataValidationError(f"Column {name!r}: {exc}") from None
            else:
                # one scatter per categorical column: code -> output position (-1: not selected)
                codes = self._codes(X[name], name, col.categories)
                target = np.append(positions, -1)[codes]  # code -1 (unknown) -> -1
                keep = target >= 0
                out[rows[keep], target[keep]] = 1.0
        if self.add_constant:
            out[:, -1] = 1.0
        return _to_unit_ball(out, self.normalize, self.max_norm_)

    def _plan(self) -> dict[str, np.ndarray]:
        """Output position of each raw column's outputs (-1 where not selected).

        Numeric column: one position. Categorical column: one entry per
        public category, in schema order.
        """
        plan: dict[str, np.ndarray] = {}
        for j, (name, cat) in enumerate(self.selection_):
            col = self.schema.column(name)
            if name not in plan:
                plan[name] = np.full(1 if col.is_numeric else len(col.categories), -1, dtype=np.intp)
            plan[name][0 if cat is None else col.categories.index(cat)] = j
        return plan

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of the output columns, in order (the constant ``"const"`` last)."""
        if not hasattr(self, "feature_names_out_"):
            raise DataValidationError("Call fit before get_feature_names_out.")
        return self.feature_names_out_.copy()


def _to_unit_ball(out: np.ndarray, normalize: str, max_norm: float) -> np.ndarray:
    """Row-wise map into the unit ball (Section 3: ||x_i|| <= 1)."""
    if normalize == "global":
        out /= out.dtype.type(max_norm)
        return out
    norms = np.sqrt(np.einsum("ij,ij->i", out, out, dtype=np.float64))
    if normalize == "unit":
        div = np.where(norms > 0, norms, 1.0)
    else:  # "project"
        div = np.maximum(norms, 1.0)
    out /= div.astype(out.dtype)[:, None]
    return out
