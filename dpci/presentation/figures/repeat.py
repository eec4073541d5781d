"""Coverage, seen: repeated releases stacked, hits in the kind's colour and misses in black, beside the truth."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...intervals import wilson_interval
from .style import STYLE, _layout

# A hit is drawn in its kind's colour (orange: private, green: non-private, as on every page); a miss
# in black and thicker, whichever the panel, so misses stand out in both. The earlier run is grey.
MISS, GHOST = "#000000", "#CCCCCC"
HIT_LABEL, MISS_LABEL = "contains θ₀ (hit)", "misses θ₀"
TITLES = {"private": "private interval", "nonprivate": "non-private interval (not private)"}
LEGEND = {"private": "private interval", "nonprivate": "non-private interval"}


def _percent(share: float) -> str:
    """A share as a whole percentage; with a decimal more where rounding would show 0% or 100% for a
    value strictly between (an interval's end that is not 0 or 1 never reads as one)."""
    for digits in range(4):
        text = f"{100 * share:.{digits}f}"
        if not (0 < share < 1 and float(text) in (0.0, 100.0)):
            return f"{text}%"
    return f"{100 * share:.4f}%"


def _wilson_text(hits: int, total: int, level: float) -> str:
    low, high = wilson_interval(hits, total, level)
    return f"{100 * level:g}% Wilson interval {_percent(low)}–{_percent(high)}"


def coverage_count_text(hits: int, total: int, level: float = 0.95, what: str = "") -> str:
    """'47 of 50 (94%; 95% Wilson interval 84%–98%)': a count of hits, its share and the share's
    Monte Carlo uncertainty (:func:`dpci.intervals.wilson_interval`); ``what`` follows the count."""
    return f"{hits:,} of {total:,}{what} ({_percent(hits / total)}; {_wilson_text(hits, total, level)})"


def _segments(rows):
    """x and y of line segments (lower, upper) per repetition, separated by None (one trace)."""
    x = np.column_stack([rows["lower"], rows["upper"], np.full(len(rows), np.nan)]).ravel()
    y = np.repeat(rows["repetition"].to_numpy() + 1, 3).astype(float)
    y[2::3] = np.nan
    return [None if np.isnan(v) else v for v in x], [None if np.isnan(v) else v for v in y]


def _legend_entry(name, line, group):
    """A legend entry of its own, drawn whatever the data: Plotly leaves a trace without points out
    of the legend, so a run without misses in the first panel once had no entry for them."""
    return go.Scatter(x=[None], y=[None], mode="lines", line=line, name=name, legendgroup=group, hoverinfo="skip")


def repeat_plot(frame, theta0, coefficient, name, level, ghost=None, title=None):
    """One panel per kind (private, non-private): each repetition's interval for ``coefficient`` as a
    horizontal bar, in the kind's colour when it contains theta_0 (the vertical line) and black when it
    misses; ``ghost``: an earlier run's frame drawn grey underneath (a replay with other settings or
    another seed). The legend always names hits (per kind), misses, theta_0 and, with a ghost, the
    earlier run; each panel's title counts its hits with their 95% Wilson interval."""
    kinds = [k for k in ("private", "nonprivate") if (frame["kind"] == k).any()]
    fig = make_subplots(rows=1, cols=len(kinds), shared_yaxes=True, horizontal_spacing=0.06)
    miss_line = dict(color=MISS, width=4)
    for col, kind in enumerate(kinds, start=1):
        rows = frame[(frame["kind"] == kind) & (frame["coefficient"] == coefficient)]
        hit_line = dict(color=STYLE[kind]["color"], width=3)
        if ghost is not None:
            old = ghost[(ghost["kind"] == kind) & (ghost["coefficient"] == coefficient)]
            x, y = _segments(old)
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=y,
                    mode="lines",
                    line=dict(color=GHOST, width=3),
                    name="earlier run",
                    legendgroup="ghost",
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
        fig.add_trace(_legend_entry(f"{LEGEND[kind]}: {HIT_LABEL}", hit_line, f"hit-{kind}"), row=1, col=col)
        for covers, line, group in ((True, hit_line, f"hit-{kind}"), (False, miss_line, "miss")):
            x, y = _segments(rows[rows["covers"] == covers])
            label = f"{LEGEND[kind]}: {HIT_LABEL}" if covers else MISS_LABEL
            fig.add_trace(
                go.Scatter(x=x, y=y, mode="lines", line=line, name=label, legendgroup=group, showlegend=False),
                row=1,
                col=col,
            )
        fig.add_vline(x=float(theta0[coefficient]), line=dict(color=STYLE["truth"]["color"], width=2), row=1, col=col)
        hits, total = int(rows["covers"].sum()), len(rows)
        # three short lines: a panel is under 200 px wide in an 800-px window
        count = (
            f"{hits:,} of {total:,} contain θ₀: {_percent(hits / total)}<br>{_wilson_text(hits, total, 0.95)}"
            if total
            else "no repetitions yet"
        )
        fig.layout.annotations = (
            *fig.layout.annotations,
            go.layout.Annotation(
                text=f"<b>{TITLES[kind]}</b><br>{count}",
                xref=f"x{col if col > 1 else ''} domain",
                yref="paper",
                x=0.5,
                y=1.0,
                yanchor="bottom",
                showarrow=False,
                font=dict(size=12),
            ),
        )
        fig.update_xaxes(title=f"{name} (θ₀ = {theta0[coefficient]:.3g}, the line)", row=1, col=col)
    fig.add_trace(_legend_entry(MISS_LABEL, miss_line, "miss"), row=1, col=1)
    fig.add_trace(_legend_entry("θ₀, the truth (the line)", dict(color=STYLE["truth"]["color"], width=2), "truth"))
    fig.update_xaxes(matches="x")  # one scale for both panels: the widths compare at a glance
    fig.update_yaxes(title=f"repetition (goal: {100 * level:g}% contain θ₀)", row=1, col=1)
    return _layout(fig, title, height=540)
