"""Figures of the sweeps (Section 7): coverage and length against the split, heatmaps over
n x d or n x budget, private against variability intervals, the sample-size match, curve fits."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ... import methods
from .style import (
    _fmt_number,
    _layout,
    _log_axis,
    _nice_log_ticks,
    method_label,
    short_method_label,
)


def _per_method(frame: pd.DataFrame, x: str):
    """The ``(all)`` rows of a sweep per method, sorted by ``x``, with the method's label and colour."""
    rows = frame[frame["feature"] == "(all)"]
    for (mechanism, privacy), grp in rows.groupby(["mechanism", "privacy"], sort=False):
        yield grp.sort_values(x), method_label(mechanism, privacy), methods.color(mechanism, privacy)


def _with_se(grp: pd.DataFrame, x: str, y: str, color: str, **trace) -> go.Scatter:
    """Column ``y`` against ``x`` in lines and markers of the method's colour, with +/- 1.96 se bars
    (the column ``y + "_se"``)."""
    error = dict(array=1.96 * grp[f"{y}_se"])
    return go.Scatter(x=grp[x], y=grp[y], mode="lines+markers", line=dict(color=color), error_y=error, **trace)


def _legend_entry(name: str, mode: str, **style) -> go.Scatter:
    """A legend entry with nothing drawn: it names a line or marker drawn otherwise (or not at all)."""
    return go.Scatter(x=[None], y=[None], mode=mode, name=name, hoverinfo="skip", **style)


def coverage_length_plot(frame: pd.DataFrame, x: str, alpha=0.05, recommended=None, title=None, x_title=None):
    """Coverage (with +/- 1.96 se bars and the 1 - alpha line) and mean length against ``x``,
    one line per method, from the ``(all)`` rows of a sweep (Figures 1-8)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("coverage", "mean interval length"), horizontal_spacing=0.12)
    for grp, name, color in _per_method(frame, x):
        fig.add_trace(_with_se(grp, x, "coverage", color, name=name, legendgroup=name), 1, 1)
        fig.add_trace(_with_se(grp, x, "length", color, name=name, legendgroup=name, showlegend=False), 1, 2)
    # The target line and the recommended split are named in the legend (below the plot), not by text
    # on the plot, where it would collide with error bars or the subplot titles.
    target = dict(color="#666666", dash="dash")
    fig.add_hline(y=1 - alpha, line=target, row=1, col=1)
    fig.add_trace(_legend_entry(f"{100 * (1 - alpha):g}% coverage target", "lines", line=target), 1, 1)
    if recommended is not None:
        chosen = dict(color="#009E73", width=2)
        for col in (1, 2):
            fig.add_vline(x=recommended, line=chosen, row=1, col=col)
        fig.add_trace(_legend_entry(f"recommended: {x_title or x} = {recommended:.3g}", "lines", line=chosen), 1, 1)
    fig.update_xaxes(title=x_title or x)
    return _layout(fig, title, height=440)


def _cell_text(grp, pivot, x, value, level):
    """Each cell's number, short enough for a narrow column; for coverage with its 95% margin (±1.96 SE)
    and a ✗ where it falls short of ``level`` by more than two standard errors."""
    if value != "coverage" or "coverage_se" not in grp:
        return np.vectorize(lambda v: "" if np.isnan(v) else f"{v:.3g}")(pivot.values)
    se = grp.pivot_table(index="n", columns=x, values="coverage_se").reindex_like(pivot).values

    def cell(v, s):
        if np.isnan(v):
            return ""
        short = " ✗" if level is not None and v + 2 * s < level else ""
        return f"{v:.2f}{short}<br>±{1.96 * s:.2f}"

    return np.vectorize(cell)(pivot.values, se)


def _log_colours(values):
    """log10 of the positive values (NaN elsewhere): a colour scale on which every factor of ten is the same step."""
    values = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(values > 0, np.log10(np.where(values > 0, values, 1.0)), np.nan)


def heatmap_grid(
    frame: pd.DataFrame,
    x: str,
    value: str = "coverage",
    title=None,
    zmin=None,
    zmax=None,
    level=0.95,
    marks=None,
    log_color=None,
):
    """Heatmaps of ``value`` over n (rows) x ``x`` (columns), one panel per method (Figures 9-12); for
    coverage, each cell also shows its margin and a ✗ where it misses ``level`` by more than 2 SE.
    ``marks``: (mechanism, privacy, n) -> a value of ``x`` (the recommended c), whose nearest column is
    outlined in that row.

    ``log_color`` (default: for lengths) colours by log10 of the value, the colour bar ticked in the value's
    own units: lengths span decades across n and the budget (0.15 to 161 in one sweep), and on a linear
    scale one long interval leaves every other cell the same colour. The cells' numbers stay the values.

    Two panels per row (a 2 x 2 grid for the four methods), short panel titles and one shared colour
    bar, so titles and axis labels stay readable in a narrow column."""
    rows = frame[frame["feature"] == "(all)"]
    panels = list(dict.fromkeys(zip(rows["mechanism"], rows["privacy"])))
    ncols = 1 if len(panels) <= 1 else 2
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig = make_subplots(
        rows=nrows,
        cols=ncols,
        subplot_titles=[short_method_label(*m) for m in panels],
        shared_yaxes=True,
        horizontal_spacing=0.06,
        vertical_spacing=0.16 if nrows > 1 else 0.1,
    )
    log = value == "length" if log_color is None else log_color
    shown = rows[value][rows[value] > 0] if log else rows[value]
    zmin = shown.min() if zmin is None else zmin
    zmax = shown.max() if zmax is None else zmax
    for i, (mechanism, privacy) in enumerate(panels):
        r, c = divmod(i, ncols)
        grp = rows[(rows["mechanism"] == mechanism) & (rows["privacy"] == privacy)]
        pivot = grp.pivot_table(index="n", columns=x, values=value)
        fig.add_trace(
            go.Heatmap(
                z=_log_colours(pivot.values) if log else pivot.values,
                customdata=pivot.values,
                x=[str(v) for v in pivot.columns],
                y=[_fmt_number(v) for v in pivot.index],
                coloraxis="coloraxis",
                name=short_method_label(mechanism, privacy),
                text=_cell_text(grp, pivot, x, value, level),
                texttemplate="%{text}",
                textfont=dict(size=11),
                hovertemplate=f"n=%{{y}}, {x}=%{{x}}: {value} %{{customdata:.3g}}<extra>%{{fullData.name}}</extra>",
            ),
            r + 1,
            c + 1,
        )
        fig.update_xaxes(
            type="category",
            title=x if r == nrows - 1 or i + ncols >= len(panels) else None,
            title_standoff=4,
            row=r + 1,
            col=c + 1,
        )
        fig.update_yaxes(type="category", title="n" if c == 0 else None, row=r + 1, col=c + 1)
        axis = "" if i == 0 else str(i + 1)
        for row_index, n in enumerate(pivot.index):
            mark = (marks or {}).get((mechanism, privacy, n))
            if mark is None or not len(pivot.columns):
                continue
            col = int(np.argmin([abs(math.log(float(v)) - math.log(mark)) for v in pivot.columns]))
            fig.add_shape(
                type="rect",
                x0=col - 0.5,
                x1=col + 0.5,
                y0=row_index - 0.5,
                y1=row_index + 0.5,
                xref=f"x{axis}",
                yref=f"y{axis}",
                line=dict(color="#FFFFFF", width=3),
            )
    colorbar = dict(title=dict(text=value, side="right"), thickness=14)
    if log:
        ticks, labels = _nice_log_ticks([zmin, zmax])
        colorbar.update(title=dict(text=f"{value} (log scale)", side="right"))
        if ticks:
            colorbar.update(tickmode="array", tickvals=list(np.log10(ticks)), ticktext=labels)
        zmin, zmax = (math.log10(v) if v > 0 else None for v in (zmin, zmax))
    fig.update_layout(coloraxis=dict(colorscale="Viridis", cmin=zmin, cmax=zmax, colorbar=colorbar))
    return _layout(fig, title, height=90 + 250 * nrows)


def ci_vs_vi_plot(frame: pd.DataFrame, over: str, title=None, marks=None):
    """Mean private-interval length (solid) and variability-interval length (dashed) per method (Figures 14-16).
    ``marks``: over c, each method's recommended c ((mechanism, privacy) -> c, :func:`dpci.recommend_c`),
    drawn as a dotted vertical line in its colour."""
    rows = frame[frame["feature"] == "(all)"]
    fig = go.Figure()
    symbols = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "pentagon")
    for i, (grp, name, color) in enumerate(_per_method(frame, over)):
        symbol = symbols[i % len(symbols)]  # a mark per method as well as a colour: similar hues stay apart
        marker = dict(symbol=symbol, size=8)
        fig.add_trace(_with_se(grp, over, "length", color, name=f"private interval: {name}", marker=marker))
        if "vi_length" in grp:
            fig.add_trace(
                go.Scatter(
                    x=grp[over],
                    y=grp["vi_length"],
                    mode="lines+markers",
                    name=f"variability (not private): {name}",
                    line=dict(color=color, dash="dash"),
                    marker=dict(symbol=f"{symbol}-open", size=8),
                )
            )
    titles = {"n": "rows n", "d": "features d", "epsilon": "budget ε", "c": "regulariser c"}
    ys = [y for y in list(rows["length"]) + (list(rows["vi_length"]) if "vi_length" in rows else []) if y > 0]
    xs = list(rows[over]) + list((marks or {}).values())
    for (mechanism, privacy), c in (marks or {}).items():
        if ys and c is not None:  # a line in data coordinates: right on a log axis too
            fig.add_trace(
                go.Scatter(
                    x=[c, c],
                    y=[min(ys), max(ys)],
                    mode="lines",
                    line=dict(color=methods.color(mechanism, privacy), dash="dot", width=2),
                    name=f"recommended c: {method_label(mechanism, privacy)} ({c:.2g})",
                    hovertemplate=f"recommended c = {c:.2g}<extra></extra>",
                )
            )
    fig.update_xaxes(title=titles.get(over, over), **(_log_axis(xs) if over in ("n", "epsilon", "c") else {}))
    fig.update_yaxes(title="mean length", **_log_axis(ys))
    return _layout(fig, title, height=460)


def sample_size_plot(frame: pd.DataFrame, title=None):
    """Private n needed to match the non-private interval length at n' (Figure 13).

    A target that no private n within the data reaches (``n_private`` is NaN) is not left out silently:
    it is drawn as an open triangle on a "not reached" line at the data's size (the ``n_max`` column when
    the frame has it, else just above the largest n shown), and the legend says what that means."""
    fig = go.Figure()
    reached = frame["n_private"].notna()
    n_max = None
    if "n_max" in frame and frame["n_max"].notna().any():
        n_max = float(frame["n_max"].max())
    top = float(np.nanmax(frame["n_nonprivate"]))
    y_values = [top] + list(frame.loc[reached, "n_private"])
    ceiling = n_max if n_max is not None else 1.08 * max(y_values)
    groups = list(frame.groupby(["mechanism", "privacy"], sort=False))
    for k, ((mechanism, privacy), grp) in enumerate(groups):
        color = methods.color(mechanism, privacy)
        name = method_label(mechanism, privacy)
        grp = grp.sort_values("n_nonprivate")
        # methods missing at the same n' side by side on the "not reached" line, not on top of each other
        nudge = 0.015 * top * (k - (len(groups) - 1) / 2)
        ok = grp["n_private"].notna()
        fig.add_trace(
            go.Scatter(
                x=grp.loc[ok, "n_nonprivate"],
                y=grp.loc[ok, "n_private"],
                mode="lines+markers",
                name=name,
                legendgroup=name,
                line=dict(color=color),
                marker=dict(size=8),
                hovertemplate="n' = %{x:,}: private n = %{y:,}<extra>" + name + "</extra>",
            )
        )
        if (~ok).any():
            fig.add_trace(
                go.Scatter(
                    x=grp.loc[~ok, "n_nonprivate"] + nudge,
                    y=[ceiling] * int((~ok).sum()),
                    mode="markers",
                    customdata=grp.loc[~ok, "n_nonprivate"],
                    legendgroup=name,
                    showlegend=False,
                    marker=dict(color=color, size=12, symbol="triangle-up-open", line=dict(width=2)),
                    hovertemplate="n' = %{customdata:,}: not reached, needs more rows than the data has"
                    + (f" ({n_max:,.0f})" if n_max is not None else "")
                    + "<extra>"
                    + name
                    + "</extra>",
                )
            )
    fig.add_trace(
        go.Scatter(
            x=[0, top],
            y=[0, top],
            mode="lines",
            name="no privacy cost",
            line=dict(color="#999999", dash="dot"),
            hoverinfo="skip",
        )
    )
    if (~reached).any():
        where = f"more than {n_max:,.0f} rows, the data's size" if n_max is not None else "more rows than the data has"
        fig.add_hline(y=ceiling, line=dict(color="#BBBBBB", width=1, dash="dash"))
        marker = dict(color="#555555", size=12, symbol="triangle-up-open", line=dict(width=2))
        fig.add_trace(_legend_entry(f"not reached: needs {where}", "markers", marker=marker))
    fig.update_xaxes(title="non-private n'", rangemode="tozero")
    fig.update_yaxes(title="private n with the same mean length", rangemode="tozero")
    return _layout(fig, title, height=440)


def _fit_name(fit) -> str:
    """A fit's legend entry: its formula, its coefficients and its R^2 on the observed lengths."""
    formula = fit.formula.replace("sqrt", "√").replace("epsilon", "ε").replace("rho", "ρ")
    coefficients = ", ".join(f"{k} = {float(v):.3g}" for k, v in fit.coefficients.items())
    return f"{formula}: {coefficients} (R² = {fit.r2:.3f})"


def curve_fit_plot(x, length, fits: dict, x_title="n", title=None, log_x=True):
    """Observed mean lengths and fitted curves of Section 7.7 (``fits``: name -> CurveFit), each named
    in the legend with its coefficients and R^2."""
    x = np.asarray(x, dtype=float)
    grid = np.geomspace(x.min(), x.max(), 200) if log_x else np.linspace(x.min(), x.max(), 200)
    fig = go.Figure(go.Scatter(x=x, y=length, mode="markers", name="observed", marker=dict(size=9, color="#222222")))
    for (name, fit), dash in zip(fits.items(), ("solid", "dash", "dot")):
        fig.add_trace(
            go.Scatter(
                x=grid,
                y=fit.predict(grid),
                mode="lines",
                line=dict(dash=dash),
                name=_fit_name(fit),
            )
        )
    if log_x:
        fig.update_xaxes(title=x_title, **_log_axis(x))
    else:
        fig.update_xaxes(title=x_title, type="linear")
    fig.update_yaxes(title="mean interval length", rangemode="tozero")
    return _layout(fig, title, height=420)


# ----------------------------------------------------------------- teaching figures
