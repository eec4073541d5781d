"""Dataset schemas: column kinds, public bounds, public category lists, label.

A :class:`Schema` is the *public* description of a dataset that the
preprocessing (:class:`dpci.data.UnitBallPreprocessor`) is allowed to use.

Privacy note
------------
The privacy guarantee of the estimators in :mod:`dpci` (objective and output
perturbation, Wang, Kifer & Lee, Sections 4-5) holds for the feature vectors
*as given to them*. If the map from raw records to feature vectors depends on
the data, e.g. scaling a column by its observed maximum as in Section 7.1 of
the paper, then changing one record can change every other record's features
and the sensitivity analysis no longer applies (see ERRATA.md, "Section 7.1
scales each attribute by its observed maximum, which is not private").

Therefore numeric bounds and category lists in a schema must come from public
knowledge (documentation of the dataset, the definition of the variable, a
code book), never from the data to be analysed. Each :class:`Column` records
where its bounds come from in ``source``, and ``public=False`` marks bounds or
categories that were taken from the data (e.g. by
:func:`dpci.data.read_uploaded_csv` when the user gave none); results computed
with such a schema are not differentially private with respect to that column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dpci.exceptions import DataValidationError

NUMERIC = "numeric"
CATEGORICAL = "categorical"
_KINDS = (NUMERIC, CATEGORICAL)


def bounds_problem(name: str, lower: float, upper: float) -> str:
    """What is wrong with a numeric column's public bounds, and how to fix it, in a reader's words."""
    if not (math.isfinite(lower) and math.isfinite(upper)):
        return f"The bounds of {name!r} must be numbers, got lower {lower:g} and upper {upper:g}."
    if lower == upper:
        return f"The bounds of {name!r} are both {lower:g}: give a range, its lowest and highest possible values."
    return (
        f"The lower bound of {name!r} ({lower:g}) is above its upper bound ({upper:g}): swap them, so the range "
        f"is {upper:g} to {lower:g}."
    )


@dataclass(frozen=True)
class Column:
    """One feature column of a dataset.

    Parameters
    ----------
    name : str
        Column name in the raw DataFrame.
    kind : {"numeric", "categorical"}
        Numeric columns are scaled into [-1, 1] using ``lower`` and ``upper``;
        categorical columns are one-hot encoded using ``categories``.
    lower, upper : float, optional
        Public bounds of a numeric column (required for numeric columns).
        Values outside are clipped to the bounds by the preprocessing. They
        must not be computed from the data being analysed: scaling by an
        observed minimum or maximum leaks information about the records and
        breaks the differential-privacy guarantee.
    categories : sequence of str, optional
        Public, complete list of levels of a categorical column (required for
        categorical columns). Its order is the order of the one-hot columns.
        Using the levels observed in the data instead would reveal which rare
        levels occur.
    log1p : bool, default False
        Numeric only: apply ``log(1 + x)`` before scaling (for heavy-tailed
        counts such as byte counts). ``lower`` and ``upper`` stay in the
        original units and ``lower`` must be > -1.
    source : str, default ""
        Where the bounds or categories come from (documentation, definition).
    public : bool, default True
        False when the bounds or categories were derived from the data; the
        app should then display a privacy warning.
    description : str, default ""
        Human-readable meaning of the column.
    """

    name: str
    kind: str
    lower: float | None = None
    upper: float | None = None
    categories: tuple[str, ...] = ()
    log1p: bool = False
    source: str = ""
    public: bool = True
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise DataValidationError(f"Column name must be a non-empty string, got {self.name!r}.")
        if self.kind not in _KINDS:
            raise DataValidationError(f"Column {self.name!r}: kind must be one of {_KINDS}, got {self.kind!r}.")
        object.__setattr__(self, "categories", tuple(str(c) for c in self.categories))
        if self.kind == NUMERIC:
            if self.lower is None or self.upper is None:
                raise DataValidationError(
                    f"Numeric column {self.name!r} needs public bounds (lower, upper); "
                    "take them from the data's documentation, not from the data."
                )
            lo, hi = float(self.lower), float(self.upper)
            if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
                raise DataValidationError(bounds_problem(self.name, lo, hi))
            if self.log1p and lo <= -1:
                raise DataValidationError(f"Numeric column {self.name!r}: log1p scaling needs lower > -1, got {lo}.")
            if self.categories:
                raise DataValidationError(f"Numeric column {self.name!r} cannot have categories.")
            object.__setattr__(self, "lower", lo)
            object.__setattr__(self, "upper", hi)
        else:
            if not self.categories:
                raise DataValidationError(f"Categorical column {self.name!r} needs its public list of categories.")
            if len(set(self.categories)) != len(self.categories):
                raise DataValidationError(f"Categorical column {self.name!r} has duplicate categories.")
            if self.lower is not None or self.upper is not None or self.log1p:
                raise DataValidationError(f"Categorical column {self.name!r} cannot have numeric bounds or log1p.")

    @property
    def is_numeric(self) -> bool:
        """True for numeric columns."""
        return self.kind == NUMERIC

    @property
    def output_names(self) -> list[str]:
        """Names of the design-matrix columns this column produces.

        A numeric column produces one column named like itself; a categorical
        column produces one indicator per category, named ``"name=category"``.
        """
        if self.is_numeric:
            return [self.name]
        return [f"{self.name}={c}" for c in self.categories]


def numeric(name: str, lower: float, upper: float, source: str, **kwargs) -> Column:
    """Shorthand for a numeric :class:`Column` with public bounds."""
    return Column(name, NUMERIC, lower=lower, upper=upper, source=source, **kwargs)


def categorical(name: str, categories, source: str, **kwargs) -> Column:
    """Shorthand for a categorical :class:`Column` with a public category list."""
    return Column(name, CATEGORICAL, categories=tuple(categories), source=source, **kwargs)


@dataclass(frozen=True)
class Schema:
    """Public description of a dataset for binary classification.

    Parameters
    ----------
    name : str
        Dataset name.
    columns : sequence of Column
        Feature columns, in schema order. The label column is not included.
    label : str
        Name of the label (target) column in the raw DataFrame.
    positive_class : str
        Label value mapped to +1.
    negative_class : str
        Label value mapped to -1. Any other label value is an error.
    source : str, default ""
        Origin of the schema (documentation, citation).

    Notes
    -----
    The design-matrix column order used by :class:`UnitBallPreprocessor` is
    all numeric columns in schema order, then the one-hot blocks of the
    categorical columns in schema order, each block in the order of
    ``Column.categories``; see :meth:`feature_names`.
    """

    name: str
    columns: tuple[Column, ...]
    label: str
    positive_class: str
    negative_class: str
    source: str = ""
    _by_name: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cols = tuple(self.columns)
        object.__setattr__(self, "columns", cols)
        object.__setattr__(self, "positive_class", str(self.positive_class))
        object.__setattr__(self, "negative_class", str(self.negative_class))
        names = [c.name for c in cols]
        if not cols:
            raise DataValidationError(f"Schema {self.name!r} has no feature columns.")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise DataValidationError(f"Schema {self.name!r} has duplicate columns: {dup}.")
        if self.label in names:
            raise DataValidationError(f"Schema {self.name!r}: the label {self.label!r} cannot also be a feature.")
        if self.positive_class == self.negative_class:
            raise DataValidationError(
                f"Schema {self.name!r}: positive and negative class are both {self.positive_class!r}."
            )
        out = [n for c in cols for n in c.output_names]
        dup_out = sorted({n for n in out if out.count(n) > 1})
        if dup_out:
            raise DataValidationError(f"Schema {self.name!r}: feature names collide after one-hot encoding: {dup_out}.")
        object.__setattr__(self, "_by_name", {c.name: c for c in cols})

    @property
    def column_names(self) -> list[str]:
        """Feature column names in schema order."""
        return [c.name for c in self.columns]

    @property
    def numeric_columns(self) -> tuple[Column, ...]:
        """Numeric columns in schema order."""
        return tuple(c for c in self.columns if c.is_numeric)

    @property
    def categorical_columns(self) -> tuple[Column, ...]:
        """Categorical columns in schema order."""
        return tuple(c for c in self.columns if not c.is_numeric)

    @property
    def is_public(self) -> bool:
        """True if no column's bounds or categories were derived from the data."""
        return all(c.public for c in self.columns)

    def column(self, name: str) -> Column:
        """Return the column called ``name``."""
        try:
            return self._by_name[name]
        except KeyError:
            raise DataValidationError(
                f"Schema {self.name!r} has no column {name!r}; columns are {self.column_names}."
            ) from None

    def ordered_columns(self) -> tuple[Column, ...]:
        """Columns in design-matrix order: numeric first, then categorical."""
        return self.numeric_columns + self.categorical_columns

    def feature_names(self) -> list[str]:
        """All design-matrix column names (before selection and constant)."""
        return [n for c in self.ordered_columns() for n in c.output_names]

    def bounds(self) -> dict[str, tuple[float, float]]:
        """Public bounds ``{name: (lower, upper)}`` of the numeric columns."""
        return {c.name: (c.lower, c.upper) for c in self.numeric_columns}  # type: ignore[misc]  # numeric: both set
