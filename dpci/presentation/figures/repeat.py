"""Coverage, seen: repeated releases stacked, hits and misses in two colours, beside the truth."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import STYLE, _layout

HIT, MISS, GHOST = "#0072B2", "#D55E00", "#CCCCCC"
TITLES = {"private": "private interval", "nonprivate": "non-private interval (not private)"}


def _segments(rows):
    """x and y of line segments (lower, upper) per repetition, separated by None (one trace)."""
    x = np.column_stack([rows["lower"], rows["upper"], np.full(len(rows), np.nan)]).ravel()
    y = np.repeat(rows["repetition"].to_numpy() + 1, 3).astype(float)
    y[2::3] = np.nan
    return [None if np.isnan(v) else v for v in x], [None if np.isnan(v) else v for v in y]


def repeat_plot(frame, theta0, coefficient, name, level, ghost=None, title=None):
    """One panel per kind (private, non-private): each repetition's interval for ``coefficient`` as a
    horizontal bar, blue when it contains theta_0 (the vertical line) and orange when it misses;
    ``ghost``: an earlier run's frame drawn grey underneath (a replay with other settings)."""
    kinds = [k for k in ("private", "nonprivate") if (frame["kind"] == k).any()]
    fig = make_subplots(rows=1, cols=len(kinds), shared_yaxes=True, horizontal_spacing=0.06)
    for col, kind in enumerate(kinds, start=1):
        rows = frame[(frame["kind"] == kind) & (frame["coefficient"] == coefficient)]
        hits = int(rows["covers"].sum())
        share = hits / max(len(rows), 1)
        se = float(np.sqrt(share * (1 - share) / max(len(rows), 1)))
        if ghost is not None:
            old = ghost[(ghost["kind"] == kind) & (ghost["coefficient"] == coefficient)]
            x, y = _segments(old)
            fig.add_trace(
                go.Scatter(
                    x=x, y=y, mode="lines", line=dict(color=GHOST, width=3), name="earlier run", showlegend=col == 1
                ),
                row=1,
                col=col,
            )
        for covers, color, label in ((True, HIT, "contains θ₀"), (False, MISS, "misses θ₀")):
            x, y = _segments(rows[rows["covers"] == covers])
            fig.add_trace(
                go.Scatter(x=x, y=y, mode="lines", line=dict(color=color, width=3), name=label, showlegend=col == 1),
                row=1,
                col=col,
            )
        fig.add_vline(x=float(theta0[coefficient]), line=dict(color=STYLE["truth"]["color"], width=2), row=1, col=col)
        fig.layout.annotations = (
            *fig.layout.annotations,
            go.layout.Annotation(
                text=f"<b>{TITLES[kind]}</b><br>{hits} of {len(rows)} contain θ₀: {100 * share:.0f}% ± {100 * se:.0f}%",
                xref=f"x{col if col > 1 else ''} domain",
                yref="paper",
                x=0.5,
                y=1.0,
                yanchor="bottom",
                showarrow=False,
            ),
        )
        fig.update_xaxes(title=f"{name} (θ₀ = {theta0[coefficient]:.3g}, the line)", row=1, col=col)
    fig.update_xaxes(matches="x")  # one scale for both panels: the widths compare at a glance
    fig.update_yaxes(title=f"repetition (goal: {100 * level:g}% contain θ₀)", row=1, col=1)
    fig.update_layout(legend=dict(orientation="h", y=-0.25))
    return _layout(fig, title, height=520)
