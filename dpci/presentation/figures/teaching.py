"""Figures of a release taken apart for a class: the noise, the perturbed fit, the noisy matrices
and their eigenvalue floor, the Monte Carlo cloud."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import (
    STYLE,
    _layout,
    _log_axis,
    plain,
)


def noise_norm_plot(norms, d, gamma, title=None):
    """Histogram of spherical-Laplace noise norms with the Gamma(d, 1/gamma) density (Eq. 3.2)."""
    from scipy.stats import gamma as gamma_law

    norms = np.asarray(norms, dtype=float)
    grid = np.linspace(0, np.quantile(norms, 0.999), 300)
    fig = go.Figure(
        go.Histogram(
            x=norms, histnorm="probability density", nbinsx=60, name="draws", marker_color="#E69F00", opacity=0.75
        )
    )
    fig.add_trace(
        go.Scatter(
            x=grid,
            y=gamma_law(a=d, scale=1 / gamma).pdf(grid),
            mode="lines",
            name=f"Gamma(shape {d}, scale 1/γ)",
            line=dict(color="#222222", width=2),
        )
    )
    fig.update_xaxes(title="‖β‖, length of the noise vector")
    fig.update_yaxes(title="density")
    return _layout(fig, title, height=340)


def shift_plot(names, theta_hat, theta_private, title=None):
    """How far the mechanism moved each coefficient: theta-hat (non-private) to theta~ (private)."""
    names = [plain(v) for v in names]
    y = np.arange(len(names))[::-1]
    fig = go.Figure()
    for yi, a, b in zip(y, theta_hat, theta_private):
        fig.add_trace(
            go.Scatter(
                x=[a, b],
                y=[yi, yi],
                mode="lines",
                line=dict(color="#BBBBBB", width=3),
                showlegend=False,
                hoverinfo="skip",
            )
        )
    for x, name, marker in (
        (theta_hat, "without privacy (θ̂)", dict(color=STYLE["nonprivate"]["color"], size=11)),
        (theta_private, "private (θ̃)", dict(color=STYLE["private"]["color"], size=11, symbol="diamond")),
    ):
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name=name, marker=marker))
    fig.update_yaxes(tickvals=y, ticktext=list(names))
    fig.update_xaxes(title="coefficient")
    return _layout(fig, title, height=max(260, 60 + 40 * len(names)))


def matrix_plot(true, noisy, private, names, title=None):
    """A matrix before noise, after noise (symmetrised) and after the eigenvalue floor (Algorithm 2).

    Every row and column is labelled (columns by number, so that three panels fit an 800-px window);
    the figure grows with the number of features so the cells stay close to square."""
    names = [plain(v) for v in names]
    # short two-line panel titles: longer ones run into each other in a narrow column
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=("exact<br>(secret)", "+ noise<br>(symmetrised)", "floored<br>(released)"),
        horizontal_spacing=0.03,
    )
    fig.update_annotations(font=dict(size=13))
    top = float(np.max(np.abs([true, noisy, private])))
    for col, mat in enumerate((true, noisy, private), start=1):
        _matrix_panel(fig, mat, names, col, top, showscale=(col == 3), colorbar=dict(thickness=14))
    return _layout(fig, title, height=_matrix_height(names))


def _matrix_panel(fig, mat, names, col, top, **heatmap):
    """One matrix as a heatmap in panel ``col``, red-blue around 0 on [-top, top]; columns by number."""
    d = len(names)
    fig.add_trace(
        go.Heatmap(
            z=mat,
            x=np.arange(1, d + 1),
            y=names,
            zmin=-top,
            zmax=top,
            colorscale="RdBu",
            reversescale=True,
            customdata=np.broadcast_to(np.asarray(names, dtype=object), (d, d)),
            hovertemplate="%{y} × %{customdata}: %{z:.4g}<extra></extra>",
            **heatmap,
        ),
        1,
        col,
    )
    _matrix_axes(fig, names, col)


def _matrix_axes(fig, names, col):
    """Every row and column of a matrix panel labelled: the rows by name and number on the first
    panel, the columns by number (names there would need rotated labels that overlap in a narrow panel)."""
    tickfont = dict(size=11 if len(names) <= 15 else 9)
    numbers = [str(i + 1) for i in range(len(names))]
    fig.update_yaxes(
        autorange="reversed",
        showticklabels=(col == 1),
        tickmode="array",
        tickvals=names,
        ticktext=[f"{name} · {i}" for name, i in zip(names, numbers)],
        tickfont=tickfont,
        row=1,
        col=col,
    )
    fig.update_xaxes(  # numbers, thinned by Plotly when the panel is narrow
        tickmode="auto",
        nticks=min(len(names), 12),
        tickangle=0,
        tickfont=tickfont,
        title=dict(text="features by number", font=dict(size=11)) if col == 1 else None,
        row=1,
        col=col,
    )


def _matrix_height(names):
    """Rows of about 26 px, plus the titles and the numbered columns."""
    return 200 + max(200, 26 * len(names))


def noise_matrix_plot(true, noisy, names, title=None):
    """The noise itself: the noisy matrix minus the exact one, on its own colour scale (beside entries of
    the matrix it is often too small to see), and the exact matrix for scale."""
    names = [plain(v) for v in names]
    noise = np.asarray(noisy) - np.asarray(true)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("exact<br>(secret)", "the noise added<br>(noisy − exact; secret)"),
        horizontal_spacing=0.06,
    )
    fig.update_annotations(font=dict(size=14))
    for col, mat in enumerate((np.asarray(true), noise), start=1):
        top = float(np.max(np.abs(mat))) or 1.0
        # each panel's own scale as a horizontal bar under it: vertical bars between the panels would
        # lie on the second panel in a narrow window
        domain = fig.layout[f"xaxis{'' if col == 1 else col}"].domain
        bar = dict(orientation="h", x=sum(domain) / 2, xanchor="center", len=domain[1] - domain[0], y=-0.12)
        _matrix_panel(fig, mat, names, col, top, colorbar=dict(thickness=12, yanchor="top", **bar))
    return _layout(fig, title, height=_matrix_height(names) + 60)


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
    fig.add_trace(
        go.Bar(
            x=idx[~neg],
            y=shown[~neg],
            customdata=before[~neg],
            name="noisy",
            marker_color="#BBBBBB",
            offsetgroup="noisy",
            hovertemplate=hover,
        )
    )
    if neg.any():
        fig.add_trace(
            go.Bar(
                x=idx[neg],
                y=shown[neg],
                customdata=before[neg],
                name="noisy, negative (bar shows |value|)",
                offsetgroup="noisy",
                marker=dict(
                    color="white",
                    line=dict(color="#777777", width=1.5),
                    pattern=dict(shape="/", fgcolor="#777777", size=6),
                ),
                hovertemplate="eigenvalue %{x}: %{customdata:.4g} (negative; the bar shows its size)"
                "<extra>noisy</extra>",
            )
        )
    fig.add_trace(
        go.Bar(
            x=idx,
            y=after,
            customdata=after,
            name="released (floored)",
            offsetgroup="released",
            marker_color=STYLE["private"]["color"],
            hovertemplate=hover,
        )
    )
    # The floor is named in the legend rather than labelled on the plot, where it would cover a bar.
    fig.add_trace(
        go.Scatter(
            x=[0.5, len(idx) + 0.5],
            y=[floor, floor],
            mode="lines",
            name=f"floor 2c = {floor:g}",
            line=dict(color="#222222", dash="dash"),
            hoverinfo="skip",
        )
    )
    top = max(np.max(shown), np.max(after))
    fig.update_xaxes(title="eigenvalue (smallest first)", tickmode="linear", dtick=1, range=[0.5, len(idx) + 0.5])
    axis = _log_axis([bottom, top])
    fig.update_yaxes(title="value (log scale)", **axis, range=[math.log10(bottom), math.log10(top) + 0.15])
    fig.update_layout(barmode="group", bargap=0.25)
    return _layout(fig, title, height=360)


def cloud_plot(theta, offsets, names, j, k, interval, max_points=3_000, title=None):
    """Monte Carlo draws of theta_0 (= theta~ + offset) for two coefficients, with their intervals."""
    pts = np.asarray(theta)[[j, k]] + np.asarray(offsets)[:max_points][:, [j, k]]
    fig = go.Figure(
        go.Scattergl(
            x=pts[:, 0],
            y=pts[:, 1],
            mode="markers",
            name="Monte Carlo draws",
            marker=dict(size=3, color=STYLE["private"]["color"], opacity=0.35),
        )
    )
    fig.add_shape(
        type="rect",
        x0=interval[j, 0],
        x1=interval[j, 1],
        y0=interval[k, 0],
        y1=interval[k, 1],
        line=dict(color="#222222", width=2),
    )
    fig.add_trace(
        go.Scatter(
            x=[theta[j]],
            y=[theta[k]],
            mode="markers",
            name="private estimate θ̃",
            marker=dict(size=12, color=STYLE["estimate"]["color"], symbol="x"),
        )
    )
    fig.update_xaxes(title=plain(names[j]))
    fig.update_yaxes(title=plain(names[k]))
    return _layout(fig, title, height=420)
