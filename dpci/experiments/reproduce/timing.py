"""Section 7.8: run time of one confidence interval (Table 3) -- the measurement and its checks."""

from __future__ import annotations

import os
import time

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ...losses import HuberLoss
from ...release import private_confidence_intervals
from ..sweeps import METHODS, budget_for, subsample
from .context import Check, Context, ExperimentResult, adult, kddcup, kddcup_available, short
from .settings import ALPHA, LOSS, C, Settings

# Table 3 of the paper (seconds for one confidence interval; laptop, Python, L-BFGS).
PAPER_TABLE3 = {
    ("adult", "logistic"): {
        ("objective", "pure"): 0.68,
        ("output", "pure"): 0.72,
        ("objective", "zcdp"): 0.72,
        ("output", "zcdp"): 0.45,
    },
    ("adult", "huber"): {
        ("objective", "pure"): 3.03,
        ("output", "pure"): 2.77,
        ("objective", "zcdp"): 3.26,
        ("output", "zcdp"): 2.89,
    },
    ("kddcup", "logistic"): {
        ("objective", "pure"): 7.68,
        ("output", "pure"): 7.39,
        ("objective", "zcdp"): 6.83,
        ("output", "zcdp"): 6.60,
    },
    ("kddcup", "huber"): {
        ("objective", "pure"): 38.03,
        ("output", "pure"): 39.94,
        ("objective", "zcdp"): 35.31,
        ("output", "zcdp"): 34.48,
    },
}


def compute_runtime(ctx: Context):
    """Section 7.8, Table 3: seconds for one confidence interval (fit + private matrices +
    m = 10,000 Monte Carlo samples), one process, Adult (n = 30,162, d = 10) and KDD Cup 99
    (n = 450,000, d = 10), logistic regression and the Huberized SVM (h = 0.5)."""
    s = ctx.s
    notes = []
    datasets = [("adult", *adult(10)[:2], s.runtime_repeats_adult)]
    if s.runtime_kdd:
        kdd_ok, why = kddcup_available()
        if kdd_ok:
            X, y, _ = kddcup(10)
            X, y = subsample(X, y, 450_000, 0)
            datasets.append(("kddcup", X, y, s.runtime_repeats_kdd))
        else:
            notes.append(why)
            ctx.log(why)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = []
    for name, X, y, repeats in datasets:
        for loss_name in s.runtime_losses:
            loss = {"logistic": LOSS, "huber": HuberLoss(0.5)}[loss_name]  # the losses of the paper's Figure
            for mechanism, privacy in METHODS:
                rng = np.random.default_rng(s.seed + 8)
                laps = []
                for _ in range(repeats):
                    t = time.perf_counter()
                    private_confidence_intervals(
                        X,
                        y,
                        loss,
                        mechanism,
                        privacy,
                        budget_for(privacy, 1.0),
                        c=C,
                        alpha=ALPHA,
                        n_samples=10_000,
                        random_state=rng,
                    )
                    laps.append(time.perf_counter() - t)
                times = np.array(laps)
                rows.append(
                    {
                        "dataset": name,
                        "n": len(X),
                        "d": X.shape[1] - 1,
                        "loss": loss_name,
                        "mechanism": mechanism,
                        "privacy": privacy,
                        "repeats": repeats,
                        "mean_s": times.mean(),
                        "median_s": float(np.median(times)),
                        "sd_s": times.std(ddof=1) if repeats > 1 else np.nan,
                        "paper_s": PAPER_TABLE3[(name, loss_name)][(mechanism, privacy)],
                        "load_avg": load,
                    }
                )
                ctx.log(f"7.8 {name} {loss_name} {short(mechanism, privacy)}: {times.mean():.3f} s (x{repeats})")
    frame = pd.DataFrame(rows)
    frame["speedup"] = frame["paper_s"] / frame["mean_s"]
    return frame, {}, notes


def report_runtime(result: ExperimentResult, s: Settings):
    frame = result.frame
    fig = go.Figure()
    labels = [f"{r.dataset} {r.loss}<br>{short(r.mechanism, r.privacy)}" for r in frame.itertuples()]
    fig.add_trace(go.Bar(x=labels, y=frame["paper_s"], name="paper (laptop, L-BFGS)", marker_color="#999999"))
    fig.add_trace(
        go.Bar(
            x=labels,
            y=frame["mean_s"],
            name="dpci (this machine, Newton, 1 process)",
            marker_color="#0072B2",
            error_y={"array": frame["sd_s"].fillna(0)},
        )
    )
    fig.update_yaxes(type="log", title="seconds per confidence interval")
    fig.update_layout(
        barmode="group",
        template="plotly_white",
        height=480,
        title="Table 3: run time of one confidence interval (m = 10,000 Monte Carlo samples)",
    )
    result.figures["7.8-runtime"] = fig

    ad = frame[frame["dataset"] == "adult"]
    result.checks.append(
        Check(
            "7.8",
            "one interval on Adult (n = 30,162, d = 10) takes under 5 s, every method",
            bool((ad["mean_s"] < 5).all()),
            f"mean {ad['mean_s'].min():.3f} to {ad['mean_s'].max():.3f} s (paper: 0.45 to 3.26 s)",
        )
    )
    if set(frame["loss"]) == {"logistic", "huber"}:
        piv = frame.pivot_table(index=["dataset", "mechanism", "privacy"], columns="loss", values="mean_s")
        slower = piv["huber"] > piv["logistic"]
        result.checks.append(
            Check(
                "7.8",
                "SVM (Huber) generally takes longer than logistic regression",
                bool(slower.mean() >= 0.5),
                f"Huber slower in {int(slower.sum())} of {len(slower)} cases; Huber/LR time ratio "
                f"{(piv['huber'] / piv['logistic']).min():.2f} to {(piv['huber'] / piv['logistic']).max():.2f} "
                f"(paper: 3.8 to 6.4)",
                kind="paper",
            )
        )
    result.checks.append(
        Check(
            "7.8",
            "all algorithms are reasonably fast for practical use",
            bool((frame["mean_s"] < 60).all()),
            f"slowest {frame['mean_s'].max():.2f} s "
            f"({frame.loc[frame['mean_s'].idxmax(), 'dataset']}, "
            f"{frame.loc[frame['mean_s'].idxmax(), 'loss']})",
            kind="paper",
        )
    )
