"""A stored release exported: the JSON record holds the stored numbers; the Python script and the
notebook run as written and make a release with the same settings on their own ledger."""

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("streamlit")
from ui.app_state import AppState
from ui.export import release_notebook, release_record, release_script, upload_spec

ROOT = Path(__file__).resolve().parents[1]


def _stored(spec=None):
    from dpci.ledger import StoredRelease

    payload = {"theta": [0.5, -1.0], "conf_int": [[0.1, 0.9], [-2.0, 0.0]]}
    charge = {"private": True, "charge": 1.0, "spent_before": 0.5}
    return StoredRelease("abc123", "key", "identity", spec or {"page": "Explorer"}, payload, 1.7e9, charge)


def test_the_record_holds_the_stored_numbers_and_what_they_cost():
    record = json.loads(release_record(_stored()))
    assert record["release"] == "abc123" and record["outputs"]["conf_int"] == [[0.1, 0.9], [-2.0, 0.0]]
    assert record["charge"] == {"counted": True, "charge": 1.0, "spent_before": 0.5}
    assert record["private"] is True and record["not_private"] is None


@pytest.mark.parametrize(
    "settings",
    [
        AppState.of(d=3, loss="huber", method="output", privacy="zcdp", budget=0.3),
        AppState.of(dataset="synthetic", d=2, budget=2.0, n_samples=1_000),
    ],
    ids=["adult", "synthetic"],
)
def test_the_script_runs_and_makes_a_release_with_these_settings(settings, tmp_path, monkeypatch, capsys):
    script = tmp_path / "release.py"
    script.write_text(release_script(settings, _stored()))
    monkeypatch.chdir(tmp_path)
    namespace = runpy.run_path(str(script))
    release, status = namespace["release"], namespace["watch"].status()
    assert release.theta.shape == (settings.data.d + 1,)
    assert status.releases == 1 and status.spent == pytest.approx(settings.spec.budget)
    assert release.spend.privacy == settings.spec.privacy and release.c == settings.spec.c
    assert (tmp_path / "dpci-ledger.sqlite3").exists()


def test_the_script_reads_an_upload_with_its_public_bounds(tmp_path, monkeypatch):
    from dpci.data import read_uploaded_csv

    rng = np.random.default_rng(0)
    rows = [f"{rng.integers(18, 80)},{rng.choice(['a', 'b'])},{rng.choice(['yes', 'no'])}" for _ in range(600)]
    data = "\n".join(["age,group,label", *rows]).encode()
    result = read_uploaded_csv(
        data, "label", positive_class="yes", bounds={"age": (0, 120)}, categories={"group": ("a", "b")}
    )
    (tmp_path / "people.csv").write_bytes(data)
    spec = {"upload": upload_spec(result, "people.csv", ",")}
    settings = AppState.of(dataset="upload", d=3, method="output")
    script = tmp_path / "release.py"
    script.write_text(release_script(settings, _stored(spec)))
    monkeypatch.chdir(tmp_path)
    namespace = runpy.run_path(str(script))
    assert namespace["release"].theta.shape == (4,)  # age, group=a, group=b, constant
    assert "bounds={'age': (0.0, 120.0)}" in script.read_text()


def test_the_notebook_is_valid_json_whose_code_is_the_script():
    settings = AppState.of(d=2)
    notebook = json.loads(release_notebook(settings, _stored()))
    assert notebook["nbformat"] == 4 and notebook["cells"][1]["source"] == release_script(settings, _stored())
    compile(notebook["cells"][1]["source"], "notebook", "exec")


def test_the_script_needs_nothing_but_dpci(tmp_path):
    script = tmp_path / "release.py"
    script.write_text(release_script(AppState.of(dataset="synthetic", d=2, n_samples=1_000)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # dpci as if installed
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "spent in 1 private release" in done.stdout


@pytest.mark.parametrize(
    "recorded, comment",
    [
        ({"not_private": None}, "# public bounds, as in the app"),
        ({"not_private": "the bounds of age are the data's own"}, "# NOT public: read from the data"),
        ({}, "# NOT public: read from the data"),  # a record that predates the field: the safe reading
    ],
    ids=["public", "read from the data", "not recorded"],
)
def test_the_script_calls_bounds_public_only_when_the_release_recorded_them_so(recorded, comment):
    upload = {"file": "people.csv", "target": "label", "positive": "yes", "columns": []}
    upload["columns"] = [dict(name="age", kind="numeric", lower=18.0, upper=79.0, categories=[])]
    script = release_script(AppState.of(dataset="upload", d=1), _stored({"upload": upload, **recorded}))
    line = next(line for line in script.splitlines() if line.strip().startswith("bounds="))
    assert line.split("},  ", 1)[1].startswith(comment), line
