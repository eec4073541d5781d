"""``python -m dpci release``: one release from a CSV through the app's ledger; a refusal exits 3
with the ledger's message and draws nothing; the app shows the release by its id."""

import json
from pathlib import Path

import numpy as np
import pytest

from dpci.data import upload_identity
from dpci.experiments.cli import main
from dpci.ledger import Ledger

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def people(tmp_path):
    rng = np.random.default_rng(abs(hash(str(tmp_path))) % 2**32)  # data of its own: the ledger is shared
    rows = [f"{rng.integers(18, 80)},{rng.integers(1, 80)},{rng.choice(['yes', 'no'])}" for _ in range(2000)]
    csv = tmp_path / "people.csv"
    csv.write_text("\n".join(["age,hours,label", *rows]))
    bounds = tmp_path / "bounds.json"
    bounds.write_text(json.dumps({"bounds": {"age": [0, 120], "hours": [0, 100]}, "labels": ["yes", "no"]}))
    return csv, bounds


def _key(csv):
    book = Ledger.from_config()
    return book, book.key_of(upload_identity(csv.read_bytes()))


def test_a_release_from_the_command_line_is_on_the_apps_ledger_and_in_its_record(people, tmp_path, capsys):
    csv, bounds = people
    record = tmp_path / "record.json"
    argv = ["release", "--data", str(csv), "--target", "label", "--bounds", str(bounds), "--epsilon", "0.5"]
    assert main([*argv, "--method", "output", "--record", str(record)]) == 0
    out = capsys.readouterr().out
    release_id = out.split()[1]
    assert "(private)" in out.splitlines()[0] and "age" in out and "hours" in out and "const" in out
    book, key = _key(csv)
    assert book.status(key).releases == 1 and book.status(key).spent == pytest.approx(0.5)
    stored = json.loads(record.read_text())
    assert stored["release"] == release_id and len(stored["outputs"]["conf_int"]) == 3
    assert stored["charge"]["charge"] == pytest.approx(0.5) and stored["outputs"]["feature_names"][0] == "age"

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages/5_Present.py"), default_timeout=120)  # the app shows it, by id
    at.query_params["release"] = release_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(release_id in c.value for c in at.caption)
    words = " ".join(m.value for m in at.markdown)
    assert "ε = 0.5" in words.replace("\\", "") and book.status(key).releases == 1  # shown, not drawn again


def test_a_release_the_budget_cannot_pay_exits_3_and_draws_nothing(people, capsys):
    csv, bounds = people
    argv = ["release", "--data", str(csv), "--target", "label", "--bounds", str(bounds)]
    assert main([*argv, "--epsilon", "2.5"]) == 0
    capsys.readouterr()
    assert main([*argv, "--epsilon", "1.0"]) == 3  # 2.5 + 1 > the default budget of 3
    err = capsys.readouterr().err
    assert "Refused before it ran" in err and "budget of 3" in err and "whoever runs the server" in err
    book, key = _key(csv)
    assert book.status(key).releases == 1


def test_a_public_seed_is_recorded_as_not_private(people, capsys):
    csv, bounds = people
    argv = ["release", "--data", str(csv), "--target", "label", "--bounds", str(bounds), "--rho", "0.1"]
    book, key = _key(csv)
    assert main([*argv, "--seed", "7"]) == 0  # a public seed: recorded, never counted, whatever its notion
    assert "NOT private" in capsys.readouterr().out
    status = book.status(key)
    assert (status.releases, status.not_private) == (0, 1)
    assert main(argv) == 3  # with fresh randomness, a zCDP release on a pure budget: refused, and said why
    assert "zCDP" in capsys.readouterr().err and book.status(key).releases == 0


def test_bad_input_says_what_is_wrong(people, tmp_path, capsys):
    csv, _ = people
    assert main(["release", "--data", str(tmp_path / "missing.csv"), "--target", "label", "--epsilon", "1"]) == 2
    assert "missing.csv" in capsys.readouterr().err
    assert main(["release", "--data", str(csv), "--target", "nope", "--epsilon", "1"]) == 2
    assert "nope" in capsys.readouterr().err


BOUNDS = {"age": [0, 120], "hours": [0, 100]}


@pytest.mark.parametrize(
    "facts, read_from_data",
    [
        ({"bounds": BOUNDS, "labels": ["yes", "no"]}, []),
        ({"bounds": BOUNDS}, ["label values 'yes' and 'no'"]),
        ({"bounds": {"age": [0, 120]}, "labels": ["no", "yes"]}, ["bounds or categories of hours"]),
        (None, ["bounds or categories of age, hours", "label values"]),
    ],
    ids=["all public", "labels from the data", "a bound from the data", "nothing public"],
)
def test_a_release_is_recorded_private_only_when_every_bound_and_label_is_public(
    people, tmp_path, capsys, facts, read_from_data
):
    csv, _ = people
    argv = ["release", "--data", str(csv), "--target", "label", "--epsilon", "0.5", "--record", str(tmp_path / "r")]
    if facts is not None:
        (tmp_path / "facts.json").write_text(json.dumps(facts))
        argv += ["--bounds", str(tmp_path / "facts.json")]
    assert main(argv) == 0
    said = capsys.readouterr().out.splitlines()[0]
    record = json.loads((tmp_path / "r").read_text())
    book, key = _key(csv)
    assert book.status(key).spent == pytest.approx(0.5)  # charged either way: its noise was drawn
    assert record["charge"]["counted"] is True
    if not read_from_data:
        assert said.endswith("(private)") and record["private"] is True and record["not_private"] is None
        return
    assert "(NOT private: " in said and record["private"] is False
    for part in read_from_data:  # said, and recorded with the stored release (what Present reads)
        assert part in said and part in record["not_private"] and part in record["specification"]["not_private"]


def test_the_ledgers_files_are_readable_and_writable_by_their_owner_only(people, tmp_path, capsys):
    import os
    import stat

    csv, bounds = people
    folder = tmp_path / "not-yet" / "ledger"
    argv = ["release", "--data", str(csv), "--target", "label", "--bounds", str(bounds), "--epsilon", "0.5"]
    old = os.umask(0o022)  # the usual umask, under which a file is made 0644 unless made otherwise
    try:
        assert main([*argv, "--database", f"sqlite:///{folder / 'ledger.sqlite3'}"]) == 0
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert "ledger.sqlite3" in modes and "secret.key" in modes, modes
    assert set(modes.values()) == {0o600}, {k: oct(v) for k, v in modes.items()}  # the WAL's files too
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_public_labels_that_are_not_the_targets_values_are_refused(people, tmp_path, capsys):
    csv, _ = people
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"bounds": BOUNDS, "labels": ["yes", "maybe"]}))
    argv = ["release", "--data", str(csv), "--target", "label", "--bounds", str(facts), "--epsilon", "0.5"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "\"labels\" in --bounds must list the target's two values, ['no', 'yes']" in err
    book, key = _key(csv)
    assert key not in [d.key for d in book.datasets()]  # refused before the ledger heard of it: nothing drawn


def test_a_sweep_on_a_file_is_on_the_ledger_as_not_private_and_names_its_exact_fit(people, tmp_path, capsys):
    csv, bounds = people
    out = tmp_path / "sweep.csv"
    argv = ["sweep", "coverage", "--data", str(csv), "--target", "label", "--bounds", str(bounds)]
    assert main([*argv, "--replicates", "4", "--samples", "200", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "not private" in err and "theta0_nonprivate" in err
    import pandas as pd

    columns = pd.read_csv(out).columns
    assert "theta0_nonprivate" in columns and "theta0" not in columns
    book, key = _key(csv)
    status = book.status(key)
    assert status.spent == 0.0 and status.releases == 0 and status.not_private >= 1  # noted, never charged
    assert main(["ledger", "list"]) == 0
    listed = capsys.readouterr().out
    assert "people.csv" in listed


def test_the_first_release_says_where_the_ledger_was_made_and_the_help_says_it_too(people, tmp_path, capsys):
    csv, bounds = people
    where = tmp_path / "fresh" / "ledger.sqlite3"
    argv = ["release", "--data", str(csv), "--target", "label", "--bounds", str(bounds), "--epsilon", "0.5"]
    assert main([*argv, "--database", f"sqlite:///{where}"]) == 0
    assert f"made the privacy ledger {where}" in capsys.readouterr().err
    assert main([*argv, "--database", f"sqlite:///{where}"]) == 0
    assert "made the privacy ledger" not in capsys.readouterr().err  # said once, when made
    with pytest.raises(SystemExit):
        main(["--help"])
    helped = capsys.readouterr().out
    from dpci.ledger.config import database_url

    assert database_url().removeprefix("sqlite:///") in helped and "``" not in helped and ":func:" not in helped


def test_the_last_line_counts_private_and_not_private_apart_and_the_scaling_is_said(people, tmp_path, capsys):
    csv, bounds = people
    argv = ["release", "--data", str(csv), "--target", "label", "--epsilon", "0.5"]
    assert main(argv) == 0  # bounds read from the data: charged, and not private
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].endswith(
        "in 1 charged release; 0 results recorded as not private; this release is NOT private (see its first line)"
    )
    assert "divided by K = " in lines[-2] and "is its estimate divided by K" in lines[-2]
    assert main([*argv, "--bounds", str(bounds), "--seed", "3"]) == 0  # a public seed: noted, not charged
    assert (
        capsys.readouterr()
        .out.splitlines()[-1]
        .endswith(
            "in 1 charged release; 1 result recorded as not private; this release is NOT private (see its first line)"
        )
    )


def test_a_gzipped_csv_is_read_and_messages_name_flags(people, tmp_path, capsys):
    import gzip

    csv, bounds = people
    packed = tmp_path / "people.csv.gz"
    packed.write_bytes(gzip.compress(csv.read_bytes()))
    argv = ["release", "--data", str(packed), "--target", "label", "--bounds", str(bounds), "--epsilon", "0.5"]
    assert main(argv) == 0
    book, key = _key(csv)
    assert book.status(key).releases == 1  # the same table as the plain file: one budget
    assert main(["release", "--data", str(csv), "--target", "label", "--epsilon", "0.5"]) == 0
    err = capsys.readouterr().err
    assert "(--bounds)" in err and "bounds=" not in err
    (tmp_path / "broken.json").write_text("{")
    assert (
        main(
            [
                "release",
                "--data",
                str(csv),
                "--target",
                "label",
                "--bounds",
                str(tmp_path / "broken.json"),
                "--epsilon",
                "1",
            ]
        )
        == 2
    )
    assert "--bounds" in capsys.readouterr().err


def test_a_refusal_names_the_command_that_sets_a_budget(people, capsys):
    csv, bounds = people
    argv = ["release", "--data", str(csv), "--target", "label", "--bounds", str(bounds)]
    assert main([*argv, "--epsilon", "2.5"]) == 0
    assert main([*argv, "--epsilon", "1"]) == 3
    assert "dpci ledger set-budget" in capsys.readouterr().err


def test_a_ledger_file_others_could_read_is_made_the_owners_alone(people, tmp_path, capsys):
    import os
    import stat

    where = tmp_path / "old" / "ledger.sqlite3"
    url = f"sqlite:///{where}"
    assert main(["ledger", "--database", url, "list"]) == 0
    os.chmod(where, 0o644)
    os.chmod(where.parent / "secret.key", 0o644)
    capsys.readouterr()
    assert main(["ledger", "--database", url, "list"]) == 0
    assert "could be read by other users" in capsys.readouterr().err
    assert stat.S_IMODE(where.stat().st_mode) == 0o600
    assert stat.S_IMODE((where.parent / "secret.key").stat().st_mode) == 0o600
