"""The figure builders: each draws from realistic inputs, and the layout keeps titles, legends and
labels apart (the legend below the plot, clean log ticks, honest marks for what cannot be drawn)."""

import numpy as np
import pandas as pd
import pytest

import dpci
from dpci import ReleaseSpec
from dpci.data import make_synthetic_logistic
from dpci.experiments.sweeps import METHODS
from dpci.presentation import figures


def _legend_below(fig):
    return fig.layout.legend.yref == "container" and fig.layout.legend.y == 0 and fig.layout.legend.yanchor == "bottom"


def test_nice_log_ticks_are_round_and_written_out():
    vals, text = figures._nice_log_ticks([1000, 20000])
    assert vals == [1000, 2000, 5000, 10000, 20000]
    assert text == ["1,000", "2,000", "5,000", "10,000", "20,000"]
    vals, _ = figures._nice_log_ticks([1e-6, 1e3])
    assert len(vals) <= 8 and all(1e-6 <= v <= 1e3 for v in vals)
    assert figures._nice_log_ticks([0.95, 1.2])[0] == [1.0, 1.1, 1.2]
    assert figures._nice_log_ticks([5, 5])[0] == [5.0]
    assert figures._nice_log_ticks([-1, 0, np.nan]) == (None, None)


def test_long_titles_wrap_and_sit_above_the_plot():
    long = "Figure 13 (adult): private n with the mean length of the non-private interval at n'; d = 10, epsilon = 1"
    fig = figures.curve_fit_plot([1, 2, 4], [3, 2, 1], {}, title=long)
    assert "<br>" in fig.layout.title.text and fig.layout.title.automargin
    assert fig.layout.title.yref == "paper" and fig.layout.title.yanchor == "bottom"
    assert _legend_below(fig)


def _split_frame():
    phi = np.linspace(0.1, 0.9, 9)
    return pd.DataFrame(
        dict(
            feature="(all)",
            mechanism="objective",
            privacy="pure",
            phi1=phi,
            coverage=0.95,
            coverage_se=0.01,
            length=1 / phi,
            length_se=0.01,
        )
    )


def test_coverage_length_names_target_and_recommendation_in_the_legend():
    fig = figures.coverage_length_plot(_split_frame(), "phi1", 0.05, recommended=0.6, x_title="φ1 share")
    names = [t.name for t in fig.data]
    assert "95% coverage target" in names and "recommended: φ1 share = 0.6" in names
    # no free text on the plot besides the two panel titles
    assert [a.text for a in fig.layout.annotations] == ["coverage", "mean interval length"]
    assert _legend_below(fig)


@pytest.mark.parametrize("k, shape", [(1, (1, 1)), (2, (1, 2)), (3, (2, 2)), (4, (2, 2))])
def test_heatmap_grid_short_titles_in_two_columns(k, shape):
    rows = [
        dict(feature="(all)", mechanism=m, privacy=p, n=n, d=d, coverage=0.9)
        for m, p in METHODS[:k]
        for n in (1000, 2000)
        for d in (1, 5)
    ]
    fig = figures.heatmap_grid(pd.DataFrame(rows), "d")
    titles = [a.text for a in fig.layout.annotations]
    assert titles == [figures.short_method_label(m, p) for m, p in METHODS[:k]]
    assert all("perturbation" not in t for t in titles)
    assert fig._get_subplot_rows_columns()[0] == range(1, shape[0] + 1)
    assert fig._get_subplot_rows_columns()[1] == range(1, shape[1] + 1)
    assert fig.layout.coloraxis.cmin == 0.9  # one shared colour bar


def test_ci_vs_vi_and_curve_fit_use_clean_log_ticks():
    rows = [
        dict(
            feature="(all)",
            mechanism=m,
            privacy=p,
            n=n,
            length=1 / np.sqrt(n),
            length_se=0.001,
            vi_length=0.5 / np.sqrt(n),
        )
        for m, p in METHODS
        for n in (1000, 5000, 20000)
    ]
    fig = figures.ci_vs_vi_plot(pd.DataFrame(rows), "n")
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.tickmode == "array"
    assert fig.layout.xaxis.type == "log"  # n on a log axis, as the curve fits of Section 7.7
    assert _legend_below(fig)
    solid = [t for t in fig.data if t.name.startswith("private interval")]
    assert len({t.marker.symbol for t in solid}) == len(METHODS)  # a mark per method, not just a hue
    assert all(t.line.dash == "dash" for t in fig.data if t.name.startswith("variability (not private)"))
    from dpci.experiments.curves import fit_length_vs_n

    n = np.array([1000, 2000, 5000, 10000, 20000])
    fig = figures.curve_fit_plot(n, 1 / np.sqrt(n), fit_length_vs_n(n, 1 / np.sqrt(n)))
    assert list(fig.layout.xaxis.ticktext) == ["1,000", "2,000", "5,000", "10,000", "20,000"]


def test_the_length_curves_stay_above_zero_and_name_their_r2():
    """Section 7.7's curves on lengths an unconstrained c0/n + c1/sqrt(n) takes below 0."""
    from dpci.experiments.curves import fit_length_vs_n

    n = np.array([1000, 2000, 5000, 10000, 20000])
    length = 3e6 * n**-1.5 + 0.05
    fits = fit_length_vs_n(n, length)
    fig = figures.curve_fit_plot(n, length, fits)
    curves = [t for t in fig.data if t.mode == "lines"]
    assert len(curves) == 2 and all(min(t.y) >= 0 for t in curves)
    assert [t.x[0] for t in curves] == [1000, 1000] and [t.x[-1] for t in curves] == pytest.approx([20000, 20000])
    for trace, fit in zip(curves, fits.values()):
        assert trace.name.endswith(f"(R² = {fit.r2:.3f})")
        assert all(f"{k} = {v:.3g}" in trace.name for k, v in fit.coefficients.items())


def test_eigenvalue_plot_log_axis_marks_negative_eigenvalues():
    noisy = np.diag([-0.01, 0.0005, 0.15])
    c = 1e-3
    private = np.diag(np.maximum(np.diag(noisy), 2 * c))
    fig = figures.eigenvalue_plot(noisy, private, c)
    assert fig.layout.yaxis.type == "log"
    by_name = {t.name: t for t in fig.data}
    neg = by_name["noisy, negative (bar shows |value|)"]
    assert list(neg.y) == [0.01] and list(neg.customdata) == [-0.01]
    assert "floor 2c = 0.002" in by_name
    assert not fig.layout.annotations  # the floor is named in the legend, not written over a bar
    positive = figures.eigenvalue_plot(np.diag([0.01, 0.1]), np.diag([0.01, 0.1]), c)
    assert [t.name for t in positive.data] == ["noisy", "released (floored)", "floor 2c = 0.002"]


@pytest.mark.parametrize("d", [2, 11, 20])
def test_matrix_plot_labels_every_row_numbers_the_columns_and_grows(d):
    names = [f"feature {i}" for i in range(d)]
    m = np.eye(d)
    fig = figures.matrix_plot(m, m, m, names)
    assert list(fig.layout.yaxis.tickvals) == names
    assert list(fig.layout.yaxis.ticktext) == [f"feature {i} · {i + 1}" for i in range(d)]  # names and numbers
    heatmap = fig.data[0]
    assert list(heatmap.x) == list(range(1, d + 1)) and heatmap.customdata[0][d - 1] == names[-1]  # hover names
    assert fig.layout.height >= 120 + 26 * d


def test_sample_size_plot_says_which_targets_were_not_reached():
    rows = [
        dict(mechanism=m, privacy=p, n_nonprivate=n, n_private=(4 * n if p == "zcdp" or n == 1000 else np.nan))
        for m, p in METHODS
        for n in (1000, 2500, 5000)
    ]
    frame = pd.DataFrame(rows)
    fig = figures.sample_size_plot(frame)
    names = [t.name for t in fig.data if t.showlegend is not False]
    assert "not reached: needs more rows than the data has" in names
    fig = figures.sample_size_plot(frame.assign(n_max=30162))
    assert any(t.name == "not reached: needs more than 30,162 rows, the data's size" for t in fig.data)
    missing = [t for t in fig.data if t.marker.symbol == "triangle-up-open" and t.showlegend is False]
    assert sum(len(t.x) for t in missing) == int(frame["n_private"].isna().sum())
    assert all(set(t.y) == {30162} for t in missing)
    complete = figures.sample_size_plot(frame.dropna())
    assert not any("not reached" in (t.name or "") for t in complete.data)


def test_forest_plot_legend_below_title_above():
    table = pd.DataFrame(
        dict(
            feature=["a", "b"],
            private_lower=[-1, 0],
            private_upper=[1, 2],
            private_estimate=[0, 1],
            nonprivate_lower=[-0.5, 0.5],
            nonprivate_upper=[0.5, 1.5],
            nonprivate_estimate=[0, 1],
        )
    )
    fig = figures.forest_plot(table, title="95% intervals: objective perturbation, pure ε-DP")
    assert _legend_below(fig) and fig.layout.title.yanchor == "bottom"
    assert fig.layout.height <= 340  # compact for few rows, with room for the legend below
    many = pd.concat([table] * 10, ignore_index=True).assign(feature=[f"x{i}" for i in range(20)])
    assert figures.forest_plot(many).layout.height >= 40 * 20  # every row keeps its height


def test_the_forest_plot_names_the_estimate_ticks_once_in_its_legend():
    import pandas as pd

    from dpci.presentation.figures import forest_plot

    table = pd.DataFrame(
        {
            "feature": ["a", "b"],
            "private_lower": [0.0, 1.0],
            "private_upper": [1.0, 2.0],
            "private_estimate": [0.5, 1.5],
            "nonprivate_lower": [0.2, 1.2],
            "nonprivate_upper": [0.8, 1.8],
            "nonprivate_estimate": [0.5, 1.5],
        }
    )
    fig = forest_plot(table)
    shown = [t.name for t in fig.data if t.showlegend is not False]
    assert shown.count("estimate (tick on each bar)") == 1


def test_the_target_path_marks_each_strategys_stop_and_the_target():
    from dpci import LogisticLoss
    from dpci.accuracy_first import STRATEGIES, accuracy_first
    from dpci.data import make_synthetic_logistic
    from dpci.presentation.figures import target_path_plot

    X, y = make_synthetic_logistic(5_000, [1.0, -0.5, 0.3], random_state=1)
    results = [
        accuracy_first(
            X,
            y,
            ReleaseSpec("output", budget=5.0, loss=LogisticLoss(), n_samples=2_000),
            target=0.5,
            coefficients=[0],
            random_state=2,
            strategy=s,
        )
        for s in STRATEGIES
    ]
    fig = target_path_plot(results, 0.5)
    stops = [t for t in fig.data if t.showlegend is False]
    assert len(stops) == 3 and len({t.marker.symbol for t in stops}) == 3
    assert [t.x[0] for t in stops] == [r.budget for r in results]
    assert any(s.y0 == 0.5 for s in fig.layout.shapes)  # the target line


def _shown_range(fig, axis):
    """The log10 range a log axis shows: its own, else Plotly's autorange (the extent of every trace)."""
    if fig.layout[f"{axis}axis"].range is not None:
        return list(fig.layout[f"{axis}axis"].range)
    values = np.array([v for t in fig.data if t[axis] is not None for v in t[axis] if v is not None], dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    return [np.log10(values.min()), np.log10(values.max())]


def test_the_target_path_zooms_on_the_checked_steps_so_the_strategies_stand_apart():
    """the grid runs from max/1000 = 0.005, but every check is at 3.5 or 5 (the stand-in at
    the page's defaults; here 20,000 synthetic rows): the axes must show those, not the whole grid."""
    from dpci import LogisticLoss
    from dpci.accuracy_first import STRATEGIES, accuracy_first
    from dpci.presentation.figures import target_path_plot

    X, y = make_synthetic_logistic(20_000, [1.0, -0.5, 0.3], random_state=1)
    results = [
        accuracy_first(
            X,
            y,
            ReleaseSpec("output", budget=5.0, loss=LogisticLoss(), n_samples=2_000),
            target=0.2,
            coefficients=[0],
            random_state=2,
            strategy=s,
        )
        for s in STRATEGIES
    ]
    assert min(r.path_frame()["budget"].min() for r in results) == pytest.approx(0.005)
    assert min(r.path_frame().query("checked")["budget"].min() for r in results) > 3  # the case
    fig = target_path_plot(results, 0.2)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    x, y = _shown_range(fig, "x"), _shown_range(fig, "y")
    stops = {r.strategy: (np.log10(r.budget), np.log10(np.max(r.widths))) for r in results}
    checked = [
        (np.log10(b), np.log10(w))
        for r in results
        for b, w in r.path_frame().query("checked")[["budget", "width"]].values
    ]
    # doubling stopped a step before the others: apart by over a quarter of each axis
    assert stops["noise_reduction"][0] - stops["doubling"][0] > 0.25 * (x[1] - x[0])
    assert stops["doubling"][1] - stops["noise_reduction"][1] > 0.15 * (y[1] - y[0])
    for bx, wy in [*stops.values(), *checked, (np.log10(5.0), np.log10(0.2))]:  # every mark and the target shown
        assert x[0] < bx < x[1] and y[0] <= wy < y[1]
    # stops at one point (noise reduction and the fixed budget both at 5) stay visible: one inside the other
    sizes = [t.marker.size for t in fig.data if t.showlegend is False]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    assert fig.layout.xaxis.tickmode == "array" and "5" in fig.layout.xaxis.ticktext
    label = next(a for a in fig.layout.annotations if a.text == "target width 0.2")
    assert label.y == pytest.approx(np.log10(0.2))  # on the target line (a log axis takes log10 positions)


def test_stale_intervals_are_drawn_faded_and_named_so():
    import pandas as pd

    from dpci.presentation.figures import forest_plot

    table = pd.DataFrame(
        {
            "feature": ["a"],
            "private_lower": [0.0],
            "private_upper": [1.0],
            "variability_lower": [0.2],
            "variability_upper": [0.8],
        }
    )
    fig = forest_plot(table, stale=("variability",))
    faded = [t for t in fig.data if (t.name or "").endswith("(updating…)")]
    assert len(faded) == 1 and faded[0].opacity == 0.3
    assert all(t.opacity in (None, 1.0) for t in fig.data if (t.name or "").startswith("private"))


def test_length_heatmaps_colour_a_tenfold_difference_apart_beside_a_thousandfold_outlier():
    """Lengths 0.15 to 161 in one sweep: on a linear scale 0.15 and 1.5 were the same colour.
    Coloured by log10, a factor of ten is a third of this scale; the cells and the bar say lengths."""
    lengths = {(1000, 1): 1.5, (1000, 5): 161.0, (2000, 1): 0.15, (2000, 5): 0.4}
    rows = [
        dict(feature="(all)", mechanism=m, privacy=p, n=n, d=d, length=v)
        for m, p in METHODS[:2]
        for (n, d), v in lengths.items()
    ]
    marks = {(m, p, 1000): 5 for m, p in METHODS[:2]}
    fig = figures.heatmap_grid(pd.DataFrame(rows), "d", "length", marks=marks)
    axis = fig.layout.coloraxis

    def position(n, d, panel=0):  # where on the colour scale the cell falls, 0 to 1
        trace = fig.data[panel]
        z = trace.z[list(trace.y).index(f"{n:,}")][list(trace.x).index(str(d))]
        return (z - axis.cmin) / (axis.cmax - axis.cmin)

    assert position(1000, 1) - position(2000, 1) > 0.3  # 1.5 against 0.15
    assert position(2000, 1) == pytest.approx(0) and position(1000, 5) == pytest.approx(1)
    assert position(2000, 5) - position(2000, 1) > 0.1  # 0.4 against 0.15
    assert fig.data[0].text[0][0] == "1.5" and fig.data[0].customdata[0][1] == 161.0  # cells and hover: lengths
    assert "log" in axis.colorbar.title.text and "100" in axis.colorbar.ticktext
    np.testing.assert_allclose(10 ** np.array(axis.colorbar.tickvals), [float(t) for t in axis.colorbar.ticktext])
    # the outlined cells are still drawn: d = 5 (column 1) at n = 1,000 (row 0) in both panels
    assert [(b.x0, b.y0, b.xref) for b in fig.layout.shapes] == [(0.5, -0.5, "x"), (0.5, -0.5, "x2")]
    coverage = figures.heatmap_grid(pd.DataFrame(rows).assign(coverage=0.9), "d", zmin=0.8, zmax=1.0)
    assert coverage.layout.coloraxis.cmin == 0.8 and coverage.data[0].z[0][0] == 0.9  # coverage stays linear


def test_the_noise_matrix_is_drawn_on_its_own_scale():
    from dpci.presentation.figures import noise_matrix_plot

    true = np.array([[0.05, 0.01], [0.01, 0.04]])
    noisy = true + np.array([[1e-4, -2e-4], [-2e-4, 3e-4]])
    fig = noise_matrix_plot(true, noisy, ["a", "b"])
    exact, noise = fig.data
    np.testing.assert_allclose(noise.z, noisy - true)
    assert noise.zmax == pytest.approx(3e-4) and exact.zmax == pytest.approx(0.05)  # each on its own scale


def test_coverage_cells_show_their_margin_and_mark_a_shortfall():
    rows = [
        dict(feature="(all)", mechanism="output", privacy="pure", n=n, d=1, coverage=cov, coverage_se=0.01)
        for n, cov in ((1000, 0.90), (2000, 0.94))
    ]
    fig = figures.heatmap_grid(pd.DataFrame(rows), "d", level=0.95)
    text = [str(v) for v in np.ravel(fig.data[0].text)]
    assert text == ["0.90 ✗<br>±0.02", "0.94<br>±0.02"]  # 0.90 + 2 SE < 0.95; 0.94 + 2 SE is not


def _strings(obj):
    """Every string in a figure's JSON-like tree (labels, titles, hover data)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (list, tuple, np.ndarray)):
        for v in obj:
            yield from _strings(v)


def test_a_feature_name_is_shown_as_text_never_as_a_link_in_any_chart():
    from dpci.presentation.tables import interval_table

    hostile = '<a href="http://evil.example/x">click</a>'
    names = ["age", hostile, "const"]
    X, y = make_synthetic_logistic(2_000, [1.0, -0.5, 0.3], random_state=0)
    release = dpci.private_confidence_intervals(X, y, dpci.LogisticLoss(), random_state=0)
    m = np.eye(3)
    charts = [
        figures.forest_plot(interval_table(names, release)),
        figures.matrix_plot(m, m, m, names),
        figures.noise_matrix_plot(m, m, names),
        figures.shift_plot(names, release.theta, release.theta),
        figures.cloud_plot(release.theta, np.zeros((5, 3)), names, 0, 1, release.interval()),
    ]
    for chart in charts:
        texts = list(_strings(chart.to_plotly_json()))
        assert not any("<a " in t for t in texts)
        assert any("&lt;a href" in t for t in texts)  # the name is there, as text


def test_every_figure_wears_plotly_white_assigned_without_revalidation():
    """_layout assigns Plotly's plotly_white template the way Plotly assigns its default one (no second
    validation): the figure is the one the template's name gives, and assigning it stays much cheaper than
    by name (the switch it flips is Plotly's own; were it gone, this fails rather than the app slowing)."""
    import time

    import plotly.graph_objects as go
    import plotly.io as pio

    from dpci.presentation.figures.style import _layout, _white

    fig = _layout(go.Figure(go.Scatter(x=[0, 1], y=[1, 0])), title="t")
    by_name = go.Figure(go.Scatter(x=[0, 1], y=[1, 0])).update_layout(template="plotly_white")
    assert fig.layout.template.to_plotly_json() == by_name.layout.template.to_plotly_json()
    assert fig.layout.template.to_plotly_json() == pio.templates["plotly_white"].to_plotly_json()

    def best_of(assign, k=5):
        times = []
        for _ in range(k):
            f = go.Figure()
            started = time.perf_counter()
            assign(f)
            times.append(time.perf_counter() - started)
        return min(times)

    assert best_of(_white) < best_of(lambda f: f.update_layout(template="plotly_white")) / 3


def test_a_release_is_called_too_wide_only_when_it_tells_no_effect_from_zero():
    """Wide intervals beside a large effect told apart from 0 are a useful chart (no warning); when every
    interval holds 0 and they are wide beside the estimates, the chart says so."""
    from dpci.presentation.tables import release_too_wide

    def table(lower, upper, estimate):
        return pd.DataFrame(
            {"feature": ["a", "b", "c"], "private_lower": lower, "private_upper": upper, "private_estimate": estimate}
        )

    large_effect = table([2.0, -3.0, -2.5], [4.0, 3.0, 2.5], [3.0, 0.0, 0.0])
    assert release_too_wide(large_effect) == ""
    nothing_told = table([-2.0, -3.0, -2.5], [4.0, 3.0, 2.5], [1.0, 0.0, 0.0])
    assert release_too_wide(nothing_told).startswith("**Too wide to be useful:**")
