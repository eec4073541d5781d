"""KDD Cup 99 (10%) loader: skipped with a reason when the file is absent."""

import time

import numpy as np
import pytest

from dpci.data import KDDCUP_SCHEMA, kddcup_path, load_kddcup, shared_data_dir
from dpci.data.kddcup import KDDCUP_10_PERCENT, KDDCUP_10_PERCENT_ROWS

KDD_FILE = shared_data_dir() / KDDCUP_10_PERCENT
needs_kdd = pytest.mark.skipif(
    not KDD_FILE.is_file(),
    reason=f"{KDD_FILE} not found (KDD Cup 99 is not shipped; set DPCI_SHARED_DATA to its directory)",
)


def test_missing_file_error_names_the_file(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match=KDDCUP_10_PERCENT) as err:
        load_kddcup(tmp_path)
    assert str(tmp_path) in str(err.value) and "DPCI_SHARED_DATA" in str(err.value)
    monkeypatch.setenv("DPCI_SHARED_DATA", str(tmp_path))
    assert shared_data_dir() == tmp_path
    with pytest.raises(FileNotFoundError, match=str(tmp_path / KDDCUP_10_PERCENT)):
        kddcup_path()


def test_schema_shape():
    assert len(KDDCUP_SCHEMA.columns) == 41
    assert len(KDDCUP_SCHEMA.numeric_columns) == 38
    assert [len(c.categories) for c in KDDCUP_SCHEMA.categorical_columns] == [3, 70, 11]
    assert len(KDDCUP_SCHEMA.feature_names()) == 122
    assert all(c.source for c in KDDCUP_SCHEMA.columns)


@needs_kdd
def test_kddcup_head_quick():
    ds = load_kddcup(nrows=20_000, d=40)
    assert ds.X.shape == (20_000, 41) and ds.feature_names[-1] == "const"
    assert np.linalg.norm(ds.X, axis=1).max() <= 1 + 1e-12
    assert ds.feature_names[38:40] == ["protocol_type=tcp", "protocol_type=udp"]


@needs_kdd
@pytest.mark.slow  # over 3 s: the quick run (-m "not slow") stays well under 4 minutes
def test_kddcup_full_file():
    start = time.perf_counter()
    ds = load_kddcup()
    elapsed = time.perf_counter() - start
    assert ds.n == KDDCUP_10_PERCENT_ROWS == 494_021
    assert ds.X.shape == (494_021, 123)
    # label mapping: normal -> -1, every attack type -> +1
    normal = (ds.frame["label"] == "normal").to_numpy()
    assert np.array_equal(ds.y == -1, normal)
    assert int(normal.sum()) == 97_278 and int((ds.y == 1).sum()) == 396_743
    assert set(ds.frame["label"].unique()) >= {"smurf", "neptune", "normal"}
    assert np.linalg.norm(ds.X, axis=1).max() <= 1 + 1e-12
    assert elapsed < 60, f"loading took {elapsed:.1f} s"
