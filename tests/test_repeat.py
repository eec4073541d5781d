"""Repeated releases on fresh samples from a known population: hits, misses and coverage."""

import numpy as np
import pandas as pd
import pytest

from dpci import LogisticLoss, ReleaseSpec
from dpci.data import population_theta0
from dpci.experiments.bootstrap import _last
from dpci.experiments.repeat import iter_repeated_releases

THETA = [1.0, -0.5, 0.3]


def _spec(method="objective", privacy="pure", budget=1.0):
    """The release the page repeats, at the m it uses."""
    return ReleaseSpec(method, privacy, budget, loss=LogisticLoss(), n_samples=2_000)


def test_each_repetition_is_checked_against_the_population_theta0():
    steps = list(iter_repeated_releases(THETA, 2_000, _spec("output", "zcdp", 0.5), repetitions=5))
    assert [p.done for p in steps] == [1, 2, 3, 4, 5] and steps[-1].finished
    last = steps[-1]
    np.testing.assert_allclose(last.theta0, population_theta0(np.array(THETA), 1e-3))
    frame = last.frame
    assert len(frame) == 5 * 2 * 3  # repetitions x kinds x coefficients
    truth = last.theta0[frame["coefficient"]]
    assert (frame["covers"] == ((frame["lower"] <= truth) & (truth <= frame["upper"]))).all()


def test_the_same_seed_repeats_the_same_demonstration_and_another_differs():
    a = _last(iter_repeated_releases(THETA, 1_000, _spec("output"), repetitions=3, random_state=1)).frame
    b = _last(iter_repeated_releases(THETA, 1_000, _spec("output"), repetitions=3, random_state=1)).frame
    c = _last(iter_repeated_releases(THETA, 1_000, _spec("output"), repetitions=3, random_state=2)).frame
    assert a.equals(b) and not a.equals(c)


def test_private_intervals_cover_near_their_level_and_the_running_count_has_its_se():
    p = _last(iter_repeated_releases(THETA, 5_000, _spec("output", "zcdp", 0.5), repetitions=60, random_state=3))
    share, se = p.coverage("private")
    assert se == pytest.approx(np.sqrt(share * (1 - share) / 180))
    assert share >= 0.95 - 3 * se  # 180 intervals (60 repetitions x 3 coefficients)
    assert p.coverage("nonprivate", coefficient=0)[0] >= 0.8


@pytest.mark.parametrize("bad, match", [(dict(repetitions=0), "repetitions"), (dict(n=10), "n must be")])
def test_bad_input_is_refused_clearly(bad, match):
    kwargs = dict(theta=THETA, n=1_000, spec=_spec(), repetitions=2) | bad
    with pytest.raises(ValueError, match=match):
        next(iter_repeated_releases(**kwargs))


def test_a_method_that_picks_its_own_c_is_checked_against_its_own_theta0():
    from dpci import methods

    p = _last(iter_repeated_releases(THETA, 2_000, _spec("wu"), repetitions=1))
    wu = methods.get("wu")
    c = wu.estimand_c(ReleaseSpec("wu", "pure", 1.0, loss=LogisticLoss(), c=1e-3).measure(), 2_000, 3)
    assert c != 1e-3
    np.testing.assert_allclose(p.theta0, population_theta0(np.array(THETA), c))


def test_the_two_panels_share_one_scale():
    from dpci.presentation.figures import repeat_plot

    p = _last(iter_repeated_releases(THETA, 1_000, _spec("output"), repetitions=3))
    fig = repeat_plot(p.frame, p.theta0, 0, "x1", 0.95)
    assert fig.layout.xaxis2.matches == "x"


# --- the coverage count's Monte Carlo interval (Wilson) ----------------------------------------------
# Hand values, z = 1.959964 (z^2 = 3.841459): the interval is (p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2))
# / (1 + z^2/n). 50 of 50: lower = n / (n + z^2) = 50 / 53.8415 = 0.92865, upper 1. 47 of 50: centre
# 0.978415 / 1.076829 = 0.908608, half 1.820125 x 0.038886 = 0.070778. 0 of 10: upper = z^2 / (n + z^2)
# = 0.27753. 5 of 10: 0.5 -/+ 1.415993 x 0.186021 = 0.263405.
@pytest.mark.parametrize(
    "hits, total, low, high",
    [(50, 50, 0.92865, 1.0), (47, 50, 0.83783, 0.97939), (0, 10, 0.0, 0.27753), (5, 10, 0.23659, 0.76341)],
)
def test_the_wilson_interval_matches_hand_computed_values(hits, total, low, high):
    from dpci.intervals import wilson_interval

    assert wilson_interval(hits, total) == pytest.approx((low, high), abs=1e-5)


def test_the_wilson_interval_never_collapses_and_widens_with_the_level():
    from dpci.intervals import wilson_interval

    for hits in (0, 1, 25, 49, 50):
        low, high = wilson_interval(hits, 50)
        assert 0.0 <= low <= hits / 50 <= high <= 1.0
        assert high - low > 0.05  # never a point, even at 0 or 50 hits
    assert wilson_interval(50, 50)[0] < 0.93  # not the "100% +/- 0%" of p -/+ z SE
    narrow, wide = wilson_interval(47, 50, 0.8), wilson_interval(47, 50, 0.99)
    assert wide[0] < narrow[0] and narrow[1] < wide[1]
    with pytest.raises(ValueError, match="hits"):
        wilson_interval(51, 50)
    with pytest.raises(ValueError, match="total"):
        wilson_interval(0, 0)


def test_the_running_count_gives_its_wilson_interval():
    from dpci.intervals import wilson_interval

    p = _last(iter_repeated_releases(THETA, 1_000, _spec("output"), repetitions=4, random_state=5))
    hits, total = p.hits("private", coefficient=1)
    rows = p.frame[(p.frame["kind"] == "private") & (p.frame["coefficient"] == 1)]
    assert (hits, total) == (int(rows["covers"].sum()), 4)
    assert p.coverage_interval("private", 1) == wilson_interval(hits, 4)
    assert p.hits("nonprivate")[1] == 4 * 3


def test_a_count_of_hits_reads_with_its_wilson_interval_and_no_end_rounds_to_a_bound_it_is_not():
    from dpci.presentation.figures.repeat import coverage_count_text

    assert coverage_count_text(47, 50) == "47 of 50 (94%; 95% Wilson interval 84%–98%)"
    assert coverage_count_text(50, 50) == "50 of 50 (100%; 95% Wilson interval 93%–100%)"
    assert coverage_count_text(49, 50) == "49 of 50 (98%; 95% Wilson interval 90%–99.6%)"  # 0.9965, not 100%


# --- the figure ---------------------------------------------------------------------------------------
def _frame(private_misses, nonprivate_misses, k=10):
    """A run of k repetitions of one coefficient (theta_0 = 0.2): the listed repetitions miss."""
    rows = []
    for kind, misses in (("private", private_misses), ("nonprivate", nonprivate_misses)):
        for r in range(k):
            lower = 0.5 if r in misses else -0.5
            rows.append(
                dict(repetition=r, kind=kind, coefficient=0, lower=lower, upper=lower + 1, covers=r not in misses)
            )
    return pd.DataFrame(rows)


def _legend(fig):
    """{name: colour} of the legend Plotly draws: traces shown in the legend with at least one point
    (plotly.js leaves a trace without points out of its legend: seen in Chromium, where a run with no
    private misses had no legend entry for misses)."""
    return {
        t.name: t.line.color
        for t in fig.data
        if t.showlegend is not False and t.visible is not False and t.x is not None and len(t.x) > 0
    }


@pytest.mark.parametrize("private_misses, nonprivate_misses", [((), (2, 7)), ((), ()), ((3,), ()), ((1,), (1, 4))])
def test_the_legend_names_hits_and_misses_whatever_the_run(private_misses, nonprivate_misses):
    from dpci.presentation.figures import STYLE, repeat_plot

    fig = repeat_plot(_frame(private_misses, nonprivate_misses), np.array([0.2]), 0, "x1", 0.95)
    legend = _legend(fig)
    hits = {name: colour for name, colour in legend.items() if "contains θ₀" in name}
    misses = {name: colour for name, colour in legend.items() if "misses θ₀" in name}
    assert len(misses) == 1 and len(hits) == 2, legend  # one entry per kind's hits, one for misses
    # each entry's colour is the colour of the bars it names: hits in their kind's colour, misses in another
    assert {hits[n] for n in hits if n.startswith("private")} == {STYLE["private"]["color"]}
    assert {hits[n] for n in hits if n.startswith("non-private")} == {STYLE["nonprivate"]["color"]}
    miss_colour = next(iter(misses.values()))
    assert miss_colour not in hits.values()
    drawn = {t.line.color for t in fig.data if t.name == next(iter(misses)) and t.x and any(v is not None for v in t.x)}
    assert drawn <= {miss_colour} and (bool(drawn) == bool(private_misses or nonprivate_misses))


def test_each_panel_counts_its_hits_with_their_wilson_interval():
    from dpci.presentation.figures import repeat_plot

    fig = repeat_plot(_frame((), (2, 7), k=50), np.array([0.2]), 0, "x1", 0.95)
    private, nonprivate = (a.text for a in fig.layout.annotations)
    assert "50 of 50 contain θ₀: 100%" in private and "95% Wilson interval 93%–100%" in private
    assert "48 of 50 contain θ₀: 96%" in nonprivate and "±" not in private + nonprivate
