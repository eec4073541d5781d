"""The :class:`Dataset` container handed to the estimators.

It satisfies the estimators' input contract (Wang, Kifer & Lee, Section 3 and
Section 6): every row of ``X`` lies in the unit L2 ball and ``y`` is in
{-1, +1}.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpci.data.preprocessing import CONSTANT_NAME, UnitBallPreprocessor, encode_labels
from dpci.data.schema import Schema


@dataclass(eq=False)
class Dataset:
    """A preprocessed binary-classification dataset.

    Attributes
    ----------
    X : numpy.ndarray of shape (n, d')
        Design matrix; every row has L2 norm <= 1. With a constant feature it
        is the last column and ``d' = d + 1``.
    y : numpy.ndarray of shape (n,)
        Labels in {-1.0, +1.0}.
    feature_names : list of str
        Name of each column of ``X`` (``"const"`` for the constant; one-hot
        columns are ``"column=category"``). Use them to label intervals.
    name : str
        Dataset name.
    schema : Schema
        Public schema used for the preprocessing.
    frame : pandas.DataFrame or None
        Raw (cleaned, unscaled) data, row-aligned with ``X`` and ``y``.
    preprocessor : UnitBallPreprocessor or None
        The fitted transformer, to apply the same map to new raw rows.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    name: str
    schema: Schema
    frame: pd.DataFrame | None = None
    preprocessor: UnitBallPreprocessor | None = None

    @property
    def n(self) -> int:
        """Number of records."""
        return int(self.X.shape[0])

    @property
    def has_constant(self) -> bool:
        """True if the last column is the constant feature."""
        return bool(self.feature_names) and self.feature_names[-1] == CONSTANT_NAME

    @property
    def d(self) -> int:
        """Number of features *before* the constant (the paper's d, Section 7.1)."""
        return int(self.X.shape[1]) - int(self.has_constant)

    @property
    def frame_X(self) -> pd.DataFrame:
        """``X`` as a DataFrame whose columns are ``feature_names`` (labels intervals)."""
        return pd.DataFrame(self.X, columns=list(self.feature_names), copy=False)

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, n={self.n}, d={self.d}, "
            f"constant={self.has_constant}, schema={self.schema.name!r})"
        )


def make_dataset(
    frame: pd.DataFrame,
    schema: Schema,
    *,
    name: str | None = None,
    keep_frame: bool = True,
    **preprocessing,
) -> Dataset:
    """Preprocess a clean raw DataFrame into a :class:`Dataset`.

    Parameters
    ----------
    frame : pandas.DataFrame
        Raw data with the schema's feature columns and label; no missing
        values (drop incomplete rows first).
    schema : Schema
        Public schema (bounds and category lists from documentation).
    name : str, optional
        Dataset name; defaults to ``schema.name``.
    keep_frame : bool, default True
        Store ``frame`` in the result.
    **preprocessing
        The parameters of :class:`UnitBallPreprocessor` after the schema (``d``, ``features``,
        ``add_constant``, ``normalize``, ``handle_unknown``, ``dtype``), with its defaults.

    Returns
    -------
    Dataset
    """
    pre = UnitBallPreprocessor(schema, **preprocessing)
    X = pre.fit_transform(frame)
    y = encode_labels(frame[schema.label], schema.positive_class, schema.negative_class)
    return Dataset(
        X=X,
        y=y,
        feature_names=[str(f) for f in pre.get_feature_names_out()],
        name=name or schema.name,
        schema=schema,
        frame=frame if keep_frame else None,
        preprocessor=pre,
    )
