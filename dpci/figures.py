"""Plotly figure builders: plain functions from data to a ``plotly.graph_objects.Figure``,
so the app, a notebook and a report draw the same pictures in one visual language.

Every figure uses the same colour and mark for each kind of quantity (:data:`STYLE`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

# Okabe-Ito colours (distinguishable with colour-vision deficiencies).
STYLE = {
    "private": dict(color="#D55E00", name="private interval"),
    "variability": dict(color="#0072B2", name="variability interval"),
    "nonprivate": dict(color="#009E73", name="non-private interval"),
    "estimate": dict(color="#222222", name="estimate"),
    "truth": dict(color="#CC79A7", name="truth (theta_0)"),
}
METHOD_COLORS = {
    ("objective", "pure"): "#E69F00",
    ("output", "pure"): "#56B4E9",
    ("objective", "zcdp"): "#D55E00",
    ("output", "zcdp"): "#0072B2",
}
FONT = dict(family="Inter, Helvetica, Arial, sans-serif", size=14)


def method_label(mechanism, privacy):
    return f"{mechanism} perturbation, {'pure DP' if privacy == 'pure' else 'zCDP'}"


def _layout(fig, title=None, height=None):
    fig.update_layout(title=title, font=FONT, template="plotly_white", height=height,
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
                      margin=dict(l=10, r=10, t=70 if title else 40, b=10))
    return fig


def forest_plot(table: pd.DataFrame, title=None, level=0.95):
    """One row per coefficient: the private, variability and non-private intervals, their
    estimates and (optionally) theta_0.

    ``table`` has a ``feature`` column and, for each available kind K in private, variability,
    nonprivate, columns ``K_lower`` and ``K_upper`` (and ``K_estimate`` for private and
    nonprivate); ``theta0`` is optional. Missing or NaN values are simply not drawn.
    """
    features = list(table["feature"])
    y = np.arange(len(features))[::-1].astype(float)
    fig = go.Figure()
    offsets = {"private": 0.22, "variability": 0.0, "nonprivate": -0.22}
    for kind, dy in offsets.items():
        lo, hi = f"{kind}_lower", f"{kind}_upper"
        if lo not in table or table[lo].isna().all():
            continue
        style = STYLE[kind]
        xs, ys = [], []
        for yi, (_, row) in zip(y, table.iterrows()):
            if np.isfinite(row[lo]) and np.isfinite(row[hi]):
                xs += [row[lo], row[hi], None]
                ys += [yi + dy, yi + dy, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=style["color"], width=6),
                                 name=f"{style['name']} ({100 * level:g}%)", hoverinfo="skip"))
        fig.add_trace(go.Scatter(
            x=list(table[lo]) + list(table[hi]), y=list(y + dy) * 2, mode="markers",
            marker=dict(color=style["color"], size=1, opacity=0), showlegend=False,
            customdata=features * 2, hovertemplate="%{customdata}: %{x:.4f}<extra>" + style["name"] + "</extra>",
        ))
        est = f"{kind}_estimate"
        if est in table and table[est].notna().any():
            fig.add_trace(go.Scatter(
                x=table[est], y=y + dy, mode="markers", showlegend=False,
                marker=dict(color=STYLE["estimate"]["color"], size=9, symbol="line-ns-open", line=dict(width=2)),
                customdata=features, hovertemplate="%{customdata}: estimate %{x:.4f}<extra>" + style["name"] + "</extra>",
            ))
    if "theta0" in table and table["theta0"].notna().any():
        fig.add_trace(go.Scatter(x=table["theta0"], y=y, mode="markers", name=STYLE["truth"]["name"],
                                 marker=dict(color=STYLE["truth"]["color"], size=11, symbol="diamond"),
                                 customdata=features, hovertemplate="%{customdata}: theta_0 %{x:.4f}<extra></extra>"))
    fig.add_vline(x=0, line=dict(color="#999999", width=1, dash="dot"))
    fig.update_yaxes(tickvals=y, ticktext=features, showgrid=False, range=[-0.7, len(features) - 0.3])
    fig.update_xaxes(title="coefficient", zeroline=False)
    return _layout(fig, title, height=max(260, 70 + 46 * len(features)))


def ledger_plot(ledger: pd.DataFrame, unit="rho", title="Privacy spent, step by step"):
    """A stacked bar of what each step (phi1, phi2, phi3) spends, from ``PrivacySpend.to_frame()``."""
    steps = ledger[ledger["step"] != "total"]
    colors = {"coefficients": "#D55E00", "hessian": "#E69F00", "covariance": "#56B4E9"}
    labels = {"coefficients": "phi1: coefficients", "hessian": "phi2: Hessian", "covariance": "phi3: covariance"}
    fig = go.Figure()
    for _, row in steps.iterrows():
        fig.add_trace(go.Bar(x=[row[unit]], y=[unit], orientation="h", name=labels.get(row["step"], row["step"]),
                             marker_color=colors.get(row["step"]), text=[f"{row[unit]:.3g}"], textposition="inside",
                             hovertemplate=f"{labels.get(row['step'])}: %{{x:.4g}} {unit}<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title=unit)
    fig.update_yaxes(showticklabels=False)
    return _layout(fig, title, height=200)


def coverage_length_plot(frame: pd.DataFrame, x: str, alpha=0.05, recommended=None, title=None, x_title=None):
    """Coverage (with +/- 1.96 se bars and the 1 - alpha line) and mean length against ``x``,
    one line per method, from the ``(all)`` rows of a sweep (Figures 1-8)."""
    rows = frame[frame["feature"] == "(all)"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("coverage", "mean interval length"), horizontal_spacing=0.12)
    for (mechanism, privacy), grp in rows.groupby(["mechanism", "privacy"], sort=False):
        grp = grp.sort_values(x)
        color = METHOD_COLORS.get((mechanism, privacy), "#333333")
        name = method_label(mechanism, privacy)
        fig.add_trace(go.Scatter(x=grp[x], y=grp["coverage"], mode="lines+markers", name=name, legendgroup=name,
                                 line=dict(color=color), error_y=dict(array=1.96 * grp["coverage_se"])), 1, 1)
        fig.add_trace(go.Scatter(x=grp[x], y=grp["length"], mode="lines+markers", name=name, legendgroup=name,
                                 showlegend=False, line=dict(color=color), error_y=dict(array=1.96 * grp["length_se"])),
                      1, 2)
    fig.add_hline(y=1 - alpha, line=dict(color="#666666", dash="dash"), row=1, col=1,
                  annotation_text=f"{100 * (1 - alpha):g}% target", annotation_position="bottom right")
    if recommended is not None:
        for col in (1, 2):
            fig.add_vline(x=recommended, line=dict(color="#009E73", width=2), row=1, col=col)
        fig.add_annotation(x=recommended, y=1, yref="paper", xref="x2", text="recommended", showarrow=False,
                           font=dict(color="#009E73"), yshift=10)
    fig.update_xaxes(title=x_title or x)
    return _layout(fig, title, height=420)


def heatmap_grid(frame: pd.DataFrame, x: str, value: str = "coverage", title=None, zmin=None, zmax=None):
    """Heatmaps of ``value`` over n (rows) x ``x`` (columns), one panel per method (Figures 9-12)."""
    rows = frame[frame["feature"] == "(all)"]
    methods = list(dict.fromkeys(zip(rows["mechanism"], rows["privacy"])))
    fig = make_subplots(rows=1, cols=len(methods), subplot_titles=[method_label(*m) for m in methods],
                        shared_yaxes=True, horizontal_spacing=0.03)
    zmin = rows[value].min() if zmin is None else zmin
    zmax = rows[value].max() if zmax is None else zmax
    for i, (mechanism, privacy) in enumerate(methods, start=1):
        grp = rows[(rows["mechanism"] == mechanism) & (rows["privacy"] == privacy)]
        pivot = grp.pivot_table(index="n", columns=x, values=value)
        fig.add_trace(go.Heatmap(z=pivot.values, x=[str(v) for v in pivot.columns], y=[str(v) for v in pivot.index],
                                 zmin=zmin, zmax=zmax, colorscale="Viridis", showscale=(i == len(methods)),
                                 text=np.round(pivot.values, 3), texttemplate="%{text}",
                                 hovertemplate=f"n=%{{y}}, {x}=%{{x}}: {value} %{{z:.3f}}<extra></extra>"), 1, i)
        fig.update_xaxes(title=x, row=1, col=i)
    fig.update_yaxes(title="n", row=1, col=1)
    return _layout(fig, title, height=380)


def ci_vs_vi_plot(frame: pd.DataFrame, over: str, title=None):
    """Mean private-interval length (solid) and variability-interval length (dashed) per method (Figures 14-16)."""
    rows = frame[frame["feature"] == "(all)"]
    fig = go.Figure()
    for (mechanism, privacy), grp in rows.groupby(["mechanism", "privacy"], sort=False):
        grp = grp.sort_values(over)
        color = METHOD_COLORS.get((mechanism, privacy), "#333333")
        name = method_label(mechanism, privacy)
        fig.add_trace(go.Scatter(x=grp[over], y=grp["length"], mode="lines+markers", name=f"CI: {name}",
                                 line=dict(color=color), error_y=dict(array=1.96 * grp["length_se"])))
        if "vi_length" in grp:
            fig.add_trace(go.Scatter(x=grp[over], y=grp["vi_length"], mode="lines+markers", name=f"VI: {name}",
                                     line=dict(color=color, dash="dash"), marker=dict(symbol="circle-open")))
    fig.update_xaxes(title=over)
    fig.update_yaxes(title="mean length", type="log")
    return _layout(fig, title, height=420)


def sample_size_plot(frame: pd.DataFrame, title=None):
    """Private n needed to match the non-private interval length at n' (Figure 13)."""
    fig = go.Figure()
    for (mechanism, privacy), grp in frame.groupby(["mechanism", "privacy"], sort=False):
        fig.add_trace(go.Scatter(x=grp["n_nonprivate"], y=grp["n_private"], mode="lines+markers",
                                 name=method_label(mechanism, privacy),
                                 line=dict(color=METHOD_COLORS.get((mechanism, privacy), "#333333"))))
    top = np.nanmax(frame["n_nonprivate"])
    fig.add_trace(go.Scatter(x=[0, top], y=[0, top], mode="lines", name="no privacy cost",
                             line=dict(color="#999999", dash="dot")))
    fig.update_xaxes(title="non-private n'")
    fig.update_yaxes(title="private n with the same mean length")
    return _layout(fig, title, height=420)


def curve_fit_plot(x, length, fits: dict, x_title="n", title=None, log_x=True):
    """Observed mean lengths and fitted curves of Section 7.7 (``fits``: name -> CurveFit)."""
    x = np.asarray(x, dtype=float)
    grid = np.geomspace(x.min(), x.max(), 200) if log_x else np.linspace(x.min(), x.max(), 200)
    fig = go.Figure(go.Scatter(x=x, y=length, mode="markers", name="observed", marker=dict(size=9, color="#222222")))
    for (name, fit), dash in zip(fits.items(), ("solid", "dash", "dot")):
        fig.add_trace(go.Scatter(x=grid, y=fit.predict(grid), mode="lines", line=dict(dash=dash),
                                 name=f"{fit.formula} (R² = {fit.r2:.3f})"))
    fig.update_xaxes(title=x_title, type="log" if log_x else "linear")
    fig.update_yaxes(title="mean interval length")
    return _layout(fig, title, height=400)


# ----------------------------------------------------------------- teaching figures


def noise_norm_plot(norms, d, gamma, title=None):
    """Histogram of spherical-Laplace noise norms with the Gamma(d, 1/gamma) density (Eq. 3.2)."""
    from scipy.stats import gamma as gamma_law

    norms = np.asarray(norms, dtype=float)
    grid = np.linspace(0, np.quantile(norms, 0.999), 300)
    fig = go.Figure(go.Histogram(x=norms, histnorm="probability density", nbinsx=60, name="draws",
                                 marker_color="#E69F00", opacity=0.75))
    fig.add_trace(go.Scatter(x=grid, y=gamma_law(a=d, scale=1 / gamma).pdf(grid), mode="lines",
                             name=f"Gamma(shape {d}, scale 1/γ)", line=dict(color="#222222", width=2)))
    fig.update_xaxes(title="‖β‖, length of the noise vector")
    fig.update_yaxes(title="density")
    return _layout(fig, title, height=340)


def shift_plot(names, theta_hat, theta_private, title=None):
    """How far the mechanism moved each coefficient: theta-hat (non-private) to theta~ (private)."""
    y = np.arange(len(names))[::-1]
    fig = go.Figure()
    for yi, a, b in zip(y, theta_hat, theta_private):
        fig.add_trace(go.Scatter(x=[a, b], y=[yi, yi], mode="lines", line=dict(color="#BBBBBB", width=3),
                                 showlegend=False, hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=theta_hat, y=y, mode="markers", name="without privacy (θ̂)",
                             marker=dict(color=STYLE["nonprivate"]["color"], size=11)))
    fig.add_trace(go.Scatter(x=theta_private, y=y, mode="markers", name="private (θ̃)",
                             marker=dict(color=STYLE["private"]["color"], size=11, symbol="diamond")))
    fig.update_yaxes(tickvals=y, ticktext=list(names))
    fig.update_xaxes(title="coefficient")
    return _layout(fig, title, height=max(260, 60 + 40 * len(names)))


def matrix_plot(true, noisy, private, names, title=None):
    """A matrix before noise, after noise (symmetrised) and after the eigenvalue floor (Algorithm 2)."""
    fig = make_subplots(rows=1, cols=3, subplot_titles=("computed on the data (secret)", "plus noise, symmetrised",
                                                        "after the eigenvalue floor (released)"),
                        horizontal_spacing=0.04)
    top = float(np.max(np.abs([true, noisy, private])))
    for col, mat in enumerate((true, noisy, private), start=1):
        fig.add_trace(go.Heatmap(z=mat, x=list(names), y=list(names), zmin=-top, zmax=top, colorscale="RdBu",
                                 reversescale=True, showscale=(col == 3),
                                 hovertemplate="%{y} × %{x}: %{z:.4g}<extra></extra>"), 1, col)
        fig.update_yaxes(autorange="reversed", showticklabels=(col == 1), row=1, col=col)
    return _layout(fig, title, height=360)


def eigenvalue_plot(noisy, private, c, title=None):
    """Eigenvalues of the noisy matrix and of the released one, with the floor 2c."""
    before = np.sort(np.linalg.eigvalsh(noisy))
    after = np.sort(np.linalg.eigvalsh(private))
    idx = np.arange(1, len(before) + 1)
    fig = go.Figure([go.Bar(x=idx, y=before, name="noisy", marker_color="#BBBBBB"),
                     go.Bar(x=idx, y=after, name="released (floored)", marker_color=STYLE["private"]["color"])])
    fig.add_hline(y=2 * c, line=dict(color="#222222", dash="dash"), annotation_text="floor 2c")
    fig.update_xaxes(title="eigenvalue (smallest first)")
    fig.update_yaxes(title="value", type="linear")
    return _layout(fig, title, height=320)


def cloud_plot(theta, offsets, names, j, k, interval, max_points=3_000, title=None):
    """Monte Carlo draws of theta_0 (= theta~ + offset) for two coefficients, with their intervals."""
    pts = np.asarray(theta)[[j, k]] + np.asarray(offsets)[:max_points][:, [j, k]]
    fig = go.Figure(go.Scattergl(x=pts[:, 0], y=pts[:, 1], mode="markers", name="Monte Carlo draws",
                                 marker=dict(size=3, color=STYLE["private"]["color"], opacity=0.35)))
    fig.add_shape(type="rect", x0=interval[j, 0], x1=interval[j, 1], y0=interval[k, 0], y1=interval[k, 1],
                  line=dict(color="#222222", width=2))
    fig.add_trace(go.Scatter(x=[theta[j]], y=[theta[k]], mode="markers", name="private estimate θ̃",
                             marker=dict(size=12, color=STYLE["estimate"]["color"], symbol="x")))
    fig.update_xaxes(title=names[j])
    fig.update_yaxes(title=names[k])
    return _layout(fig, title, height=420)
