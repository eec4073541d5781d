"""Figures of one release: the forest plot of intervals and the privacy ledger."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import (
    STYLE,
    _layout,
    plain,
)


def forest_plot(table: pd.DataFrame, title=None, level=0.95, stale=(), truth_name=None, row_height=46, font_size=None):
    """One row per coefficient: the private, variability and non-private intervals, their
    estimates and (optionally) theta_0. ``stale``: kinds drawn faded, named "(updating…)": an earlier
    setting's intervals kept on screen while the new ones compute, instead of a blank.

    ``table`` has a ``feature`` column and, for each available kind K in private, variability,
    nonprivate, columns ``K_lower`` and ``K_upper`` (and ``K_estimate`` for private and
    nonprivate); ``theta0`` is optional. Missing or NaN values are simply not drawn. ``truth_name``:
    the legend's name for ``theta0`` (default: the truth theta_0 at the interval's c). ``row_height``
    (pixels per coefficient) and ``font_size``: a compact chart for a first screen, or a large one for a
    projector.
    """
    features = [plain(f) for f in table["feature"]]  # shown as text, never read as Plotly's HTML
    y = np.arange(len(features))[::-1].astype(float)
    fig = go.Figure()
    offsets = {"private": 0.22, "variability": 0.0, "nonprivate": -0.22}
    tick_named = False  # the estimate ticks get one legend entry, with the first of them
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
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line=dict(color=style["color"], width=6),
                opacity=0.3 if kind in stale else 1.0,
                name=f"{style['name']} ({100 * level:g}%)" + (" (updating…)" if kind in stale else ""),
                hoverinfo="skip",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=list(table[lo]) + list(table[hi]),
                y=list(y + dy) * 2,
                mode="markers",
                marker=dict(color=style["color"], size=1, opacity=0),
                showlegend=False,
                customdata=features * 2,
                hovertemplate="%{customdata}: %{x:.4f}<extra>" + style["name"] + "</extra>",
            )
        )
        est = f"{kind}_estimate"
        if est in table and table[est].notna().any():
            fig.add_trace(
                go.Scatter(
                    x=table[est],
                    y=y + dy,
                    mode="markers",
                    name="estimate (tick on each bar)",
                    legendgroup="estimate",
                    showlegend=not tick_named,
                    marker=dict(color=STYLE["estimate"]["color"], size=9, symbol="line-ns-open", line=dict(width=2)),
                    customdata=features,
                    hovertemplate="%{customdata}: estimate %{x:.4f}<extra>" + style["name"] + "</extra>",
                )
            )
            tick_named = True
    if "theta0" in table and table["theta0"].notna().any():
        fig.add_trace(
            go.Scatter(
                x=table["theta0"],
                y=y,
                mode="markers",
                name=truth_name or STYLE["truth"]["name"],
                marker=dict(color=STYLE["truth"]["color"], size=11, symbol="diamond"),
                customdata=features,
                hovertemplate="%{customdata}: theta_0 %{x:.4f}<extra></extra>",
            )
        )
    fig.add_vline(x=0, line=dict(color="#999999", width=1, dash="dot"))
    fig.update_yaxes(tickvals=y, ticktext=features, showgrid=False, range=[-0.7, len(features) - 0.3])
    fig.update_xaxes(title="coefficient", zeroline=False)
    fig = _layout(fig, title, height=max(320, 120 + row_height * len(features)))  # rows, axis and the legend below
    if font_size is not None:  # a projector: every label at least font_size and near black, read from the back
        ink = "#111111"
        large = dict(size=font_size, color=ink)
        fig.update_layout(font=large, legend_font=large, title_font=large)
        fig.update_xaxes(tickfont=large, title_font=large)
        fig.update_yaxes(tickfont=large)
    return fig


def ledger_plot(ledger: pd.DataFrame, unit="rho", title="Privacy spent, step by step"):
    """A stacked bar of what each step (phi1, phi2, phi3) spends, from ``PrivacySpend.to_frame()``."""
    steps = ledger[ledger["step"] != "total"]
    colors = {"coefficients": "#D55E00", "hessian": "#E69F00", "covariance": "#56B4E9"}
    labels = {
        "coefficients": "φ1: the coefficients",
        "hessian": "φ2: how curved the fit is (Hessian)",
        "covariance": "φ3: how noisy the data are (covariance)",
    }
    symbol = {"epsilon": "ε", "rho": "ρ"}.get(unit, unit)
    fig = go.Figure()
    for _, row in steps.iterrows():
        fig.add_trace(
            go.Bar(
                x=[row[unit]],
                y=[unit],
                orientation="h",
                name=labels.get(row["step"], row["step"]),
                marker_color=colors.get(row["step"]),
                text=[f"{row[unit]:.3g}"],
                textposition="inside",
                hovertemplate=f"{labels.get(row['step'])}: {symbol} = %{{x:.4g}}<extra></extra>",
            )
        )
    fig.update_xaxes(title=f"privacy spent ({symbol})")
    fig.update_yaxes(showticklabels=False)
    _layout(fig, title, height=220)
    fig.update_layout(barmode="stack", legend_traceorder="normal")  # phi1, phi2, phi3, as on the bar
    return fig
