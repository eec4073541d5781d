"""Section 7.4: empirical sample complexity (Figures 9-12) -- coverage and length heatmaps over n x d
and n x epsilon, the computation and its checks. :func:`grid_cells` also serves Section 7.7."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ... import methods as registry
from ...presentation.figures import heatmap_grid, method_label
from ..sweeps import METHODS, iter_grid_sweep
from .context import (
    Check,
    Context,
    ExperimentResult,
    adult,
    adult_paper_scaling_d1,
    fmt_n,
    kddcup,
    kddcup_available,
    method_rows,
    run_cells,
    short,
)
from .settings import NOMINAL, Settings


def grid_cells(ctx, load, ns, axis, values, label, dataset, methods=METHODS, d_fixed=10, seed_offset=4, k=None):
    """Coverage and length per (n, d) or (n, epsilon) cell and method (Section 7.4; 7.7 uses it too): one
    iter_grid_sweep over the grid, in which an undefined cell -- objective perturbation with c too small --
    gives NaN, not a crash."""
    s = ctx.s
    grid = {"ds": values, "epsilon": 1.0} if axis == "d" else {"epsilons": values, "d": d_fixed}
    sweep = iter_grid_sweep(
        load,
        ctx.spec,
        ns=ns,
        methods=methods,
        **ctx.sweep_run(k or s.k, s.seed + seed_offset),
        skip_invalid=True,
        **grid,
    )
    frame = run_cells(
        ctx, sweep, lambda _, r: f"{label} n={r['n']} {axis}={r[axis]} {short(r['mechanism'], r['privacy'])}"
    )
    return frame.assign(dataset=dataset)


def _paper_scaling_load(d):
    if d != 1:
        raise ValueError("the paper-scaling variant is defined for d = 1 only")
    return adult_paper_scaling_d1()


def _first_n_reaching(rows, threshold, ns):
    """Smallest n of the grid from which coverage stays >= threshold (None if never)."""
    cov = {int(r["n"]): r["coverage"] for _, r in rows.iterrows()}
    for i, n in enumerate(ns):
        if all(np.isfinite(cov.get(m, np.nan)) and cov[m] >= threshold for m in ns[i:]):
            return n
    return None


def compute_sample_complexity(ctx: Context):
    """Section 7.4: coverage and length heatmaps over n x d (Adult, epsilon = 1, Figures 9-10)
    and n x epsilon (KDD Cup 99, d = 10, Figures 11-12); plus Adult d = 1 with the paper's
    observed-maximum scaling, to test whether preprocessing explains a difference."""
    s = ctx.s
    notes = []
    frames = [grid_cells(ctx, adult, s.grid_ns, "d", s.grid_ds, "7.4 adult", "adult", k=s.grid_k)]
    frames.append(
        grid_cells(
            ctx,
            _paper_scaling_load,
            s.paper_scaling_ns,
            "d",
            (1,),
            "7.4 adult-paper-scaling",
            "adult (paper scaling)",
            k=s.grid_k,
        )
    )
    kdd_ok, why = kddcup_available()
    if s.grid_kdd and s.kdd_grid_ns:
        if kdd_ok:
            frames.append(
                grid_cells(ctx, kddcup, s.kdd_grid_ns, "epsilon", s.kdd_grid_eps, "7.4 kddcup", "kddcup", k=s.grid_k)
            )
        else:
            notes.append(why)
            ctx.log(why)
    return pd.concat(frames, ignore_index=True), {}, notes


def _heatmaps(result: ExperimentResult, name: str, frame, x: str, figures, where: str, k: int, cov_range):
    """Two figures of Section 7.4 for one dataset: coverage and log10 mean length over n x ``x``."""
    coverage, length = figures
    result.figures[f"7.4-{name}-coverage"] = heatmap_grid(
        frame, x, "coverage", **cov_range, title=f"Figure {coverage}: coverage over n x {where}, k = {k:,}"
    )
    result.figures[f"7.4-{name}-length"] = heatmap_grid(
        frame.assign(log10_length=np.log10(frame["length"])),
        x,
        "log10_length",
        title=f"Figure {length}: log10 mean interval length over n x {where}, k = {k:,}",
    )


def report_sample_complexity(result: ExperimentResult, s: Settings):
    frame = result.frame
    ad = frame[frame["dataset"] == "adult"]
    ps = frame[frame["dataset"] == "adult (paper scaling)"]
    kd = frame[frame["dataset"] == "kddcup"]

    cov_range = {"zmin": min(0.8, float(np.nanmin(frame["coverage"]))), "zmax": 1.0}
    _heatmaps(result, "adult", ad, "d", (9, 10), "d, Adult, epsilon = 1 (rho = 0.5)", s.grid_k, cov_range)
    both = pd.concat(
        [ad[ad["d"] == 1].assign(scaling="public bounds (ours)"), ps.assign(scaling="observed maximum (paper)")]
    )
    result.figures["7.4-adult-d1-scaling"] = _scaling_plot(both, s.grid_k)
    if len(kd):
        where = "epsilon (rho = epsilon^2/2), KDD Cup 99, d = 10"
        _heatmaps(result, "kddcup", kd, "epsilon", (11, 12), where, s.grid_k, cov_range)

    # ---- assertions
    out = ad[(ad["mechanism"] == "output") & (ad["n"] >= 1_000)]
    low = out[out["coverage"] < NOMINAL - 3 * out["coverage_se"]]
    result.checks.append(
        Check(
            "7.4",
            "output perturbation coverage >= 0.95 - 3 se in every Adult cell with n >= 1,000",
            len(low) == 0,
            f"{len(out)} cells, minimum {out['coverage'].min():.3f} "
            f"(se {out.loc[out['coverage'].idxmin(), 'coverage_se']:.3f})"
            + (f"; failing: {_cells_text(low)}" if len(low) else ""),
        )
    )
    for mechanism in registry.PAPER:
        piv_m = ad[ad["mechanism"] == mechanism].pivot_table(
            index=["n", "d"], columns="privacy", values=["length", "length_se"]
        )
        diff = piv_m[("length", "pure")] - piv_m[("length", "zcdp")]
        margin = 3 * np.hypot(piv_m[("length_se", "pure")], piv_m[("length_se", "zcdp")])
        bad = diff[~(diff > margin)]
        ratio = piv_m[("length", "zcdp")] / piv_m[("length", "pure")]
        result.checks.append(
            Check(
                "7.4",
                f"zCDP (rho = eps^2/2) intervals shorter than pure DP in every Adult cell, {mechanism} perturbation",
                len(bad) == 0,
                f"{len(diff)} cells; length ratio zCDP/pure between {ratio.min():.3f} and {ratio.max():.3f}; the pure-DP "
                f"excess exceeds 3 se of the difference in {int((diff > margin).sum())} cells",
            )
        )
    dec_bad = []
    for (mechanism, privacy, d), g in ad.groupby(["mechanism", "privacy", "d"]):
        g = g.sort_values("n")
        L, se = g["length"].to_numpy(), g["length_se"].to_numpy()
        if not np.all(np.diff(L) < 3 * np.hypot(se[1:], se[:-1])):
            dec_bad.append(f"{short(mechanism, privacy)} d={d}")
    result.checks.append(
        Check(
            "7.4",
            "mean length decreases with n (every method and d, Adult)",
            not dec_bad,
            "all decreasing" if not dec_bad else "not decreasing: " + ", ".join(dec_bad),
        )
    )
    op = method_rows(ps, "objective", "pure").sort_values("n")
    if len(op) >= 2:
        first, last = op.iloc[0], op.iloc[-1]
        ok = (
            first["coverage"] < NOMINAL - 3 * first["coverage_se"]
            and last["coverage"] >= NOMINAL - 3 * last["coverage_se"]
        )
        result.checks.append(
            Check(
                "7.4",
                "paper scaling, d=1, objective + pure DP: under-covers at the smallest n, reaches 95% (-3 se) "
                "by the "
                "largest",
                bool(ok),
                f"coverage {first['coverage']:.3f} +/- {first['coverage_se']:.3f} at n = {int(first['n']):,}, "
                f"{last['coverage']:.3f} +/- {last['coverage_se']:.3f} at n = {int(last['n']):,}",
            )
        )

    # ---- the paper's claims
    ns = sorted(set(ad["n"]))
    for label, data in (("ours", ad), ("paper scaling", ps)):
        rows = method_rows(data[data["d"] == 1], "objective", "pure").sort_values("n")
        if not len(rows):
            continue
        n95 = _first_n_reaching(rows, NOMINAL, sorted(set(rows["n"])))
        n95se = _first_n_reaching(
            rows.assign(coverage=rows["coverage"] + 2 * rows["coverage_se"]), NOMINAL, sorted(set(rows["n"]))
        )
        cov_text = ", ".join(f"{int(r['n']):,}: {r['coverage']:.3f}" for _, r in rows.iterrows())
        starts_low = rows.iloc[0]["coverage"] < NOMINAL - 3 * rows.iloc[0]["coverage_se"]
        result.checks.append(
            Check(
                "7.4",
                f"objective + pure DP, d=1: coverage starts low and reaches 95% near n = 4,500 ({label})",
                bool(starts_low and n95 is not None and 3_000 <= n95 <= 6_000),
                f"coverage from n = {fmt_n(n95)} on >= 0.95 (from {fmt_n(n95se)} within 2 se); by n: {cov_text}",
                kind="paper",
            )
        )
    for privacy in ("pure", "zcdp"):
        rows = method_rows(ad, "output", privacy)
        frac = float((rows["coverage"] >= NOMINAL).mean())
        frac2 = float((rows["coverage"] >= NOMINAL - 2 * rows["coverage_se"]).mean())
        small = rows[rows["n"] == min(ns)]
        result.checks.append(
            Check(
                "7.4",
                f"output + {'pure DP' if privacy == 'pure' else 'zCDP'}: coverage generally > 95%, even at n ~ 500",
                bool(frac2 >= 0.9),
                f"{100 * frac:.0f}% of cells >= 0.95, {100 * frac2:.0f}% within 2 se; at n = {min(ns):,}: "
                f"{small['coverage'].min():.3f} to {small['coverage'].max():.3f}",
                kind="paper",
            )
        )
    rows = method_rows(ad, "objective", "zcdp")
    big = rows[rows["n"] >= 2_000]
    if len(big):
        result.checks.append(
            Check(
                "7.4",
                "objective + zCDP: coverage about 95% once n >= 2,000",
                bool((big["coverage"] >= NOMINAL - 3 * big["coverage_se"]).all()),
                f"n >= 2,000: {big['coverage'].min():.3f} to {big['coverage'].max():.3f}; n < 2,000: "
                f"{rows[rows['n'] < 2_000]['coverage'].min():.3f} to {rows[rows['n'] < 2_000]['coverage'].max():.3f}",
                kind="paper",
            )
        )
    if len(set(ad["d"])) > 1:
        dmin, dmax = min(ad["d"]), max(ad["d"])
        up = []
        for (mechanism, privacy), g in ad.groupby(["mechanism", "privacy"]):
            a = g[g["d"] == dmin].set_index("n")["coverage"]
            b = g[g["d"] == dmax].set_index("n")["coverage"]
            up.append(f"{short(mechanism, privacy)} {float((b - a).mean()):+.3f}")
        mean_up = float(np.mean([float(t.split()[-1]) for t in up]))
        result.checks.append(
            Check(
                "7.4",
                f"coverage increases with d (d={dmax} minus d={dmin}, mean over n)",
                mean_up > 0,
                "; ".join(up),
                kind="paper",
            )
        )
        grow, robust = [], {}
        for (mechanism, privacy), g in ad.groupby(["mechanism", "privacy"]):
            a = g[g["d"] == dmin].set_index("n")["length"]
            b = g[g["d"] == dmax].set_index("n")["length"]
            robust[(mechanism, privacy)] = float(np.exp(np.mean(np.log(b / a))))
            grow.append(f"{short(mechanism, privacy)} x{robust[(mechanism, privacy)]:.2f}")
        result.checks.append(
            Check(
                "7.4",
                f"length increases with d (geometric mean ratio d={dmax} / d={dmin})",
                all(v > 1 for v in robust.values()),
                "; ".join(grow),
                kind="paper",
            )
        )
        result.checks.append(
            Check(
                "7.4",
                "zCDP is more robust to the dimension than pure DP (smaller length growth, each mechanism)",
                all(robust[(m, "zcdp")] < robust[(m, "pure")] for m in registry.PAPER),
                "; ".join(grow),
                kind="paper",
            )
        )
    best = ad.loc[ad.groupby(["n", "d"])["length"].idxmin()]
    counts = best.groupby(["mechanism", "privacy"]).size()
    share = counts.get(("output", "zcdp"), 0) / len(best)
    wins = best.assign(win=best["mechanism"].eq("output") & best["privacy"].eq("zcdp")).groupby("d")["win"].all()
    result.checks.append(
        Check(
            "7.4",
            "zCDP + output perturbation gives the shortest intervals (Adult cells)",
            share >= 0.8,
            f"shortest in {100 * share:.0f}% of {len(best)} cells ("
            + ", ".join(f"{short(*k)} {v}" for k, v in counts.items())
            + f"); shortest at every n for d in {{{', '.join(str(int(d)) for d in wins.index[wins])}}}",
            kind="paper",
        )
    )
    # smallest n of the grid from which coverage stays >= 95% (and within 2 se of it), per method and d
    n95_rows = []
    for (dataset, mechanism, privacy, d), g in frame[frame["dataset"] != "kddcup"].groupby(
        ["dataset", "mechanism", "privacy", "d"], sort=False
    ):
        g = g.sort_values("n")
        grid = sorted(set(g["n"]))
        n95_rows.append(
            {
                "dataset": dataset,
                "mechanism": mechanism,
                "privacy": privacy,
                "d": int(d),
                "coverage_at_min_n": float(g["coverage"].iloc[0]),
                "n95": _first_n_reaching(g, NOMINAL, grid),
                "n95_2se": _first_n_reaching(g.assign(coverage=g["coverage"] + 2 * g["coverage_se"]), NOMINAL, grid),
            }
        )
    result.tables["n95"] = pd.DataFrame(n95_rows)
    if len(kd):
        cov_n = kd.groupby("n")["coverage"].mean()
        cov_e = kd.groupby("epsilon")["coverage"].mean()
        result.checks.append(
            Check(
                "7.4",
                "KDD: coverage increases with n and with the budget",
                bool(cov_n.iloc[-1] >= cov_n.iloc[0] and cov_e.iloc[-1] >= cov_e.iloc[0]),
                "mean coverage by n: "
                + ", ".join(f"{int(k):,}: {v:.3f}" for k, v in cov_n.items())
                + "; by epsilon: "
                + ", ".join(f"{k:g}: {v:.3f}" for k, v in cov_e.items()),
                kind="paper",
            )
        )
        o = kd[kd["mechanism"] == "output"]
        o_ok = (o["coverage"] >= NOMINAL - 2 * o["coverage_se"]).mean()
        b = kd[kd["mechanism"] == "objective"]
        valid = b[b["coverage"].notna()]
        result.checks.append(
            Check(
                "7.4",
                "KDD: output perturbation reaches 95% in all settings; objective struggles at small n and budget",
                bool(o_ok == 1.0 and (valid["coverage"] < NOMINAL - 2 * valid["coverage_se"]).any()),
                f"output: {100 * o_ok:.0f}% of cells within 2 se of 0.95 (min {o['coverage'].min():.3f}); objective: min "
                f"{valid['coverage'].min():.3f}, {int(b['coverage'].isna().sum())} cells undefined (c too small)",
                kind="paper",
            )
        )
        kbest = kd.loc[kd.dropna(subset=["length"]).groupby(["n", "epsilon"])["length"].idxmin()]
        kshare = (kbest["mechanism"].eq("output") & kbest["privacy"].eq("zcdp")).mean()
        result.checks.append(
            Check(
                "7.4",
                "KDD: zCDP shorter than pure DP; zCDP + output gives the best intervals",
                bool(kshare >= 0.8),
                f"zCDP + output shortest in {100 * kshare:.0f}% of {len(kbest)} cells",
                kind="paper",
            )
        )


def _cells_text(rows):
    return "; ".join(
        f"{short(r['mechanism'], r['privacy'])} n={int(r['n'])} d={int(r['d'])}: "
        f"{r['coverage']:.3f}+/-{r['coverage_se']:.3f}"
        for _, r in rows.iterrows()
    )


def _scaling_plot(frame, k):
    """Coverage and length against n at d = 1: our public-bounds scaling against the paper's."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("coverage", "mean interval length"), horizontal_spacing=0.12)
    for (mechanism, privacy, scaling), g in frame.groupby(["mechanism", "privacy", "scaling"], sort=False):
        g = g.sort_values("n")
        dash = "solid" if scaling.startswith("public") else "dash"
        name = f"{method_label(mechanism, privacy)}; {scaling}"
        color = registry.color(mechanism, privacy)
        line = {"color": color, "dash": dash}
        for col, y in ((1, "coverage"), (2, "length")):  # the coverage with error bars, in the legend
            extra = {"error_y": {"array": 1.96 * g["coverage_se"]}} if col == 1 else {"showlegend": False}
            trace = go.Scatter(x=g["n"], y=g[y], mode="lines+markers", name=name, legendgroup=name, line=line, **extra)
            fig.add_trace(trace, 1, col)
    fig.add_hline(y=NOMINAL, line={"color": "#666666", "dash": "dot"}, row=1, col=1)
    fig.update_xaxes(type="log", title="n")
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_layout(
        title=f"Section 7.4, Adult d = 1: public-bounds scaling (ours, solid) vs the paper's observed-"
        f"maximum scaling (dashed); epsilon = 1, k = {k:,}",
        template="plotly_white",
        height=520,
        legend={"orientation": "h", "y": -0.2},
    )
    return fig
