"""Repeated releases on fresh samples from a known population: hits, misses and coverage."""

import numpy as np
import pytest

from dpci import LogisticLoss
from dpci.data import population_theta0
from dpci.experiments.bootstrap import _last
from dpci.experiments.repeat import iter_repeated_releases

THETA = [1.0, -0.5, 0.3]


def test_each_repetition_is_checked_against_the_population_theta0():
    steps = list(iter_repeated_releases(THETA, 2_000, LogisticLoss(), "output", "zcdp", 0.5, repetitions=5))
    assert [p.done for p in steps] == [1, 2, 3, 4, 5] and steps[-1].finished
    last = steps[-1]
    np.testing.assert_allclose(last.theta0, population_theta0(np.array(THETA), 1e-3))
    frame = last.frame
    assert len(frame) == 5 * 2 * 3  # repetitions x kinds x coefficients
    truth = last.theta0[frame["coefficient"]]
    assert (frame["covers"] == ((frame["lower"] <= truth) & (truth <= frame["upper"]))).all()


def test_the_same_seed_repeats_the_same_demonstration_and_another_differs():
    a = _last(iter_repeated_releases(THETA, 1_000, LogisticLoss(), "output", repetitions=3, random_state=1)).frame
    b = _last(iter_repeated_releases(THETA, 1_000, LogisticLoss(), "output", repetitions=3, random_state=1)).frame
    c = _last(iter_repeated_releases(THETA, 1_000, LogisticLoss(), "output", repetitions=3, random_state=2)).frame
    assert a.equals(b) and not a.equals(c)


def test_private_intervals_cover_near_their_level_and_the_running_count_has_its_se():
    p = _last(
        iter_repeated_releases(THETA, 5_000, LogisticLoss(), "output", "zcdp", 0.5, repetitions=60, random_state=3)
    )
    share, se = p.coverage("private")
    assert se == pytest.approx(np.sqrt(share * (1 - share) / 180))
    assert share >= 0.95 - 3 * se  # 180 intervals (60 repetitions x 3 coefficients)
    assert p.coverage("nonprivate", coefficient=0)[0] >= 0.8


@pytest.mark.parametrize("bad, match", [(dict(repetitions=0), "repetitions"), (dict(n=10), "n must be")])
def test_bad_input_is_refused_clearly(bad, match):
    kwargs = dict(theta=THETA, n=1_000, loss=LogisticLoss(), repetitions=2) | bad
    with pytest.raises(ValueError, match=match):
        next(iter_repeated_releases(**kwargs))


def test_a_method_that_picks_its_own_c_is_checked_against_its_own_theta0():
    from dpci import methods

    p = _last(iter_repeated_releases(THETA, 2_000, LogisticLoss(), "wu", "pure", 1.0, repetitions=1))
    wu = methods.get("wu")
    c = wu.estimand_c(wu.allocate(1.0, None, "pure"), 2_000, 3, 1e-3, LogisticLoss())
    assert c != 1e-3
    np.testing.assert_allclose(p.theta0, population_theta0(np.array(THETA), c))


def test_the_two_panels_share_one_scale():
    from dpci.presentation.figures import repeat_plot

    p = _last(iter_repeated_releases(THETA, 1_000, LogisticLoss(), "output", repetitions=3))
    fig = repeat_plot(p.frame, p.theta0, 0, "x1", 0.95)
    assert fig.layout.xaxis2.matches == "x"
