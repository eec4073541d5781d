"""Choosing c from public facts (dpci.recommend_c) and the two estimands."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import dpci
from dpci import methods
from dpci.data import make_synthetic_logistic
from dpci.data.synthetic import population_theta0
from dpci.mechanisms import NoiseLaw, c_for_epsilon_prime
from dpci.methods import OffsetLaw
from dpci.recommend import predict, recommend_c, reference
from dpci.recommend.reference import design_min_eigenvalue, predicted_bias
from dpci.recommend.widths import coverage, half_widths

FACTS = dict(n=5_000, d=6, method="output", privacy="pure", budget=0.3, estimand="regularised")
#: The bias-bound interval for theta: a stated bound B on ||theta|| (the default reference's own length).
BIASED = dict(estimand="unregularised", theta_bound=float(np.linalg.norm(reference(6).theta)))


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


# --- no data, no privacy -------------------------------------------------------------------------------
def test_the_recommendation_reads_no_data_and_charges_nothing():
    """The estimator with c="recommended" on two different samples of the same size chooses the c a call
    with n and d alone gives, and the ledger records nothing for the recommendation itself."""
    n, d = 2_000, 3
    data_free = recommend_c(n, d, method="output", privacy="zcdp", budget=0.2, loss="logistic")
    chosen = []
    with dpci.Ledger(budget="rho=10") as watch:
        again = recommend_c(n, d, method="output", privacy="zcdp", budget=0.2, loss="logistic")
        assert watch.admissions == []  # nothing was admitted, noted or charged
        for seed, theta in ((1, [1.0, -0.5, 0.2]), (2, [-2.0, 0.1, 0.8])):
            X, y = make_synthetic_logistic(n, theta, random_state=seed)
            model = dpci.PrivateLogisticRegression(
                mechanism="output", privacy="zcdp", budget=0.2, c="recommended", classes=(-1, 1), random_state=None
            ).fit(X, y)
            chosen.append(model.release_.c)
        assert len(watch.admissions) == 2  # the two releases, nothing more
    assert again.c == data_free.c
    assert chosen == [data_free.c, data_free.c]
    assert "none" in data_free.privacy_cost


def test_the_recommendation_is_deterministic_and_depends_on_the_public_facts():
    first, second = recommend_c(**FACTS), recommend_c(**FACTS)
    assert first.c == second.c and first.width == second.width
    more_budget = recommend_c(**{**FACTS, "budget": 3.0})
    assert more_budget.c <= first.c  # less privacy noise: no more penalty needed
    assert more_budget.width < first.width


# --- refusals and warnings ----------------------------------------------------------------------------
def test_a_method_without_c_is_refused():
    with pytest.raises(ValueError, match="has no regulariser c"):
        recommend_c(1_000, 3, method="kulkarni", privacy="zcdp", budget=0.5)


def test_no_valid_c_is_refused_with_the_remedy():
    """Objective perturbation with epsilon1 n so small that eps' >= eps1/2 needs c > 1."""
    with pytest.raises(ValueError, match="No c in .* lets objective perturbation run.*more rows"):
        recommend_c(20, 3, method="objective", privacy="pure", budget=0.01)


@pytest.mark.parametrize(
    "estimand, said",
    [("regularised", "No c gives a useful interval.*more budget"), (None, "gives an interval for θ.*or budget")],
)
def test_no_useful_c_is_warned_and_said(estimand, said):
    with pytest.warns(dpci.WideIntervalWarning, match=said):
        rec = recommend_c(200, 11, method="output", privacy="pure", budget=0.1, estimand=estimand)
    assert not rec.useful and re.search(said, rec.advice)


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="estimand must be"):
        recommend_c(**{**FACTS, "estimand": "odds"})
    with pytest.raises(ValueError, match="d .* must be an integer >= 2"):
        recommend_c(1_000, 1, method="output", privacy="pure", budget=1.0)
    with pytest.raises(ValueError, match="theta_bound must be a positive number"):
        recommend_c(**FACTS, theta_bound=-1.0)
    with pytest.raises(ValueError, match="n must be an integer"):
        recommend_c(0.5, 3, method="output", privacy="pure", budget=1.0)


def test_wu_says_it_picks_its_own_c():
    rec = recommend_c(5_000, 6, method="wu", privacy="pure", budget=0.3)
    measurement = dpci.ReleaseSpec("wu", "pure", 0.3).measure()
    assert rec.c == pytest.approx(methods.get("wu").own_c(measurement, 5_000, 6))
    assert "picks its own c" in rec.advice


# --- what it recommends --------------------------------------------------------------------------------
@pytest.mark.parametrize("n, budget", [(300, 2.0), (5_000, 0.3), (30_162, 1.0)])
def test_objective_perturbation_stays_clear_of_its_bound(n, budget):
    """At the recommended c, eps' >= eps1/2 (the rule that keeps its coverage) and the method has no caution."""
    method = methods.get("objective")
    measurement = dpci.ReleaseSpec("objective", "pure", budget).measure()
    for estimand in ("regularised", "unregularised"):
        rec = quiet(recommend_c, n, 3, method="objective", privacy="pure", budget=budget, estimand=estimand)
        assert rec.c >= c_for_epsilon_prime(measurement.allocation.coef_epsilon, n, 0.25)
        assert method.advice(measurement.at_c(rec.c), n) is None


def test_the_recommendation_minimises_its_score_over_the_c_searched():
    """For theta: the smallest score searched. For theta_0(c): within NEAR_BEST of the smallest, and no c
    searched below it comes as near (the least penalty among the near-best)."""
    from dpci.recommend.search import NEAR_BEST

    for estimand in ({"estimand": "regularised"}, BIASED):
        rec = quiet(recommend_c, **{**FACTS, **estimand})
        grid, scores = rec.curve[0], rec.curve[2]
        if estimand is BIASED:
            assert rec.score <= np.min(scores) * (1 + 1e-9)
        else:
            limit = np.min(scores) * (1 + NEAR_BEST)
            assert rec.score <= limit * (1 + 1e-9)
            assert not np.any(scores[grid < rec.c / 10 ** (1 / 3)] <= limit)  # nothing a grid step smaller
        assert rec.coverage >= 0.94  # it keeps its level
        # and it is far narrower than the paper's default c = 1e-3 here (privacy noise dominates there)
        at_paper = quiet(predict, **{**FACTS, **estimand}, c=1e-3)
        assert rec.width < at_paper.width / 2


@pytest.mark.parametrize("dataset", ["synthetic", "adult"])
@pytest.mark.parametrize("method", ["objective", "output"])
def test_a_c_that_buys_its_width_by_shrinking_is_never_recommended(dataset, method):
    """For theta_0(c), the width alone keeps falling as c grows (theta_0(c) shrinks to 0 with it). The
    recommendation moves no coefficient of the stand-in by more than MAX_MOVE of itself; on Adult's rows
    (huge unpenalised coefficients along near-flat directions, in public-bound units) no c does, and it says
    so instead of recommending one."""
    from dpci.recommend.search import MAX_MOVE, moved

    X, _, stand_in = _shipped(dataset)
    facts = dict(method=method, privacy="pure", budget=1.0, stand_in=stand_in, estimand="regularised")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec = recommend_c(len(X), X.shape[1], **facts)
    ref = reference(X.shape[1], stand_in=stand_in)
    assert rec.moved == pytest.approx(moved(ref.theta0(rec.c, dpci.LogisticLoss()), ref.theta), rel=1e-6)
    if dataset == "synthetic":
        assert rec.useful and rec.moved <= MAX_MOVE and not caught
    else:
        assert not rec.useful and rec.moved > MAX_MOVE and "moves a coefficient of θ₀(c)" in rec.advice
        assert any(w.category is dpci.WideIntervalWarning for w in caught)


def test_the_unregularised_interval_is_wider_by_twice_the_bias_bound():
    regular = predict(**FACTS, c=0.01)
    widened = predict(**{**FACTS, **BIASED}, c=0.01)
    assert regular.bias is None
    assert widened.bias == pytest.approx(predicted_bias(0.01, dpci.LogisticLoss(), reference(6), None))
    assert widened.width == pytest.approx(regular.width + 2 * widened.bias, rel=1e-12)


# --- the bias bound's algebra (the proven bound from a release: tests/test_bias_bound.py) ---------------
@pytest.mark.parametrize(
    "theta", [(1.5, -1.0, 0.3), (0.8, -0.4, 0.2), (2.0, 1.0, -1.0, 0.5, 0.3), (1.5, -1.0, 0.5, -0.3, 0.8, 0.3)]
)
@pytest.mark.parametrize("c", [1e-4, 1e-3, 1e-2, 1e-1])
def test_the_bias_bound_holds_on_known_truth(theta, c):
    """||theta_0(c) - theta|| <= min(B, 2cB / (mu + 2c)) with B = ||theta|| and the exact mu of the synthetic
    design (its lambda_min times f''(B)), theta_0 exact (population quadrature)."""
    theta = np.array(theta)
    actual = np.linalg.norm(population_theta0(theta, c) - theta)
    ref = reference(len(theta), guess=theta)
    bound = predicted_bias(c, dpci.LogisticLoss(), ref, float(np.linalg.norm(theta)))
    assert actual <= bound
    assert bound <= np.linalg.norm(theta)  # never worse than the trivial bound
    assert bound < 4 * actual + 1e-12  # and not vacuous: within a small factor here


def test_the_design_eigenvalue_is_exact():
    for d in (2, 4, 11):
        X, _ = make_synthetic_logistic(200_000, np.ones(d), random_state=d)
        assert design_min_eigenvalue(d) == pytest.approx(np.linalg.eigvalsh(X.T @ X / len(X))[0], rel=0.02)


def test_a_stand_in_is_a_reference_too():
    X, y = make_synthetic_logistic(3_000, [1.0, -0.5, 0.2], random_state=4)
    ref = reference(3, stand_in=(X, y))
    assert ref.d == 3 and np.linalg.norm(ref.theta - [1.0, -0.5, 0.2]) < 0.3
    rec = quiet(recommend_c, 3_000, 3, method="output", privacy="zcdp", budget=0.2, stand_in=(X, y))
    assert rec.c > 0
    with pytest.raises(ValueError, match="the stand-in has 3 columns"):
        recommend_c(3_000, 4, method="output", privacy="zcdp", budget=0.2, stand_in=(X, y))


# --- the width and coverage model ------------------------------------------------------------------------
@pytest.mark.parametrize("d, share", [(3, 1.0), (6, 0.5), (11, 0.8)])
def test_half_widths_match_independent_draws(d, share):
    """The tabulated quantile of a Gaussian-plus-spherical-Laplace coordinate against 400,000 fresh draws
    (the quantile's Monte Carlo error there is below 0.5%)."""
    law = NoiseLaw("spherical_laplace", 2.0)
    weight = np.sqrt(share / law.coordinate_variance(d))
    offset = OffsetLaw(np.full(d, np.sqrt(1 - share)), np.full(d, weight), law)
    rng = np.random.default_rng(99)
    draws = np.sqrt(1 - share) * rng.standard_normal(400_000) + weight * law.sample(rng, d, 400_000)[:, 0]
    assert half_widths(offset, 0.05)[0] == pytest.approx(np.quantile(np.abs(draws), 0.95), rel=0.02)
    shift = np.full(d, 0.3)
    half = np.full((1, d), 1.2)
    assert coverage(offset, half, shift)[0] == pytest.approx(np.mean(np.abs(draws + 0.3) <= 1.2), abs=0.01)


def test_the_naive_interval_is_predicted_to_under_cover_where_privacy_noise_dominates():
    naive = quiet(predict, **{**FACTS, "method": "naive"}, c=1e-3)
    paper = quiet(predict, **FACTS, c=1e-3)
    assert naive.coverage < 0.8 and paper.coverage > 0.93


@pytest.mark.slow
@pytest.mark.parametrize("method, privacy, budget", [("output", "zcdp", 0.05), ("objective", "pure", 0.3)])
def test_predicted_width_and_coverage_match_simulation(method, privacy, budget):
    """60 releases on known-truth data at the recommended c: the median width within 20% of the predicted
    mean width, and coverage of theta_0(c) within 3 standard errors of the prediction."""
    n, theta = 5_000, np.array([1.5, -1.0, 0.5, -0.3, 0.8, 0.3])
    rec = quiet(recommend_c, n, 6, method=method, privacy=privacy, budget=budget, estimand="regularised")
    truth = population_theta0(theta, rec.c)
    rng = np.random.default_rng(5)
    widths, hits = [], []
    for _ in range(60):
        X, y = make_synthetic_logistic(n, theta, random_state=rng)
        spec = dpci.ReleaseSpec(method=method, privacy=privacy, budget=budget, c=rec.c, n_samples=2_000)
        from dpci.solver import margin_rows

        conf = spec.measure().run(margin_rows(X, y), rng).conf_int
        widths.append(conf[:, 1] - conf[:, 0])
        hits.append((conf[:, 0] <= truth) & (truth <= conf[:, 1]))
    assert np.median(widths) == pytest.approx(rec.width, rel=0.2)
    share = np.mean(hits)
    se = np.sqrt(0.95 * 0.05 / (60 * 6)) * 2  # rows of a release are correlated: a design effect of 4
    assert abs(share - rec.coverage) < 3 * se


# --- the estimators ----------------------------------------------------------------------------------------
def test_conf_int_names_its_estimand_and_widens_for_the_unregularised():
    X, y = make_synthetic_logistic(3_000, [1.0, -0.5, 0.2], random_state=8)
    model = dpci.PrivateLogisticRegression(
        mechanism="output", privacy="zcdp", budget=0.5, c=0.01, classes=(-1, 1), random_state=0
    ).fit(X, y)
    regular = model.conf_int(estimand="regularised")
    free = model.conf_int(estimand="unregularised", theta_bound=2.0)
    bias = free.attrs["bias_bound"]
    assert regular.attrs["bias_bound"] is None and bias == dpci.bias_bound(model.release_, 2.0)
    paid = model.release_.interval(0.05 - bias.delta)  # the bound's failure probability paid from alpha
    np.testing.assert_allclose(free["lower"], paid[:, 0] - bias.value)
    np.testing.assert_allclose(free["upper"], paid[:, 1] + bias.value)
    assert "θ₀(c)" in regular.attrs["estimand"] and "without penalty" in free.attrs["estimand"]
    assert "intervals for: the coefficients without penalty" in str(model.summary())  # theta by default


def test_kulkarni_intervals_are_for_the_unregularised_coefficients():
    X, y = make_synthetic_logistic(2_000, [1.0, -0.5], random_state=3)
    model = dpci.PrivateLogisticRegression(
        method="kulkarni", privacy="zcdp", budget=0.5, classes=(-1, 1), random_state=0
    ).fit(X, y)
    assert "without penalty" in model.conf_int().attrs["estimand"]
    pd_free = model.conf_int(estimand="unregularised")
    np.testing.assert_allclose(pd_free["lower"], model.conf_int()["lower"])  # nothing to widen
    with pytest.raises(ValueError, match="has no c"):
        model.conf_int(estimand="regularised")


@pytest.mark.parametrize("method, privacy", methods.pairs())
def test_every_registered_method_gets_a_recommendation_or_a_reason(method, privacy):
    """The contract: a method with a c gets one from its own noise law (a Wu-style method its own c); a
    method without c is refused with that reason."""
    budget = 1.0 if privacy == "pure" else 0.5
    if not methods.get(method).uses_c:
        with pytest.raises(ValueError, match="no regulariser c"):
            recommend_c(5_000, 4, method=method, privacy=privacy, budget=budget)
        return
    rec = quiet(recommend_c, 5_000, 4, method=method, privacy=privacy, budget=budget)
    assert 1e-6 <= rec.c <= 1.0 and rec.width > 0 and np.all(np.isfinite(rec.widths))
    assert rec.coverage >= 0.94  # the recommendation keeps the level (the naive one by choosing c for it)


def test_each_method_says_which_estimand_its_interval_is_for_and_how_much_theta_widens_it():
    from dpci.recommend import estimand_bias, interval_estimand, theta_interval

    paper, no_c = (
        methods.get("objective"),
        next(methods.get(m) for m in methods.available() if not methods.get(m).uses_c),
    )
    assert interval_estimand(paper) == "regularised" and interval_estimand(no_c) == "unregularised"
    with pytest.raises(ValueError, match="has no c"):
        interval_estimand(no_c, "regularised")  # the estimators refuse it
    assert interval_estimand(no_c, "regularised", strict=False) == "unregularised"  # a page shows what it is
    loss = dpci.LogisticLoss()
    X, y = make_synthetic_logistic(2_000, [1.0, -0.5, 0.2], random_state=4)
    release = dpci.ReleaseSpec("objective", "pure", 1.0, None, loss, 1e-3, 0.05, 1_000, 0).release(X, y)
    assert estimand_bias(paper, "regularised", release, loss) is None
    assert estimand_bias(no_c, "unregularised", release, loss) is None  # its interval is for theta already
    bias = estimand_bias(paper, "unregularised", release, loss, theta_bound=2.0)
    assert bias == dpci.bias_bound(release, 2.0) and bias.value > 0
    assert np.array_equal(theta_interval(release, None), release.interval())


# --- c for the interval for theta from the release (dpci.theta) -----------------------------------------
SYNTHETIC_TRUTH = np.append(np.resize((1.5, -1.0, 0.5, -0.3, 0.8, 0.2, -0.6, 1.0, -1.2, 0.4), 10), 0.3)


def _shipped(dataset):
    """A shipped dataset's rows and 4,000 of them as the public stand-in (the app's prediction rows)."""
    if dataset == "adult":
        from dpci.data import load_adult

        adult = load_adult(d=10)
        X, y = adult.X, adult.y
    else:
        X, y = make_synthetic_logistic(50_000, SYNTHETIC_TRUTH, random_state=20261122)
    rows = np.random.default_rng(0).choice(len(X), 4_000, replace=False)
    return X, y, (X[rows], y[rows])


def _realised(X, y, method, budget, c, seeds):
    """Widths of the default interval (for theta) over releases with these seeds; inf where none is given."""
    widths = []
    for seed in seeds:
        model = dpci.PrivateLogisticRegression(
            mechanism=method, privacy="pure", budget=budget, c=c, classes=(-1, 1), random_state=seed
        )
        ci = quiet(model.fit, X, y).conf_int()
        widths.append(float(np.mean(ci["upper"] - ci["lower"])))
    return np.array(widths)


def _check_prediction(dataset, method, budget, seeds):
    X, y, stand_in = _shipped(dataset)
    rec = quiet(recommend_c, len(X), X.shape[1], method=method, privacy="pure", budget=budget, stand_in=stand_in)
    assert rec.estimand == "unregularised"
    realised = _realised(X, y, method, budget, rec.c, seeds)
    given = np.isfinite(realised)
    if not np.isfinite(rec.width):  # predicted: no interval for theta; most releases must agree
        assert not rec.useful and "gives an interval for θ" in rec.advice
        assert given.mean() <= 0.5, realised
        return
    # predicted: an interval; most releases give one, and their mean width is within 2x of the prediction
    assert given.mean() >= 0.5, realised
    ratio = realised[given].mean() / rec.width
    assert 0.5 <= ratio <= 2.0, (rec.c, rec.width, realised)
    # the c is chosen for theta's interval, not bought by shrinking: theta_0(c) is within 25% of theta
    assert rec.shrinkage <= 0.25 * np.max(np.abs(quiet(reference, X.shape[1], stand_in=stand_in).theta))


@pytest.mark.parametrize("budget", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("method", ["objective", "output"])
@pytest.mark.parametrize("dataset", ["synthetic", "adult"])
def test_theta_recommendation_predicts_its_width_on_every_shipped_dataset(dataset, method, budget):
    """The default recommendation (for theta) on each shipped dataset's public rows predicts the realised
    width within 2x, or predicts that no release gives an interval for theta, and the releases agree
    (six releases: the mean width's sampling error is a few per cent; the factor 2 is the promise)."""
    _check_prediction(dataset, method, budget, seeds=range(6))


def test_the_default_reference_says_which_public_fact_it_needs():
    with pytest.warns(dpci.ReferenceWarning, match=r"knows nothing of your data.*stand_in=\(X, y\)"):
        recommend_c(5_000, 3, method="objective", privacy="pure", budget=1.0)
    X, y = make_synthetic_logistic(2_000, [1.0, -0.5, 0.2], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpci.ReferenceWarning)
        recommend_c(5_000, 3, method="objective", privacy="pure", budget=1.0, stand_in=(X, y))
