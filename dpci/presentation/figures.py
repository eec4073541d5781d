"""Plotly figure builders: plain functions from data to a ``plotly.graph_objects.Figure``,
so the app, a notebook and a report draw the same pictures in one visual language.

Every figure uses the same colour and mark for each kind of quantity (:data:`STYLE`).
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import methods

# Okabe-Ito colours (distinguishable with colour-vision deficiencies).
STYLE = {
    "private": dict(color="#D55E00", name="private interval"),
    "variability": dict(color="#0072B2", name="variability interval"),
    "nonprivate": dict(color="#009E73", name="non-private interval"),
    "estimate": dict(color="#222222", name="estimate"),
    "truth": dict(color="#CC79A7", name="truth (theta_0)"),
}
FONT = dict(family="Inter, Helvetica, Arial, sans-serif", size=14)


def method_label(mechanism, privacy, short=False):
    """"objective perturbation, pure DP"; with ``short``, the method's short name (for small panels).
    Each registered method carries its words and colour (:mod:`dpci.methods`)."""
    return methods.describe(mechanism, privacy, short)


def short_method_label(mechanism, privacy):
    return method_label(mechanism, privacy, short=True)


def _wrap_title(title, width=80):
    """Plotly never wraps a title: break a long one into lines so it is not clipped in a narrow column."""
    if not title or "<br>" in title or len(title) <= width:
        return title
    return "<br>".join(textwrap.wrap(title, width))


def _layout(fig, title=None, height=None):
    """The shared look. The title sits just above the plot area (above any panel titles) and the legend
    below the plot; the margins grow to fit both, so a legend that wraps in a narrow column never covers
    the title, a panel title or the data."""
    title = _wrap_title(title)
    # panel titles of make_subplots: annotations sitting on top of a panel (one or more lines)
    panel_lines = max([1 + str(a.text).count("<br>") for a in fig.layout.annotations
                       if a.yref == "paper" and a.yanchor == "bottom" and a.y is not None and a.y >= 0.99] or [0])
    fig.update_layout(
        title=dict(text=title, automargin=True, yref="paper", y=1, yanchor="bottom",
                   pad=dict(b=8 + 20 * panel_lines)) if title else None,
        font=FONT, template="plotly_white", height=height,
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0,
                    font=dict(size=13)),
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
        chosen = [m * 10.0 ** e for e in range(e0, e1 + 1) if (e - e0) % every == 0 for m in mantissas]
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
    return _layout(fig, title, height=max(320, 120 + 46 * len(features)))  # rows, axis and the legend below


def ledger_plot(ledger: pd.DataFrame, unit="rho", title="Privacy spent, step by step"):
    """A stacked bar of what each step (phi1, phi2, phi3) spends, from ``PrivacySpend.to_frame()``."""
    steps = ledger[ledger["step"] != "total"]
    colors = {"coefficients": "#D55E00", "hessian": "#E69F00", "covariance": "#56B4E9"}
    labels = {"coefficients": "φ1: the coefficients", "hessian": "φ2: how curved the fit is (Hessian)",
              "covariance": "φ3: how noisy the data are (covariance)"}
    symbol = {"epsilon": "ε", "rho": "ρ"}.get(unit, unit)
    fig = go.Figure()
    for _, row in steps.iterrows():
        fig.add_trace(go.Bar(x=[row[unit]], y=[unit], orientation="h", name=labels.get(row["step"], row["step"]),
                             marker_color=colors.get(row["step"]), text=[f"{row[unit]:.3g}"], textposition="inside",
                             hovertemplate=f"{labels.get(row['step'])}: {symbol} = %{{x:.4g}}<extra></extra>"))
    fig.update_xaxes(title=f"privacy spent ({symbol})")
    fig.update_yaxes(showticklabels=False)
    _layout(fig, title, height=220)
    fig.update_layout(barmode="stack", legend_traceorder="normal")  # phi1, phi2, phi3, as on the bar
    return fig


def coverage_length_plot(frame: pd.DataFrame, x: str, alpha=0.05, recommended=None, title=None, x_title=None):
    """Coverage (with +/- 1.96 se bars and the 1 - alpha line) and mean length against ``x``,
    one line per method, from the ``(all)`` rows of a sweep (Figures 1-8)."""
    rows = frame[frame["feature"] == "(all)"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("coverage", "mean interval length"), horizontal_spacing=0.12)
    for (mechanism, privacy), grp in rows.groupby(["mechanism", "privacy"], sort=False):
        grp = grp.sort_values(x)
        color = methods.color(mechanism, privacy)
        name = method_label(mechanism, privacy)
        fig.add_trace(go.Scatter(x=grp[x], y=grp["coverage"], mode="lines+markers", name=name, legendgroup=name,
                                 line=dict(color=color), error_y=dict(array=1.96 * grp["coverage_se"])), 1, 1)
        fig.add_trace(go.Scatter(x=grp[x], y=grp["length"], mode="lines+markers", name=name, legendgroup=name,
                                 showlegend=False, line=dict(color=color), error_y=dict(array=1.96 * grp["length_se"])),
                      1, 2)
    # The target line and the recommended split are named in the legend (below the plot), not by text
    # on the plot, where it would collide with error bars or the subplot titles.
    fig.add_hline(y=1 - alpha, line=dict(color="#666666", dash="dash"), row=1, col=1)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color="#666666", dash="dash"),
                             name=f"{100 * (1 - alpha):g}% coverage target", hoverinfo="skip"), 1, 1)
    if recommended is not None:
        for col in (1, 2):
            fig.add_vline(x=recommended, line=dict(color="#009E73", width=2), row=1, col=col)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color="#009E73", width=2),
                                 name=f"recommended: {x_title or x} = {recommended:.3g}", hoverinfo="skip"), 1, 1)
    fig.update_xaxes(title=x_title or x)
    return _layout(fig, title, height=440)


def heatmap_grid(frame: pd.DataFrame, x: str, value: str = "coverage", title=None, zmin=None, zmax=None):
    """Heatmaps of ``value`` over n (rows) x ``x`` (columns), one panel per method (Figures 9-12).

    Two panels per row (a 2 x 2 grid for the four methods), short panel titles and one shared colour
    bar, so titles and axis labels stay readable in a narrow column."""
    rows = frame[frame["feature"] == "(all)"]
    panels = list(dict.fromkeys(zip(rows["mechanism"], rows["privacy"])))
    ncols = 1 if len(panels) <= 1 else 2
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=[short_method_label(*m) for m in panels],
                        shared_yaxes=True, horizontal_spacing=0.06, vertical_spacing=0.16 if nrows > 1 else 0.1)
    zmin = rows[value].min() if zmin is None else zmin
    zmax = rows[value].max() if zmax is None else zmax
    for i, (mechanism, privacy) in enumerate(panels):
        r, c = divmod(i, ncols)
        grp = rows[(rows["mechanism"] == mechanism) & (rows["privacy"] == privacy)]
        pivot = grp.pivot_table(index="n", columns=x, values=value)
        fig.add_trace(go.Heatmap(
            z=pivot.values, x=[str(v) for v in pivot.columns], y=[_fmt_number(v) for v in pivot.index],
            coloraxis="coloraxis", name=short_method_label(mechanism, privacy),
            text=np.round(pivot.values, 3), texttemplate="%{text}", textfont=dict(size=12),
            hovertemplate=f"n=%{{y}}, {x}=%{{x}}: {value} %{{z:.3f}}<extra>%{{fullData.name}}</extra>"), r + 1, c + 1)
        fig.update_xaxes(type="category", title=x if r == nrows - 1 or i + ncols >= len(panels) else None,
                         title_standoff=4, row=r + 1, col=c + 1)
        fig.update_yaxes(type="category", title="n" if c == 0 else None, row=r + 1, col=c + 1)
    fig.update_layout(coloraxis=dict(colorscale="Viridis", cmin=zmin, cmax=zmax,
                                     colorbar=dict(title=dict(text=value, side="right"), thickness=14)))
    return _layout(fig, title, height=90 + 250 * nrows)


def ci_vs_vi_plot(frame: pd.DataFrame, over: str, title=None):
    """Mean private-interval length (solid) and variability-interval length (dashed) per method (Figures 14-16)."""
    rows = frame[frame["feature"] == "(all)"]
    fig = go.Figure()
    for (mechanism, privacy), grp in rows.groupby(["mechanism", "privacy"], sort=False):
        grp = grp.sort_values(over)
        color = methods.color(mechanism, privacy)
        name = method_label(mechanism, privacy)
        fig.add_trace(go.Scatter(x=grp[over], y=grp["length"], mode="lines+markers", name=f"CI: {name}",
                                 line=dict(color=color), error_y=dict(array=1.96 * grp["length_se"])))
        if "vi_length" in grp:
            fig.add_trace(go.Scatter(x=grp[over], y=grp["vi_length"], mode="lines+markers", name=f"VI: {name}",
                                     line=dict(color=color, dash="dash"), marker=dict(symbol="circle-open")))
    fig.update_xaxes(title=over)
    ys = list(rows["length"]) + (list(rows["vi_length"]) if "vi_length" in rows else [])
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
        fig.add_trace(go.Scatter(x=grp.loc[ok, "n_nonprivate"], y=grp.loc[ok, "n_private"], mode="lines+markers",
                                 name=name, legendgroup=name, line=dict(color=color), marker=dict(size=8),
                                 hovertemplate="n' = %{x:,}: private n = %{y:,}<extra>" + name + "</extra>"))
        if (~ok).any():
            fig.add_trace(go.Scatter(
                x=grp.loc[~ok, "n_nonprivate"] + nudge, y=[ceiling] * int((~ok).sum()), mode="markers",
                customdata=grp.loc[~ok, "n_nonprivate"], legendgroup=name,
                showlegend=False, marker=dict(color=color, size=12, symbol="triangle-up-open", line=dict(width=2)),
                hovertemplate="n' = %{customdata:,}: not reached, needs more rows than the data has" +
                              (f" ({n_max:,.0f})" if n_max is not None else "") + "<extra>" + name + "</extra>"))
    fig.add_trace(go.Scatter(x=[0, top], y=[0, top], mode="lines", name="no privacy cost",
                             line=dict(color="#999999", dash="dot"), hoverinfo="skip"))
    if (~reached).any():
        where = f"more than {n_max:,.0f} rows, the data's size" if n_max is not None else "more rows than the data has"
        fig.add_hline(y=ceiling, line=dict(color="#BBBBBB", width=1, dash="dash"))
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=f"not reached: needs {where}",
                                 marker=dict(color="#555555", size=12, symbol="triangle-up-open", line=dict(width=2))))
    fig.update_xaxes(title="non-private n'", rangemode="tozero")
    fig.update_yaxes(title="private n with the same mean length", rangemode="tozero")
    return _layout(fig, title, height=440)


def curve_fit_plot(x, length, fits: dict, x_title="n", title=None, log_x=True):
    """Observed mean lengths and fitted curves of Section 7.7 (``fits``: name -> CurveFit)."""
    x = np.asarray(x, dtype=float)
    grid = np.geomspace(x.min(), x.max(), 200) if log_x else np.linspace(x.min(), x.max(), 200)
    fig = go.Figure(go.Scatter(x=x, y=length, mode="markers", name="observed", marker=dict(size=9, color="#222222")))
    for (name, fit), dash in zip(fits.items(), ("solid", "dash", "dot")):
        fig.add_trace(go.Scatter(x=grid, y=fit.predict(grid), mode="lines", line=dict(dash=dash),
                                 name=f"{fit.formula} (R² = {fit.r2:.3f})"))
    if log_x:
        fig.update_xaxes(title=x_title, **_log_axis(x))
    else:
        fig.update_xaxes(title=x_title, type="linear")
    fig.update_yaxes(title="mean interval length")
    return _layout(fig, title, height=420)


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
    """A matrix before noise, after noise (symmetrised) and after the eigenvalue floor (Algorithm 2).

    Every row and column is labelled; the figure grows with the number of features so the cells stay
    close to square."""
    names = [str(v) for v in names]
    d = len(names)
    # two-line panel titles: three one-line titles run into each other in a narrow column
    fig = make_subplots(rows=1, cols=3, subplot_titles=("computed on the data<br>(secret)",
                                                        "plus noise,<br>symmetrised",
                                                        "after the eigenvalue<br>floor (released)"),
                        horizontal_spacing=0.03)
    fig.update_annotations(font=dict(size=14))
    top = float(np.max(np.abs([true, noisy, private])))
    tickfont = dict(size=11 if d <= 15 else 9)
    for col, mat in enumerate((true, noisy, private), start=1):
        fig.add_trace(go.Heatmap(z=mat, x=names, y=names, zmin=-top, zmax=top, colorscale="RdBu",
                                 reversescale=True, showscale=(col == 3), colorbar=dict(thickness=14),
                                 hovertemplate="%{y} × %{x}: %{z:.4g}<extra></extra>"), 1, col)
        fig.update_yaxes(autorange="reversed", showticklabels=(col == 1), tickmode="array", tickvals=names,
                         ticktext=names, tickfont=tickfont, row=1, col=col)
        fig.update_xaxes(tickmode="array", tickvals=names, ticktext=names, tickangle=-60, tickfont=tickfont,
                         row=1, col=col)
    longest = max((len(v) for v in names), default=0)
    # rows of about 26 px, plus room for the rotated column labels (about 5.5 px a character at 60 degrees)
    height = 140 + max(200, 26 * d) + min(220, int(5.5 * longest))
    return _layout(fig, title, height=height)


def eigenvalue_plot(noisy, private, c, title=None):
    """Eigenvalues of the noisy matrix and of the released one, with the floor 2c, on a log axis.

    A log axis shows the floor and the small eigenvalues beside the largest one, but cannot show a
    value <= 0: noisy eigenvalues that are negative (or zero) are drawn at their absolute value,
    hatched and named as such in the legend and the hover, so nothing is hidden or passed off as positive.
    """
    before = np.sort(np.linalg.eigvalsh(noisy))
    after = np.sort(np.linalg.eigvalsh(private))
    idx = np.arange(1, len(before) + 1)
    floor = 2 * c
    magnitude = np.abs(before)
    positive = magnitude[magnitude > 0]
    bottom = min([floor, *positive, *after[after > 0]]) / 3
    shown = np.where(magnitude > 0, magnitude, bottom)  # an exact zero: a stub at the bottom of the axis
    neg = before <= 0
    fig = go.Figure()
    hover = "eigenvalue %{x}: %{customdata:.4g}<extra>%{fullData.name}</extra>"
    fig.add_trace(go.Bar(x=idx[~neg], y=shown[~neg], customdata=before[~neg], name="noisy", marker_color="#BBBBBB",
                         offsetgroup="noisy", hovertemplate=hover))
    if neg.any():
        fig.add_trace(go.Bar(
            x=idx[neg], y=shown[neg], customdata=before[neg], name="noisy, negative (bar shows |value|)",
            offsetgroup="noisy", marker=dict(color="white", line=dict(color="#777777", width=1.5),
                                             pattern=dict(shape="/", fgcolor="#777777", size=6)),
            hovertemplate="eigenvalue %{x}: %{customdata:.4g} (negative; the bar shows its size)"
                          "<extra>noisy</extra>"))
    fig.add_trace(go.Bar(x=idx, y=after, customdata=after, name="released (floored)", offsetgroup="released",
                         marker_color=STYLE["private"]["color"], hovertemplate=hover))
    # The floor is named in the legend rather than labelled on the plot, where it would cover a bar.
    fig.add_trace(go.Scatter(x=[0.5, len(idx) + 0.5], y=[floor, floor], mode="lines", name=f"floor 2c = {floor:g}",
                             line=dict(color="#222222", dash="dash"), hoverinfo="skip"))
    top = max(np.max(shown), np.max(after))
    fig.update_xaxes(title="eigenvalue (smallest first)", tickmode="linear", dtick=1, range=[0.5, len(idx) + 0.5])
    axis = _log_axis([bottom, top])
    fig.update_yaxes(title="value (log scale)", **axis,
                     range=[math.log10(bottom), math.log10(top) + 0.15])
    fig.update_layout(barmode="group", bargap=0.25)
    return _layout(fig, title, height=360)


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
