"""The figures' one visual language: colours and marks per kind of quantity (Okabe-Ito), method
labels from the registry, the shared layout and log-axis ticks."""

from __future__ import annotations

import html
import math
import textwrap

import numpy as np
import plotly.io as pio

from ... import methods

# Okabe-Ito colours (distinguishable with colour-vision deficiencies).
STYLE = {
    "private": dict(color="#D55E00", name="private interval"),
    "variability": dict(color="#0072B2", name="variability interval (not private)"),
    "nonprivate": dict(color="#009E73", name="non-private interval (not private)"),
    "estimate": dict(color="#222222", name="estimate"),
    "truth": dict(color="#CC79A7", name="truth (theta_0)"),
}


def plain(text) -> str:
    """``text`` (a feature name from a user's file) as Plotly shows it literally: Plotly reads a subset
    of HTML in labels, titles and hover text, so a column named '<a href="http://…">x</a>' would be a
    live link in the chart."""
    return html.escape(str(text), quote=False)


FONT = dict(family="Inter, Helvetica, Arial, sans-serif", size=14)


def method_label(mechanism, privacy, short=False):
    """ "objective perturbation, pure DP"; with ``short``, the method's short name (for small panels).
    Each registered method carries its words and colour (:mod:`dpci.methods`)."""
    return methods.describe(mechanism, privacy, short)


def short_method_label(mechanism, privacy):
    return method_label(mechanism, privacy, short=True)


def _wrap_title(title, width=60):
    """Plotly never wraps a title: break a long one into lines so it is not clipped in a narrow column
    (60 characters fit the main column of an 800-px window, beside the sidebar)."""
    if not title or "<br>" in title or len(title) <= width:
        return title
    return "<br>".join(textwrap.wrap(title, width))


def _white(fig):
    """Plotly's "plotly_white" template on ``fig``, assigned as Plotly assigns its default template: without
    validating it again (it was when Plotly registered it). Assigned by name, it is checked property by
    property: 30-37 ms a figure, most of building the Explorer's chart, which a busy server does for every
    session at every milestone of its bootstrap. Should Plotly drop the switch, the assignment validates."""
    layout = fig.layout
    validate = getattr(layout, "_validate", True)
    layout._validate = False
    try:
        layout.template = pio.templates["plotly_white"]
    finally:
        layout._validate = validate


def _layout(fig, title=None, height=None):
    """The shared look. The title sits just above the plot area (above any panel titles) and the legend
    below the plot; the margins grow to fit both, so a legend that wraps in a narrow column never covers
    the title, a panel title or the data."""
    title = _wrap_title(title)
    # panel titles of make_subplots: annotations sitting on top of a panel (one or more lines)
    panel_lines = max(
        [
            1 + str(a.text).count("<br>")
            for a in fig.layout.annotations
            if a.yref == "paper" and a.yanchor == "bottom" and a.y is not None and a.y >= 0.99
        ]
        or [0]
    )
    _white(fig)
    fig.update_layout(
        title=dict(text=title, automargin=True, yref="paper", y=1, yanchor="bottom", pad=dict(b=8 + 20 * panel_lines))
        if title
        else None,
        font=FONT,
        height=height,
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0, font=dict(size=13)),
        margin=dict(l=10, r=10, t=16 + 20 * max(1, panel_lines), b=10),
    )
    return fig


def _nice_log_ticks(values, max_ticks=8):
    """Tick values and labels for a log axis covering ``values``: 1-2-5 steps (or whole decades, or every
    second decade when the range is wide), written out in full, so no stray minor digits appear."""
    v = np.asarray([x for x in np.ravel(values) if x is not None], dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return None, None
    lo, hi = v.min() / 1.0001, v.max() * 1.0001
    if hi / lo < 1.001:
        return [float(f"{v.min():.6g}")], [_tick_text(float(f"{v.min():.6g}"))]
    e0, e1 = math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1
    for mantissas, every in (((1, 2, 5), 1), ((1, 3), 1), ((1,), 1), ((1,), 2), ((1,), 3), ((1,), 5)):
        chosen = [m * 10.0**e for e in range(e0, e1 + 1) if (e - e0) % every == 0 for m in mantissas]
        chosen = [t for t in chosen if lo <= t <= hi]
        if len(chosen) <= max_ticks:
            break
    if len(chosen) < 3:  # a narrow range: round numbers in linear steps
        raw = (hi - lo) / 4
        step = 10.0 ** math.floor(math.log10(raw))
        step *= next(m for m in (1, 2, 5, 10) if m * step >= raw)
        chosen = [t for t in np.arange(math.ceil(lo / step) * step, hi + step / 2, step) if t <= hi] or chosen
    chosen = [float(f"{t:.6g}") for t in chosen]
    return chosen, [_tick_text(t) for t in chosen]


def _tick_text(t):
    if t >= 1e5 or t < 1e-4:
        return f"{t:.0e}".replace("e+0", "e").replace("e-0", "e-")
    if t >= 1000:
        return f"{t:,.0f}"
    return f"{t:g}"


def _fmt_number(v):
    return f"{int(v):,}" if float(v).is_integer() else f"{v:g}"


def _log_axis(values):
    """Axis settings for a clean log axis over ``values``."""
    tickvals, ticktext = _nice_log_ticks(values)
    axis = dict(type="log", minor=dict(showgrid=False, ticks=""))
    if tickvals:
        axis.update(tickmode="array", tickvals=tickvals, ticktext=ticktext)
    return axis
