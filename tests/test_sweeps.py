"""Sweeps return tidy frames, recommend a split by the stated rule, and fit Section 7.7's curves."""

import numpy as np
import pandas as pd
import pytest
from conftest import logistic_labels, unit_ball_rows

from dpci import LogisticLoss, RegularisationTooSmall, ReleaseSpec
from dpci.experiments.cli import main
from dpci.experiments.curves import fit_length_vs_budget, fit_length_vs_n
from dpci.experiments.sample_size import iter_sample_size_match
from dpci.experiments.sweeps import (
    ALL,
    budget_for,
    iter_grid_sweep,
    iter_interval_vs_variability,
    iter_split_sweep,
    recommend_split,
    subsample,
)

SPEC = ReleaseSpec(loss=LogisticLoss(), n_samples=300)  # each setting replaces the method, notion and budget


def _load(d):
    rng = np.random.default_rng(d)
    Z = unit_ball_rows(rng, 4000, d)
    X = np.column_stack([Z, np.ones(4000)]) / np.sqrt(2)
    return X, logistic_labels(rng, X, np.linspace(-1, 1, d + 1)), [f"f{j}" for j in range(d)] + ["const"]


def _last(gen):
    for p in gen:
        last = p
    return last


def test_split_sweep_frame_and_recommendation():
    X, y, names = _load(2)
    progress = list(iter_split_sweep(X, y, SPEC, shares=(0.5, 0.8), n_replicates=16, feature_names=names))
    assert progress[-1].finished and not progress[0].finished
    frame = progress[-1].frame
    assert len(frame) == 2 * (3 + 1)  # two settings x (3 coordinates + the "(all)" row)
    assert set(frame["feature"]) == {"f0", "f1", "const", ALL}
    np.testing.assert_allclose(frame[["phi1", "phi2", "phi3"]].sum(axis=1), 1.0)
    assert set(frame["phi1"]) == {0.5, 0.8}
    # partial frames grow monotonically and the last one holds every setting
    assert len(progress[0].frame) <= len(frame)


def test_recommend_split_rule():
    frame = pd.DataFrame(
        dict(
            feature=[ALL] * 3,
            phi1=[0.5, 0.7, 0.9],
            phi2=[0.25, 0.15, 0.05],
            phi3=[0.25, 0.15, 0.05],
            coverage=[0.96, 0.95, 0.93],
            length=[0.5, 0.4, 0.3],
        )
    )
    best = recommend_split(frame, alpha=0.05)
    assert best["phi1"] == 0.7 and best["meets_coverage"]  # 0.9 is shorter but under-covers
    none_ok = recommend_split(frame.assign(coverage=[0.90, 0.92, 0.91]), alpha=0.05)
    assert none_ok["phi1"] == 0.7 and not none_ok["meets_coverage"]


def test_grid_and_comparison_sweeps():
    grid = _last(
        iter_grid_sweep(
            _load,
            SPEC,
            ns=[1000, 2000],
            ds=[1, 2],
            n_replicates=16,
            methods=[("output", "zcdp")],
        )
    ).frame
    overall = grid[grid["feature"] == ALL]
    assert sorted(zip(overall["n"], overall["d"])) == [(1000, 1), (1000, 2), (2000, 1), (2000, 2)]
    assert (overall["budget"] == budget_for("zcdp", 1.0)).all()
    equal = _last(
        iter_grid_sweep(
            _load,
            SPEC,
            ns=[1000],
            ds=[1],
            n_replicates=8,
            methods=[("output", "zcdp")],
            delta=1e-6,
        )
    ).frame
    # at equal (epsilon, delta) zCDP gets rho = 0.0175, not 0.5, and its intervals are far longer
    assert equal["budget"].iloc[0] == pytest.approx(0.017468, rel=1e-4) and (equal["delta"] == 1e-6).all()
    assert (
        equal[equal["feature"] == ALL]["length"].iloc[0]
        > 3 * overall[(overall["n"] == 1000) & (overall["d"] == 1)]["length"].iloc[0]
    )
    comp = _last(
        iter_interval_vs_variability(
            _load,
            SPEC,
            "n",
            [1000, 3000],
            d=2,
            n_replicates=16,
            n_vi=64,
            methods=[("objective", "pure")],
        )
    ).frame
    overall = comp[comp["feature"] == ALL].set_index("n")
    assert {"length", "vi_length"} <= set(overall.columns)
    # the variability interval is a lower bound in expectation; with 16 replicates allow noise
    assert (overall["vi_length"] < 1.5 * overall["length"]).all()
    assert overall.loc[3000, "length"] < overall.loc[1000, "length"]


def test_skip_invalid_turns_a_cell_with_c_too_small_into_a_nan_row():
    # objective perturbation, pure DP, epsilon = 1: Algorithm 1 needs c > t / (2n(e^0.65 - 1)), about
    # 1.4e-4 at n = 1,000 and 4.6e-5 at n = 3,000, so c = 1e-4 is invalid at the first n only
    kw = dict(ns=[1000, 3000], ds=[1], methods=[("objective", "pure")], n_replicates=16)
    with pytest.raises(RegularisationTooSmall) as err:
        _last(iter_grid_sweep(_load, SPEC.replace(c=1e-4), **kw))
    progress = list(iter_grid_sweep(_load, SPEC.replace(c=1e-4), skip_invalid=True, **kw))
    frame = progress[-1].frame
    assert progress[-1].finished and [p.settings_done for p in progress if p.current is None] == [1, 2]
    skipped = frame[frame["n"] == 1000]
    assert len(skipped) == 1 and skipped["feature"].iloc[0] == ALL and skipped["replicates"].iloc[0] == 0
    assert skipped[["coverage", "coverage_se", "length", "length_se"]].isna().all(axis=None)
    why = skipped["skipped"].iloc[0]
    assert why.startswith("c too small") and f"c > {err.value.smallest_c:.4g}" in why
    ran = frame[frame["n"] == 3000]
    assert len(ran) == 3 and (ran["skipped"] == "").all() and (ran["replicates"] == 16).all()
    assert ran[["coverage", "length"]].notna().all(axis=None) and list(frame.columns)[-1] == "skipped"
    # a sweep without invalid settings has no skipped column unless asked for one
    plain = _last(
        iter_grid_sweep(
            _load,
            SPEC.replace(c=1e-4),
            ns=[3000],
            ds=[1],
            methods=[("objective", "pure")],
            n_replicates=16,
        )
    ).frame
    assert "skipped" not in plain and plain["coverage"].notna().all()


def test_sample_size_search_bisects_and_evaluates_each_n_once():
    kw = dict(d=1, step=500, methods=[("output", "zcdp")], n_replicates=16)
    walk = list(iter_sample_size_match(_load, SPEC, [50, 150], **kw))
    bisect = list(iter_sample_size_match(_load, SPEC, [50, 150], search="bisect", **kw))
    walked = [p.evaluated for p in walk if p.evaluated is not None]
    bisected = [p.evaluated["n"] for p in bisect if p.evaluated is not None]
    # the walk looks at 500, 1000, ... once each, although both targets pass the first n
    assert [e["n"] for e in walked] == list(range(500, 4001, 500))
    frame = walk[-1].frame
    assert frame["n_private"].notna().all() and frame["n_private"].iloc[0] < frame["n_private"].iloc[1]
    # the length decreases along the lattice here, so bisection finds the same n in fewer evaluations
    pd.testing.assert_frame_equal(frame, bisect[-1].frame)
    assert len(set(bisected)) == len(bisected) < len(walked)
    # n_max caps the lattice at 500, 1000: no n reaches the first target, reported at the largest n
    capped = _last(iter_sample_size_match(_load, SPEC, [50], n_max=1200, **kw)).frame
    assert capped["n_max"].iloc[0] == 1200 and capped["n_private"].isna().all()
    assert capped["private_length"].iloc[0] == walked[1]["length"]


def test_curve_fits_recover_known_coefficients():
    n = np.array([500, 1000, 2000, 5000, 10000, 20000])
    fits = fit_length_vs_n(n, 30 / n + 4 / np.sqrt(n))
    assert fits["privacy"].coefficients["c0"] == pytest.approx(30)
    assert fits["privacy"].coefficients["c1"] == pytest.approx(4)
    assert fits["privacy"].r2 > fits["sampling only"].r2
    eps = np.array([0.2, 0.5, 1, 2, 4])
    fit = fit_length_vs_budget(eps, np.sqrt(0.3 / eps**2 + 0.02), "pure")
    assert fit.coefficients["c0"] == pytest.approx(0.3, rel=1e-4) and fit.r2 > 0.9999
    rho = eps**2 / 2
    fit = fit_length_vs_budget(rho, np.sqrt(0.1 / rho + 0.05), "zcdp")
    assert fit.coefficients["c1"] == pytest.approx(0.05, rel=1e-4)


def _rss(y, fitted):
    return float(np.sum((np.asarray(y) - fitted) ** 2))


def _r2(y, fitted):
    return 1 - _rss(y, fitted) / _rss(y, np.mean(y))


def test_length_fits_never_draw_a_negative_length_and_report_their_r2():
    """Lengths falling faster than 1/n (as objective perturbation's under zCDP did): the
    unconstrained c0/n + c1/sqrt(n) has c1 < 0 and goes below 0 inside the plotted range; the fit with
    c0, c1 >= 0 stays >= 0 there, is the best such fit, and its R^2 is the one on the lengths."""
    n = np.array([1000, 2000, 5000, 10000, 20000], dtype=float)
    length = 3e6 * n**-1.5 + 0.05
    design = np.column_stack([1 / n, 1 / np.sqrt(n)])
    free, *_ = np.linalg.lstsq(design, length, rcond=None)
    grid = np.geomspace(n.min(), n.max(), 200)  # what curve_fit_plot draws
    assert (free[0] / grid + free[1] / np.sqrt(grid)).min() < 0  # the case: a negative length drawn
    fits = fit_length_vs_n(n, length)
    for fit in fits.values():
        assert all(v >= 0 for v in fit.coefficients.values())
        assert fit.predict(grid).min() >= 0
        assert fit.r2 == pytest.approx(_r2(length, fit.predict(n)), abs=1e-12)
    two = fits["privacy"]
    # among c0, c1 >= 0 none fits better: not the one-term fits, not a grid around the optimum
    best = _rss(length, two.predict(n))
    assert best <= _rss(length, fits["sampling only"].predict(n)) + 1e-12
    c0 = (design[:, 0] @ length) / (design[:, 0] @ design[:, 0])  # the best c0/n alone
    assert best <= _rss(length, c0 / n) + 1e-12
    for a in np.linspace(0.5, 1.5, 11) * two.coefficients["c0"]:
        for b in np.linspace(0, 0.2, 11):
            assert best <= _rss(length, a / n + b / np.sqrt(n)) + 1e-12
    assert two.r2 > 0.9


def test_a_budget_fit_skips_a_setting_without_a_length_and_stays_non_negative():
    """A sweep leaves NaN where c was too small at the smallest budget: the fit is of the rest."""
    eps = np.array([0.1, 0.2, 0.5, 1.0, 2.0, 4.0])
    length = np.sqrt(0.3 / eps**2 + 0.02)
    fit = fit_length_vs_budget(eps, np.where(eps == 0.1, np.nan, length), "pure")
    assert fit.coefficients["c0"] == pytest.approx(0.3, rel=1e-4)
    assert fit.r2 == pytest.approx(_r2(length[1:], fit.predict(eps[1:])), abs=1e-12)
    # lengths that grow with the budget fit no sqrt(c0/rho + c1) with c0, c1 >= 0: the best one is flat, >= 0
    rho = np.array([0.05, 0.1, 0.5, 1.0])
    flat = fit_length_vs_budget(rho, [1.0, 1.5, 2.0, 2.5], "zcdp")
    assert flat.coefficients["c0"] == 0 and flat.predict(rho).min() >= 0
    # a length that falls faster than 1/epsilon (objective perturbation near its bound on the Compare page):
    # the best fit has no data term, said as c1 = 0 rather than the 1e-21 where the refinement stopped
    steep = fit_length_vs_budget([0.2, 0.5, 1.0], [440.0, 10.0, 1.2], "pure")
    assert steep.coefficients["c1"] == 0 and steep.predict(np.geomspace(0.2, 1, 50)).min() > 0
    assert steep.r2 == pytest.approx(_r2([440.0, 10.0, 1.2], steep.predict(np.array([0.2, 0.5, 1.0]))))
    with pytest.raises(ValueError, match="at least two"):
        fit_length_vs_n([1000, 2000], [np.nan, 0.1])


def test_subsample_is_a_fixed_prefix_of_a_permutation():
    X, y, _ = _load(1)
    a, _ = subsample(X, y, 100, seed=3)
    b, _ = subsample(X, y, 200, seed=3)
    np.testing.assert_array_equal(a, b[:100])
    with pytest.raises(ValueError, match="has 4000"):
        subsample(X, y, 5000)


def test_cli_writes_a_csv(tmp_path, capsys):
    out = tmp_path / "vi.csv"
    assert (
        main(["sweep", "variability", "--dataset", "synthetic", "--d", "2", "--vi-replicates", "40", "--out", str(out)])
        == 0
    )
    frame = pd.read_csv(out)
    assert list(frame["feature"]) == ["x0", "x1", "const"] and (frame["replicates"] == 40).all()
    err = capsys.readouterr().err
    assert "100.0%" in err and "wrote 3 rows" in err


def test_cli_reports_bad_input_without_a_traceback(tmp_path, capsys):
    code = main(
        ["sweep", "coverage", "--dataset", "synthetic", "--d", "2", "--c", "1e-9", "--out", str(tmp_path / "x.csv")]
    )
    assert code == 2
    assert "error: c = 1e-09 is too small" in capsys.readouterr().err


def test_cli_compares_at_equal_epsilon_delta(tmp_path):
    out = tmp_path / "grid.csv"
    argv = ["sweep", "grid-n-d", "--dataset", "synthetic", "--values", "1", "--ns", "1000", "--replicates", "8"]
    argv += ["--samples", "200", "--methods", "output:zcdp", "--equal-delta", "1e-6", "--out", str(out)]
    assert main(argv) == 0
    frame = pd.read_csv(out)
    assert frame["budget"].iloc[0] == pytest.approx(0.017468, rel=1e-4) and (frame["delta"] == 1e-6).all()
