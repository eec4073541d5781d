"""Data for dpci: sample datasets, public schemas, preprocessing, synthetic data, uploads.

Everything here feeds the estimators' input contract (Wang, Kifer & Lee,
Sections 3 and 6): rows of ``X`` in the unit L2 ball, labels in {-1, +1}.

* :func:`load_adult`, :func:`load_kddcup` -- real datasets preprocessed as in
  Section 7.1, but scaled with *public* bounds (:data:`ADULT_SCHEMA`,
  :data:`KDDCUP_SCHEMA`) instead of observed maxima, which would leak
  information and break the privacy guarantee (ERRATA.md).
* :class:`Schema`, :class:`Column` -- public description of a dataset.
* :class:`UnitBallPreprocessor` -- scikit-learn style transformer.
* :func:`make_synthetic_logistic`, :func:`population_theta0` -- synthetic data
  with a known population parameter theta0 (eq. 3.1 with n -> infinity);
  :func:`make_census_like`: a known truth with large coefficients and a near-singular design.
* :func:`read_uploaded_csv` -- safe validation of user CSV files.
* :class:`PublicFacts`, :func:`stand_in` -- a synthetic stand-in built from a dataset's public
  facts only, to tune on without spending privacy.
"""

from dpci.data.adult import ADULT_COLUMNS, ADULT_SCHEMA, load_adult, load_adult_frame, read_adult_raw
from dpci.data.awan_wang import AWAN_WANG_BETA, make_awan_wang
from dpci.data.csv_text import guess_separator
from dpci.data.dataset import Dataset, make_dataset
from dpci.data.identity import TableColumns, upload_identity, upload_table
from dpci.data.kddcup import KDDCUP_COLUMNS, KDDCUP_SCHEMA, kddcup_path, load_kddcup, load_kddcup_frame
from dpci.data.paths import SAMPLE_DATA_DIR, SHARED_DATA_ENV, shared_data_dir
from dpci.data.preprocessing import (
    CONSTANT_NAME,
    UnitBallPreprocessor,
    count_out_of_bounds,
    encode_labels,
    scale_numeric,
)
from dpci.data.schema import CATEGORICAL, NUMERIC, Column, Schema
from dpci.data.standin import PublicFacts, stand_in, stand_in_loader
from dpci.data.synthetic import (
    CENSUS_LIKE_THETA,
    check_random_state,
    make_census_like,
    make_synthetic_logistic,
    population_theta0,
    sample_unit_ball,
)
from dpci.data.upload import CsvSummary, UploadResult, inspect_uploaded_csv, read_public_levels, read_uploaded_csv

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_SCHEMA",
    "AWAN_WANG_BETA",
    "CATEGORICAL",
    "CENSUS_LIKE_THETA",
    "CONSTANT_NAME",
    "KDDCUP_COLUMNS",
    "KDDCUP_SCHEMA",
    "NUMERIC",
    "SAMPLE_DATA_DIR",
    "SHARED_DATA_ENV",
    "Column",
    "CsvSummary",
    "Dataset",
    "PublicFacts",
    "Schema",
    "TableColumns",
    "UnitBallPreprocessor",
    "UploadResult",
    "check_random_state",
    "count_out_of_bounds",
    "encode_labels",
    "guess_separator",
    "inspect_uploaded_csv",
    "kddcup_path",
    "load_adult",
    "load_adult_frame",
    "load_kddcup",
    "load_kddcup_frame",
    "make_awan_wang",
    "make_census_like",
    "make_dataset",
    "make_synthetic_logistic",
    "population_theta0",
    "read_adult_raw",
    "read_public_levels",
    "read_uploaded_csv",
    "sample_unit_ball",
    "scale_numeric",
    "shared_data_dir",
    "stand_in",
    "stand_in_loader",
    "upload_identity",
    "upload_table",
]
