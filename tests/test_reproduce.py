"""python -m dpci reproduce: the quick mode's assertions hold, the files are written, and the
pieces (sample-size matching, checks, replot, command line) behave as documented."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import logistic_labels, unit_ball_rows

from dpci.experiments import reproduce as rp
from dpci.experiments.cli import build_parser, main
from dpci.experiments.reproduce.grids import grid_cells
from dpci.experiments.sample_size import iter_sample_size_match


@pytest.mark.slow
def test_quick_mode_reproduces_the_robust_claims(tmp_path):
    report = rp.run(tmp_path, quick=True, n_jobs=2, log=None)
    failed = "\n".join(c.line() for c in report.failed_assertions)
    assert not report.failed_assertions, f"quick-mode assertions failed:\n{failed}"
    assert {r.key for r in report.results} == set(rp.EXPERIMENTS)
    assert sum(c.kind == "assertion" for c in report.checks) >= 15
    directory = tmp_path / "figures" / "quick"  # never the full results' directory
    assert report.directory == directory
    summary = json.loads((directory / "summary.json").read_text())
    for key in rp.EXPERIMENTS:
        assert (directory / f"{key}.csv").exists()
        assert summary[key]["figures"], key
        for name in summary[key]["figures"]:
            html = (directory / name).read_text()
            assert "cdn.plot.ly" in html and len(html) < 500_000, name
    # redrawing from the CSVs recomputes nothing and reaches the same verdicts
    again = rp.run(tmp_path, quick=True, replot=True, log=None)
    assert [(c.name, c.passed) for c in again.checks] == [(c.name, c.passed) for c in report.checks]


def _synthetic_load(d):
    rng = np.random.default_rng(11)
    Z = unit_ball_rows(rng, 12_000, d)
    X = np.column_stack([Z, np.ones(len(Z))]) / np.sqrt(2)
    return X, logistic_labels(rng, X, np.linspace(-1, 1, d + 1)), [f"f{j}" for j in range(d)] + ["const"]


def test_bisection_matching_equals_the_sweeps_incremental_search():
    """Same definition, data and seeds as iter_sample_size_match, fewer evaluations."""
    ctx = rp.Context(replace(rp.QUICK, m=200), n_jobs=1)
    targets = rp.nonprivate_targets(_synthetic_load, 2, [300, 1000])
    for mechanism, privacy in (("output", "zcdp"), ("objective", "pure")):
        ours, curve = rp.match_sample_sizes(ctx, _synthetic_load, 2, targets, 1000, 12_000, mechanism, privacy, k=16)
        assert curve["length"].is_monotonic_decreasing
        *_, last = iter_sample_size_match(
            _synthetic_load,
            ctx.spec,
            [300, 1000],
            d=2,
            step=1000,
            methods=[(mechanism, privacy)],
            n_replicates=16,
        )
        theirs = last.frame
        np.testing.assert_array_equal(ours["n_private"].to_numpy(), theirs["n_private"].to_numpy())
        np.testing.assert_allclose(ours["nonprivate_length"], theirs["nonprivate_length"])
        reached = ours.dropna(subset=["n_private"])
        assert len(reached) and len(curve) < 12  # fewer evaluations than walking the whole lattice


def test_undefined_cells_are_recorded_not_fatal():
    """Objective perturbation with c = 0.001 is undefined at n = 100 (Algorithm 1 needs c > 0.0014 there):
    the grid records the cell with NaN coverage and a note, and runs the next one."""
    lines = []
    ctx = rp.Context(replace(rp.QUICK, m=200, k=16), n_jobs=1, log=lines.append)
    frame = grid_cells(ctx, _synthetic_load, [100, 2000], "d", (2,), "t", "synthetic", methods=[("objective", "pure")])
    undefined, ran = frame.iloc[0], frame.iloc[1]
    assert undefined["note"].startswith("undefined: c too small") and np.isnan(undefined["coverage"])
    assert ran["note"] == "" and ran["replicates"] == 16 and np.isfinite(ran["coverage"])
    assert list(frame["dataset"]) == ["synthetic"] * 2 and "skipped" not in frame
    assert "t n=100 d=2 obj+DP: undefined (c too small" in lines[0] and "t n=2000 d=2 obj+DP: coverage" in lines[1]


def _fit_result(lengths):
    n = np.array([1_000, 2_000, 4_000, 8_000, 16_000, 30_000])
    rows = [
        dict(
            study="n",
            mechanism=m,
            privacy=p,
            n=v,
            d=5,
            epsilon=1.0,
            budget=1.0,
            feature=rp.ALL,
            coverage=0.95,
            coverage_se=0.01,
            length=L,
            length_se=0.0,
        )
        for m, p in rp.METHODS
        for v, L in zip(n, lengths(n), strict=True)
    ]
    return rp.ExperimentResult("7.7", "fits", pd.DataFrame(rows))


def test_curve_fit_check_can_fail():
    good = rp.report(_fit_result(lambda n: 9_000 / n + 3 / np.sqrt(n)), rp.QUICK)
    assert all(c.passed for c in good.checks) and len(good.checks) == 4
    assert set(good.figures) == {f"7.7-n-{m}-{p}" for m, p in rp.METHODS}
    # lengths that scale exactly as 1/sqrt(n): the extra 1/n term explains nothing, so the check fails
    flat = rp.report(_fit_result(lambda n: 3 / np.sqrt(n)), rp.QUICK)
    assert not any(c.passed for c in flat.checks)


def test_report_errors_become_failed_checks():
    broken = rp.report(rp.ExperimentResult("7.6", "broken", pd.DataFrame({"x": [1]})), rp.QUICK)
    assert len(broken.checks) == 1 and not broken.checks[0].passed and "error" in broken.checks[0].detail


def test_settings_follow_the_paper_in_full_mode():
    assert (rp.FULL.k, rp.FULL.grid_k, rp.FULL.m, rp.FULL.n_vi) == (1_000, 1_000, 10_000, 10_000)
    assert rp.FULL.grid_ds == tuple(range(1, 11))
    for field in ("k", "m", "n_vi", "split_k", "runtime_repeats_adult"):
        assert getattr(rp.QUICK, field) < getattr(rp.FULL, field)


def test_command_line(tmp_path, capsys):
    args = build_parser().parse_args(["reproduce", "--out", str(tmp_path), "--quick", "--jobs", "2", "--only", "7.8"])
    assert (args.command, args.quick, args.jobs, args.only) == ("reproduce", True, 2, "7.8")
    assert main(["reproduce", "--out", str(tmp_path), "--only", "9.9"]) == 2
    assert "unknown experiment(s) 9.9" in capsys.readouterr().err


def test_kddcup_parts_skip_with_a_message(monkeypatch, tmp_path):
    monkeypatch.setenv("DPCI_SHARED_DATA", str(tmp_path))
    ok, why = rp.kddcup_available()
    assert not ok and "KDD Cup 99" in why and str(tmp_path) in why
