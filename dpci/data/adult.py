"""UCI Adult ("Census Income"): schema with public bounds, and loader.

Source: Becker & Kohavi (1996), UCI Machine Learning Repository,
doi:10.24432/C5XW20, CC BY 4.0. The project ships the training split
``adult.data`` without rows containing missing values ('?'), 30,162 rows as in
Wang, Kifer & Lee, Section 7.1 / Table 1, in ``sample_data/adult.csv.gz``
(see ``sample_data/README.md``).

Public bounds
-------------
``adult.names`` says only "continuous" for the numeric columns, but it states
the extraction conditions ``AAGE>16``, ``AFNLWGT>1`` and ``HRSWK>0``. The
other limits come from the definition of the variables in the Current
Population Survey (CPS) public-use files; each column's ``source`` says which.
None was computed from the data, and none may be: scaling by the observed
maximum (as in Section 7.1 of the paper) leaks information (ERRATA.md).
Values outside the bounds are clipped by the preprocessing.

Paper comparison
----------------
With every categorical attribute binarised against the documented category
lists, Adult has 6 + 99 = 105 features (106 with the constant); Table 1 of the
paper reports d = 37, an encoding the paper does not describe. Use ``d`` or
``features`` of :func:`load_adult` to select a subset.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpci.data.dataset import Dataset, make_dataset
from dpci.data.paths import SAMPLE_DATA_DIR, shared_data_dir
from dpci.data.schema import Schema, categorical, numeric

_NAMES = "adult.names (UCI Adult documentation)"

ADULT_SCHEMA = Schema(
    name="adult",
    label="income",
    positive_class=">50K",
    negative_class="<=50K",
    source="UCI Adult, Becker & Kohavi (1996), doi:10.24432/C5XW20, CC BY 4.0; "
    "columns and category lists as in adult.names",
    columns=(
        numeric(
            "age",
            17,
            90,
            source="lower: adult.names extraction condition AAGE>16; upper: the CPS "
            "public-use files of the period top-code age at 90",
            description="age in years",
        ),
        categorical(
            "workclass",
            [
                "Private",
                "Self-emp-not-inc",
                "Self-emp-inc",
                "Federal-gov",
                "Local-gov",
                "State-gov",
                "Without-pay",
                "Never-worked",
            ],
            source=_NAMES,
        ),
        numeric(
            "fnlwgt",
            1,
            1_500_000,
            source="lower: adult.names extraction condition AFNLWGT>1; upper: not "
            "documented, a round number fixed for this public demo dataset (above the "
            "published file's maximum 1,484,705); for private data fix it without looking "
            "at the data",
            description="CPS final sampling weight",
        ),
        categorical(
            "education",
            [
                "Bachelors",
                "Some-college",
                "11th",
                "HS-grad",
                "Prof-school",
                "Assoc-acdm",
                "Assoc-voc",
                "9th",
                "7th-8th",
                "12th",
                "Masters",
                "1st-4th",
                "10th",
                "Doctorate",
                "5th-6th",
                "Preschool",
            ],
            source=_NAMES,
        ),
        numeric(
            "education-num",
            1,
            16,
            source="ordinal code of the 16 education levels listed in adult.names",
            description="education level as a number",
        ),
        categorical(
            "marital-status",
            [
                "Married-civ-spouse",
                "Divorced",
                "Never-married",
                "Separated",
                "Widowed",
                "Married-spouse-absent",
                "Married-AF-spouse",
            ],
            source=_NAMES,
        ),
        categorical(
            "occupation",
            [
                "Tech-support",
                "Craft-repair",
                "Other-service",
                "Sales",
                "Exec-managerial",
                "Prof-specialty",
                "Handlers-cleaners",
                "Machine-op-inspct",
                "Adm-clerical",
                "Farming-fishing",
                "Transport-moving",
                "Priv-house-serv",
                "Protective-serv",
                "Armed-Forces",
            ],
            source=_NAMES,
        ),
        categorical(
            "relationship",
            ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"],
            source=_NAMES,
        ),
        categorical(
            "race",
            ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
            source=_NAMES,
        ),
        categorical("sex", ["Female", "Male"], source=_NAMES),
        numeric(
            "capital-gain",
            0,
            99_999,
            source="CPS income amounts are 5-digit fields; 99,999 is the CPS top-code",
            description="capital gains in US dollars",
        ),
        numeric(
            "capital-loss",
            0,
            99_999,
            source="not documented; the same 5-digit CPS amount field as capital-gain",
            description="capital losses in US dollars",
        ),
        numeric(
            "hours-per-week",
            1,
            99,
            source="lower: adult.names extraction condition HRSWK>0; upper: the CPS "
            "usual-hours field has two digits (top-code 99)",
            description="usual hours worked per week",
        ),
        categorical(
            "native-country",
            [
                "United-States",
                "Cambodia",
                "England",
                "Puerto-Rico",
                "Canada",
                "Germany",
                "Outlying-US(Guam-USVI-etc)",
                "India",
                "Japan",
                "Greece",
                "South",
                "China",
                "Cuba",
                "Iran",
                "Honduras",
                "Philippines",
                "Italy",
                "Poland",
                "Jamaica",
                "Vietnam",
                "Mexico",
                "Portugal",
                "Ireland",
                "France",
                "Dominican-Republic",
                "Laos",
                "Ecuador",
                "Taiwan",
                "Haiti",
                "Columbia",
                "Hungary",
                "Guatemala",
                "Nicaragua",
                "Scotland",
                "Thailand",
                "Yugoslavia",
                "El-Salvador",
                "Trinadad&Tobago",
                "Peru",
                "Hong",
                "Holand-Netherlands",
            ],
            source=_NAMES,
        ),
    ),
)

#: Column names of the raw file, in file order (adult.names order + label).
ADULT_COLUMNS = [c.name for c in ADULT_SCHEMA.columns] + [ADULT_SCHEMA.label]

#: Shipped sample file.
ADULT_SAMPLE_PATH = SAMPLE_DATA_DIR / "adult.csv.gz"

#: Number of rows of adult.data without missing values (adult.names; paper Table 1).
ADULT_N_ROWS = 30_162

_DTYPES = {c.name: ("int64" if c.is_numeric else "str") for c in ADULT_SCHEMA.columns} | {ADULT_SCHEMA.label: "str"}


def read_adult_raw(path: str | os.PathLike) -> pd.DataFrame:
    """Read a raw UCI ``adult.data`` / ``adult.test`` file and drop '?' rows.

    Parameters
    ----------
    path : str or path-like
        The raw file, optionally gzip-compressed (``.gz``). Lines starting
        with '|' (the comment heading ``adult.test``) are skipped and the
        trailing '.' of ``adult.test`` labels is removed.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`ADULT_COLUMNS`, rows with any missing value removed,
        index reset.
    """
    frame = pd.read_csv(
        path,
        header=None,
        names=ADULT_COLUMNS,
        skipinitialspace=True,
        na_values=["?"],
        keep_default_na=False,
        comment="|",
        dtype={k: ("float64" if v == "int64" else v) for k, v in _DTYPES.items()},
        engine="c",
    )
    frame = frame.dropna(how="all").dropna().reset_index(drop=True)
    frame[ADULT_SCHEMA.label] = frame[ADULT_SCHEMA.label].str.rstrip(".")
    for col in ADULT_SCHEMA.numeric_columns:
        frame[col.name] = frame[col.name].astype("int64")
    return frame


def write_adult_sample(src: str | os.PathLike | None = None, dst: str | os.PathLike | None = None) -> Path:
    """Rebuild ``sample_data/adult.csv.gz`` from the raw UCI file.

    The output is byte-for-byte reproducible (gzip header time set to 0).

    Parameters
    ----------
    src : path-like, optional
        Raw ``adult.data`` or ``adult.data.gz``; defaults to the shared data
        directory (see :func:`dpci.data.paths.shared_data_dir`).
    dst : path-like, optional
        Output path; defaults to :data:`ADULT_SAMPLE_PATH`.

    Returns
    -------
    pathlib.Path
        The written file.
    """
    src = Path(src) if src is not None else shared_data_dir() / "adult.data.gz"
    dst = Path(dst) if dst is not None else ADULT_SAMPLE_PATH
    frame = read_adult_raw(src)
    text = frame.to_csv(index=False, lineterminator="\n")
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(dst, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
        gz.write(text.encode("utf-8"))
    return dst


def load_adult_frame(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """Read the shipped, cleaned Adult sample as a raw DataFrame.

    Parameters
    ----------
    path : path-like, optional
        A cleaned CSV (optionally gzip) with header :data:`ADULT_COLUMNS`;
        defaults to :data:`ADULT_SAMPLE_PATH`. If the default is missing, the
        raw ``adult.data.gz`` in the shared data directory is used instead.

    Returns
    -------
    pandas.DataFrame
        30,162 rows for the shipped file.
    """
    if path is None and not ADULT_SAMPLE_PATH.exists():
        raw = shared_data_dir() / "adult.data.gz"
        if raw.exists():
            return read_adult_raw(raw)
        raise FileNotFoundError(
            f"Adult sample file not found: {ADULT_SAMPLE_PATH} (nor the raw {raw}). "
            "Restore sample_data/ from the repository or pass path=..."
        )
    path = Path(path) if path is not None else ADULT_SAMPLE_PATH
    if not path.exists():
        raise FileNotFoundError(f"Adult file not found: {path}.")
    return pd.read_csv(path, dtype=_DTYPES, keep_default_na=False, na_values=[""], engine="c")


def load_adult(
    d: int | None = None,
    features: Sequence[str] | None = None,
    add_constant: bool = True,
    *,
    normalize: str = "unit",
    path: str | os.PathLike | None = None,
    dtype=np.float64,
) -> Dataset:
    """Load UCI Adult preprocessed as in Section 7.1, with public bounds.

    Parameters
    ----------
    d : int, optional
        Keep the first ``d`` features (before the constant; the paper's
        convention, e.g. d=10 gives 11 columns). Order: the six numeric
        columns (age, fnlwgt, education-num, capital-gain, capital-loss,
        hours-per-week), then the one-hot blocks of workclass, education,
        marital-status, occupation, relationship, race, sex, native-country,
        each in adult.names order.
    features : sequence of str, optional
        Named subset instead of ``d`` (raw column names or one-hot names such
        as ``"sex=Female"``), in the given order.
    add_constant : bool, default True
        Append the constant feature ``"const"`` (last column).
    normalize : {"unit", "project", "global"}, default "unit"
        Row normalisation; "unit" divides each row by its norm as the paper.
    path : path-like, optional
        Alternative cleaned CSV (see :func:`load_adult_frame`).
    dtype : numpy dtype, default float64

    Returns
    -------
    Dataset
        ``X`` rows in the unit ball, ``y`` = +1 for income ">50K", -1 for
        "<=50K"; ``frame`` holds the unscaled data.

    Notes
    -----
    Numeric columns are scaled with the public bounds of
    :data:`ADULT_SCHEMA`, never with observed maxima, so that the map from a
    record to its feature vector does not depend on other records.
    """
    frame = load_adult_frame(path)
    return make_dataset(
        frame,
        ADULT_SCHEMA,
        name="adult",
        d=d,
        features=features,
        add_constant=add_constant,
        normalize=normalize,
        dtype=dtype,
    )


if __name__ == "__main__":  # python -m dpci.data.adult [src] [dst]
    import sys

    out = write_adult_sample(*sys.argv[1:3])
    print(f"wrote {out} ({out.stat().st_size:,} bytes, {len(load_adult_frame(out)):,} rows)")
