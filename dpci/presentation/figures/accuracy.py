"""Accuracy first: a search's path, interval width against budget, with the target and the stop."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .style import _layout

COLORS = {"noise_reduction": "#0072B2", "doubling": "#D55E00", "fixed": "#009E73"}
SYMBOLS = {"noise_reduction": "star", "doubling": "diamond", "fixed": "square"}
LABELS = {
    "noise_reduction": "noise reduction",
    "doubling": "doubling (fresh releases)",
    "fixed": "fixed from the stand-in",
}


def target_path_plot(results, target, symbol="ε", title=None):
    """Each strategy's checked steps (width of the widest chosen coefficient against the budget of the
    step, log axes), the target as a horizontal line and each stop as a large mark; the noise-only
    bound (no interval can be narrower at that budget) dotted."""
    fig = go.Figure()
    for result in results:
        frame = result.path_frame()
        checked = frame[frame["checked"]]
        color = COLORS.get(result.strategy, "#333333")
        fig.add_trace(
            go.Scatter(
                x=checked["budget"],
                y=checked["width"],
                mode="lines+markers",
                name=LABELS.get(result.strategy, result.strategy),
                line=dict(color=color, width=2),
                marker=dict(size=7),
                hovertemplate=f"{symbol} = %{{x:.3g}}: width %{{y:.3g}}<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[result.budget],
                y=[float(np.max(result.widths))],
                mode="markers",
                showlegend=False,
                marker=dict(
                    size=16,
                    color=color,
                    symbol=SYMBOLS.get(result.strategy, "star"),
                    line=dict(color="#222222", width=1),
                ),
                hovertemplate=f"stopped at {symbol} = %{{x:.3g}}<extra></extra>",
            )
        )
    if results:
        bound = results[0].path_frame()
        fig.add_trace(
            go.Scatter(
                x=bound["budget"],
                y=bound["bound"],
                mode="lines",
                name="noise alone: no interval is narrower",
                line=dict(color="#999999", dash="dot"),
                hoverinfo="skip",
            )
        )
    fig.add_hline(y=target, line=dict(color="#222222", dash="dash"), annotation_text=f"target width {target:g}")
    fig.update_xaxes(type="log", title=f"budget of the step ({symbol})")
    fig.update_yaxes(type="log", title="interval width (widest chosen coefficient)")
    return _layout(fig, title, height=460)
