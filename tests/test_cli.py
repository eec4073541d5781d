"""The command line never loses a finished sweep: arguments and --out are checked before any
work, files are written atomically and never overwritten silently, an interrupt keeps what
finished; user data with public bounds and a Dask scheduler."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpci.experiments import cli
from dpci.experiments.cli import main

ROOT = Path(__file__).resolve().parents[1]
QUICK = ["sweep", "variability", "--dataset", "synthetic", "--d", "2", "--vi-replicates", "64"]


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--replicates", "0"),
        ("--vi-replicates", "-3"),
        ("--samples", "0"),
        ("--jobs", "0"),
        ("--c", "-1"),
        ("--alpha", "1.5"),
        ("--d", "x"),
    ],
)
def test_bad_numbers_are_refused_by_the_parser(flag, value, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*QUICK, flag, value, "--out", str(tmp_path / "x.csv")])
    assert exit_.value.code == 2
    assert f"argument {flag}" in capsys.readouterr().err


@pytest.mark.parametrize("where, message", [("missing/x.csv", "does not exist"), (".", "is a folder")])
def test_a_bad_out_is_refused_before_any_work(where, message, tmp_path, capsys, monkeypatch):
    ran = []
    monkeypatch.setattr(cli, "iter_sweep", lambda *a, **k: ran.append(1) or iter(()))
    assert main([*QUICK, "--out", str(tmp_path / where)]) == 2
    assert message in capsys.readouterr().err and not ran


def test_an_existing_file_is_kept_unless_forced(tmp_path, capsys):
    out = tmp_path / "x.csv"
    out.write_text("precious\n")
    assert main([*QUICK, "--out", str(out)]) == 2
    assert "pass --force" in capsys.readouterr().err and out.read_text() == "precious\n"
    assert main([*QUICK, "--out", str(out), "--force"]) == 0
    frame = pd.read_csv(out)
    assert len(frame) == 3 and not frame["partial"].any()


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    out = tmp_path / "x.csv"
    out.write_text("old\n")

    def broken(self, f, **kw):
        f.write("half a fi")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken)
    with pytest.raises(OSError, match="disk full"):
        main([*QUICK, "--out", str(out), "--force"])
    assert out.read_text() == "old\n" and os.listdir(tmp_path) == ["x.csv"]


def test_an_interrupt_writes_what_finished_marked_partial(tmp_path, capsys, monkeypatch):
    out = tmp_path / "x.csv"
    real = cli.iter_sweep

    def interrupted(*a, **k):
        for i, frame in enumerate(real(*a, **k)):
            yield frame
            if i == 1:
                raise KeyboardInterrupt

    monkeypatch.setattr(cli, "iter_sweep", interrupted)
    args = [
        "sweep",
        "split-phi1",
        "--dataset",
        "synthetic",
        "--d",
        "2",
        "--values",
        "0.5,0.9",
        "--replicates",
        "40",
        "--samples",
        "200",
        "--c",
        "0.01",
        "--out",
        str(out),
    ]
    assert main(args) == 130
    frame = pd.read_csv(out)
    assert frame["partial"].all() and set(frame["phi1"]) == {0.5} and frame["replicates"].max() < 40
    assert "marked partial" in capsys.readouterr().err


@pytest.mark.slow  # over 4 s: the quick run (-m "not slow") stays under 4 minutes
@pytest.mark.serial  # the workers must stop within 10 s of SIGTERM: timed alone (tests/run.sh)
def test_sigterm_stops_a_parallel_sweep_keeps_its_results_and_its_workers(tmp_path):
    psutil = pytest.importorskip("psutil")
    out = tmp_path / "x.csv"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dpci",
            "sweep",
            "variability",
            "--dataset",
            "synthetic",
            "--d",
            "5",
            "--vi-replicates",
            "1000000",
            "--jobs",
            "2",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "replicates" not in (proc.stderr.read(200) or ""):
        pass
    time.sleep(2.0)  # the workers are busy
    children = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 130
    assert pd.read_csv(out)["partial"].all()
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, f"workers left running: {alive}"


def test_user_data_with_public_bounds(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 600
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "hours": rng.integers(1, 80, n)})
    frame["rich"] = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-(frame["age"] - 50) / 10)), "yes", "no")
    frame.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "bounds.json").write_text(json.dumps({"age": [0, 120], "hours": [0, 100]}))
    common = [
        "sweep",
        "coverage",
        "--data",
        str(tmp_path / "people.csv"),
        "--target",
        "rich",
        "--replicates",
        "8",
        "--samples",
        "200",
        "--c",
        "0.01",
    ]
    assert main([*common, "--bounds", str(tmp_path / "bounds.json"), "--out", str(tmp_path / "a.csv")]) == 0
    result = pd.read_csv(tmp_path / "a.csv")
    assert list(result["feature"]) == ["age", "hours", "const"]
    err = capsys.readouterr().err
    assert "warning:" not in err and "read from the data" not in err  # the bounds were public
    assert "theta0_nonprivate is the exact fit" in err  # the sweep itself is never private
    assert main([*common, "--out", str(tmp_path / "b.csv")]) == 0  # no bounds: it runs, and says so
    assert "warning:" in capsys.readouterr().err.lower()
    assert main([*common[:6], "--bounds", str(tmp_path / "people.csv"), "--out", str(tmp_path / "c.csv")]) == 2
    assert "is not JSON" in capsys.readouterr().err


def test_a_dask_scheduler_runs_the_sweep(tmp_path):
    distributed = pytest.importorskip("distributed")
    local, remote = tmp_path / "local.csv", tmp_path / "remote.csv"
    args = ["sweep", "variability", "--dataset", "synthetic", "--d", "2", "--vi-replicates", "96"]
    assert main([*args, "--out", str(local)]) == 0
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        assert main([*args, "--scheduler", cluster.scheduler_address, "--out", str(remote)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(local), pd.read_csv(remote))


def test_an_unreachable_scheduler_is_a_message(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    from dpci.experiments import cluster

    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1.0)  # the message, not the 10 s wait for it
    assert main([*QUICK, "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path / "x.csv")]) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err
