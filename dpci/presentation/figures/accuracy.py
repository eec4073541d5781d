"""Accuracy first: a search's path, interval width against budget, with the target and the stop."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .style import _layout, _nice_log_ticks

COLORS = {"noise_reduction": "#0072B2", "doubling": "#D55E00", "fixed": "#009E73"}
SYMBOLS = {"noise_reduction": "star", "doubling": "diamond", "fixed": "square"}
LABELS = {
    "noise_reduction": "noise reduction",
    "doubling": "doubling (fresh releases)",
    "fixed": "fixed from the stand-in",
}


STOP_SIZES = (22, 17, 12)  # drawn largest first: stops at the same point stay visible, one inside the other


def _log_range(values, pad=0.08, least=0.1):
    """A log axis's range (in log10, as Plotly takes it) around the positive ``values``: their span plus
    ``pad`` of it on each side, and at least ``least`` decades wide."""
    logs = np.log10([v for v in values if v is not None and np.isfinite(v) and v > 0])
    lo, hi = float(logs.min()), float(logs.max())
    margin = max(pad * (hi - lo), (least - (hi - lo)) / 2, 0.02)
    return [lo - margin, hi + margin]


def _zoom(results, target):
    """(budgets, widths) the axes must show: every checked step and stop, and the grid step before the first
    checked one (skipped: noise alone was wider than the target there); widths: the checked ones, the
    target and the noise-only bound over those steps. The rest of the grid, down to max/1000, is not
    shown: drawn, it squeezed every mark into one corner."""
    budgets, widths = [], [target]
    for result in results:
        frame = result.path_frame()
        checked = np.flatnonzero(frame["checked"].to_numpy())
        shown = frame.iloc[max(int(checked[0]) - 1, 0) :] if checked.size else frame
        budgets += list(shown["budget"]) + [result.budget]
        widths += list(frame["width"].iloc[checked]) + list(shown["bound"]) + [float(np.max(result.widths))]
    return budgets, widths


def _ticked(fig_axis, values, title):
    """A log axis over the range of ``values`` with round tick labels written out."""
    span = _log_range(values)
    ticks, labels = _nice_log_ticks([10 ** span[0], 10 ** span[1]], max_ticks=6)
    axis = dict(type="log", title=title, range=span, minor=dict(showgrid=False, ticks=""))
    if ticks:
        axis.update(tickmode="array", tickvals=ticks, ticktext=labels)
    fig_axis(**axis)


def target_path_plot(results, target, symbol="ε", title=None):
    """Each strategy's checked steps (width of the widest chosen coefficient against the budget of the
    step, log axes), the target as a horizontal line and each stop as a large mark; the noise-only
    bound (no interval can be narrower at that budget) dotted. The axes show the checked steps, the
    target and the step before the first checked one, not the whole grid."""
    fig = go.Figure()
    for i, result in enumerate(results):
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
                    size=STOP_SIZES[min(i, len(STOP_SIZES) - 1)],
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
    fig.add_hline(y=target, line=dict(color="#222222", dash="dash"))
    # its label by hand: on a log axis an annotation's y is log10 of the value (add_hline's would sit at 10^target)
    fig.add_annotation(
        text=f"target width {target:g}",
        x=0,
        xref="x domain",
        xanchor="left",
        y=float(np.log10(target)),
        yref="y",
        yanchor="bottom",
        showarrow=False,
    )
    if results:
        budgets, widths = _zoom(results, target)
        _ticked(fig.update_xaxes, budgets, f"budget of the step ({symbol})")
        _ticked(fig.update_yaxes, widths, "interval width (widest chosen coefficient)")
    else:
        fig.update_xaxes(type="log", title=f"budget of the step ({symbol})")
        fig.update_yaxes(type="log", title="interval width (widest chosen coefficient)")
    return _layout(fig, title, height=460)
