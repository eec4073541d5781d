"""Accuracy-first searches (dpci.accuracy_first): the noise-reduction paths' laws, the ex-post
spend against hand values, the stopping rule reading released quantities only, the baselines'
spend, bad input, speed on Adult and (slow) coverage on known-truth data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpci.accuracy_first.baselines as baselines_module
import dpci.accuracy_first.search as search_module
from dpci import ReleaseSpec
from dpci.accuracy_first import (
    accuracy_first,
    brownian_expost_epsilon,
    brownian_path,
    budget_grid,
    laplace_path,
)
from dpci.accuracy_first.noise_reduction import quantity_scale
from dpci.data import make_synthetic_logistic
from dpci.mechanisms import matrix_noise_law, output_noise_law
from dpci.sensitivity import output_sensitivity


def _spec(privacy="pure", budget=1.0, **fields):
    """The searched release: output perturbation, the search's most ``budget``, m = 2,000."""
    return ReleaseSpec("output", privacy, budget, **dict(dict(n_samples=2_000), **fields))


GRID = np.array([0.2, 0.5, 1.0, 3.0, 8.0])
#: with the data below (n = 5,000, c = 1e-3): every step's noise leaves room for TARGET (so every step
#: is checked) and TARGET is below the non-private widths (0.14-0.31), so no step meets it
ALL = np.array([30.0, 60.0, 120.0, 240.0, 480.0])
TARGET = 0.12
THETA = np.array([1.0, -0.5, 0.5, 0.3])


@pytest.fixture(scope="module")
def data():
    return make_synthetic_logistic(5_000, THETA, random_state=3)


# --- the joint law of the noise-reduction paths ----------------------------------------------
def test_laplace_path_marginals_are_the_one_shot_laplace_at_every_step():
    rng = np.random.default_rng(11)
    path = laplace_path(GRID, 4_000, rng)  # 4,000 independent coordinates
    for t, b in enumerate(GRID):
        assert stats.kstest(path[t], stats.laplace(scale=1.0 / b).cdf).pvalue > 0.01, t
    # and not some other scale: the step-0 draws are not Lap(1/b_1)
    assert stats.kstest(path[0], stats.laplace(scale=1.0 / GRID[1]).cdf).pvalue < 1e-6


def test_laplace_path_flips_an_independent_coin_per_coordinate():
    """ERRATA: one shared coin makes the joint noise non-Laplace. Keep-indicators of two coordinates
    at the same step are independent, with P(keep) = (b_t/b_{t+1})^2."""
    rng = np.random.default_rng(5)
    keeps = np.array([laplace_path(GRID[:2], 2, rng) for _ in range(3_000)])  # (reps, 2 steps, 2 coords)
    kept = keeps[:, 0, :] == keeps[:, 1, :]
    p = (GRID[0] / GRID[1]) ** 2
    assert abs(kept.mean() - p) < 0.03
    assert abs(np.corrcoef(kept[:, 0], kept[:, 1])[0, 1]) < 0.08
    # the sum of two coordinates has the law of the sum of two independent Laplaces (a shared coin
    # would put an atom-like excess of "both kept" and change its spread)
    ref = rng.laplace(0, 1 / GRID[0], (20_000, 2)).sum(axis=1)
    assert stats.ks_2samp(keeps[:, 0, :].sum(axis=1), ref).pvalue > 0.01


def test_brownian_path_marginals_and_covariance_are_the_brownian_motion_at_decreasing_times():
    rng = np.random.default_rng(2)
    path = brownian_path(GRID, 20_000, rng)
    times = 1.0 / (2.0 * GRID)
    for t, T in enumerate(times):  # N(0, 1/(2 b_t)): the Gaussian mechanism at rho = b_t, sensitivity 1
        assert stats.kstest(path[t], stats.norm(scale=math.sqrt(T)).cdf).pvalue > 0.01, t
    cov = np.cov(path)
    assert np.allclose(cov, np.minimum.outer(times, times), atol=0.05 * times[0])  # Cov B(s), B(t) = min(s, t)


def test_each_quantity_noise_at_a_step_is_the_one_shot_mechanism_at_that_budget():
    """Scaled unit paths give the one-shot noise scales: WKL's Gaussian sigmas (Algorithm 4 line 6,
    Algorithm 2 line 5), and Laplace with the L1 sensitivity sqrt(#entries) x the L2 sensitivity."""
    n, c, d, share, b = 1_000, 1e-2, 3, 0.8, 0.7
    s2 = output_sensitivity(n, c)
    sd_unit = 1.0 / math.sqrt(2.0 * b)  # sd of B(1/(2b))
    assert quantity_scale("zcdp", s2, share, d) * sd_unit == pytest.approx(
        output_noise_law(n, c, share * b, "zcdp").scale
    )
    assert quantity_scale("zcdp", 0.01, share, d * d) * sd_unit == pytest.approx(
        matrix_noise_law(0.01, share * b, "zcdp").scale
    )
    assert quantity_scale("pure", s2, share, d) / b == pytest.approx(math.sqrt(3) * 0.1 / 0.56)  # hand value
    assert quantity_scale("pure", 0.01, share, d * d) / b == pytest.approx(3 * 0.01 / 0.56)


# --- the ex-post spend ------------------------------------------------------------------------
def test_ex_post_spend_is_the_last_step_reached_not_the_sum(data):
    X, y = data
    met = accuracy_first(X, y, _spec("pure", 8.0), target=1e6, grid=GRID, random_state=0)
    assert met.met and met.budget == 0.2 and met.release.theta.shape == (4,)
    assert [s.epsilon for s in met.spend.steps] == pytest.approx([0.16, 0.02, 0.02])  # Table 2's (0.8, 0.1, 0.1)
    never = accuracy_first(
        X,
        y,
        _spec("pure", 480.0),
        target=TARGET,
        grid=ALL,
        random_state=0,
    )
    assert not never.met and never.budget == 480.0 and all(p.checked for p in never.path)
    assert never.spend.epsilon == pytest.approx(480.0)  # not 30 + 60 + 120 + 240 + 480 = 930
    assert [s.epsilon for s in never.spend.steps] == pytest.approx([384.0, 48.0, 48.0])
    assert never.approx_dp().epsilon == pytest.approx(480.0) and never.approx_dp().delta == 0.0
    hopeless = accuracy_first(X, y, _spec("pure", 8.0), target=1e-4, grid=GRID, random_state=0)
    assert not hopeless.met and hopeless.spend.epsilon == pytest.approx(8.0)  # no step can meet it: only the last
    assert [p.checked for p in hopeless.path] == [False, False, False, False, True]


def test_zcdp_ex_post_epsilon_hand_values_and_the_ex_ante_charge(data):
    L = math.log(1e6)
    assert brownian_expost_epsilon(0.5, 0.5, 1e-6) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * L))  # = Prop. 2
    assert brownian_expost_epsilon(0.5, 0.5, 1e-6) == pytest.approx(5.7565, abs=1e-4)
    assert brownian_expost_epsilon(2.0, 0.5, 1e-6) == pytest.approx(2.0 + math.sqrt(0.5 * L) + 2.0 * math.sqrt(L / 0.5))
    X, y = data
    r = accuracy_first(
        X,
        y,
        _spec("zcdp", 8.0),
        target=1e-4,
        grid=GRID,
        random_state=0,
        design_budget=8.0,
    )
    assert r.spend.rho == pytest.approx(8.0) and r.spend.epsilon is None
    assert r.approx_dp(1e-6).epsilon == pytest.approx(8.0 + 2 * math.sqrt(8.0 * L))
    assert r.charged.rho == pytest.approx(8.0)  # admitted at its most before it ran (the last grid step)
    r2 = accuracy_first(
        X,
        y,
        _spec("zcdp", 8.0),
        target=1e-4,
        grid=GRID,
        random_state=0,
        design_budget=1.0,
    )
    assert r2.approx_dp(1e-6).epsilon > r.approx_dp(1e-6).epsilon  # designed away from where it stopped


def test_doubling_pays_the_sum_of_its_releases(data):
    X, y = data
    r = accuracy_first(
        X,
        y,
        _spec("pure", 480.0),
        target=TARGET,
        grid=ALL,
        strategy="doubling",
    )
    assert [p.budget for p in r.path] == pytest.approx([30.0, 60.0, 120.0, 240.0, 480.0])
    assert r.releases == 5 and r.spend.epsilon == pytest.approx(930.0) and not r.met
    assert [s.epsilon for s in r.spend.steps] == pytest.approx([744.0, 93.0, 93.0])
    z = accuracy_first(
        X,
        y,
        _spec("zcdp", 100.0),
        target=TARGET,
        grid=ALL,
        strategy="doubling",
    )
    assert z.spend.rho == pytest.approx(30.0 + 60.0) and z.spend.epsilon is None
    one = accuracy_first(
        X,
        y,
        _spec("pure", 8.0),
        target=1e6,
        grid=GRID,
        random_state=0,
        strategy="doubling",
    )
    assert one.releases == 1 and one.spend.epsilon == pytest.approx(0.2)


def test_fixed_budget_spends_the_one_release_it_chose_from_the_stand_in(data):
    X, y = data
    r = accuracy_first(
        X,
        y,
        _spec("zcdp", 8.0),
        target=0.6,
        grid=GRID,
        random_state=0,
        strategy="fixed",
    )
    predicted = r.extra["predicted"]
    chosen = int(np.flatnonzero(predicted <= 0.6)[0])
    assert r.budget == GRID[chosen] and r.spend.rho == pytest.approx(GRID[chosen]) and len(r.path) == 1


# --- the stopping rule reads released quantities only -------------------------------------------
class Sealable:
    """Rows that raise if read once sealed."""

    def __init__(self, values):
        self.values, self.sealed = np.asarray(values), False

    def __array__(self, dtype=None, copy=None):
        if self.sealed:
            raise AssertionError("the data were read after the first release")
        return self.values if dtype is None else self.values.astype(dtype)

    def __len__(self):
        return len(self.values)


def _guard(monkeypatch, sealed):
    """Make every data-reading step (the fit, the matrices, the data themselves) raise once sealed."""
    for module in (search_module, baselines_module):
        for name in ("minimise_erm", "hessian_and_covariance"):
            original = getattr(module, name)

            def guarded(*args, _original=original, **kwargs):
                if sealed[0].sealed:
                    raise AssertionError("the data were read after the first release")
                return _original(*args, **kwargs)

            monkeypatch.setattr(module, name, guarded)


@pytest.mark.parametrize("privacy", ["pure", "zcdp"])
def test_the_stopping_rule_reads_no_data_after_the_first_release(data, monkeypatch, privacy):
    X, y = data
    Xs, ys = Sealable(X), Sealable(y)
    _guard(monkeypatch, [Xs])
    steps = []

    def seal(step):
        steps.append(step)
        Xs.sealed = ys.sealed = True

    r = accuracy_first(
        Xs,
        ys,
        _spec(privacy, 480.0),
        target=TARGET,
        grid=ALL,
        random_state=0,
        callback=seal,
    )
    assert len(steps) == 5 and not r.met  # every step checked after the seal, and none read the data


def test_the_guard_catches_a_search_that_reads_the_data_again(data, monkeypatch):
    """Doubling reads the data at every fresh release: the same guard fails it (the test can fail)."""
    X, y = data
    Xs = Sealable(X)
    _guard(monkeypatch, [Xs])

    def seal(step):
        Xs.sealed = True

    with pytest.raises(AssertionError, match="read after the first release"):
        accuracy_first(
            Xs,
            y,
            _spec("pure", 480.0),
            target=TARGET,
            grid=ALL,
            strategy="doubling",
            callback=seal,
        )


# --- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(target=0.0), "target must be a positive"),
        (dict(target=-1.0), "target must be a positive"),
        (dict(target=float("nan")), "target must be a positive"),
        (dict(grid=[]), "grid is empty"),
        (dict(grid=[1.0, 0.5]), "strictly increasing"),
        (dict(budget=0.1, grid=[0.5, 1.0]), "below the grid's first step"),
        (dict(method="objective", split=None), "output perturbation only"),
        (dict(strategy="bisection"), "strategy must be one of"),
        (dict(coefficients=[7]), "indices of the 4 coefficients"),
        (dict(privacy="approx"), "privacy"),
    ],
)
def test_bad_input_gives_a_clear_value_error(data, kwargs, match):
    X, y = data
    search = dict(target=0.5) | {k: v for k, v in kwargs.items() if k in ("target", "grid", "strategy", "coefficients")}
    fields = {k: v for k, v in kwargs.items() if k not in search}
    with pytest.raises(ValueError, match=match):
        accuracy_first(X, y, _spec().replace(**fields), **search)


def test_default_grid_is_twenty_geometric_steps():
    grid = budget_grid(2.0)
    assert len(grid) == 20 and grid[-1] == pytest.approx(2.0) and grid[0] == pytest.approx(0.002)
    assert np.allclose(grid[1:] / grid[:-1], grid[1] / grid[0])


# --- speed on Adult ---------------------------------------------------------------------------
def test_a_twenty_step_search_on_adult_takes_under_two_seconds():
    from bench.bench_accuracy_first import adult_speed

    for privacy, (search, fit, checked) in adult_speed(repeat=1).items():
        assert checked == 20, privacy
        assert search < 2.0, (privacy, search, fit)


# --- coverage on known-truth data (the table of docs/accuracy-first.md, smaller) -----------------
@pytest.mark.slow
@pytest.mark.parametrize("privacy", ["pure", "zcdp"])
def test_the_final_interval_covers_theta0(privacy):
    from bench.bench_accuracy_first import SETTINGS, simulate

    _, targets = SETTINGS[privacy]
    for target in (targets[0], targets[-1]):
        res = simulate(privacy, target, reps=150, seed=1, strategies=("noise_reduction",))
        cov = res["noise_reduction"]["coverage"]
        assert cov >= 0.92, (privacy, target, cov)  # nominal 0.95; SE ~ 0.01


def test_noise_reduction_spends_less_than_doubling_on_average(data):
    X, y = data
    rng = np.random.default_rng(0)
    nr, dbl = [], []
    for _ in range(5):
        nr.append(accuracy_first(X, y, _spec("zcdp", 5.0), target=0.6, random_state=rng).spend.rho)
        dbl.append(
            accuracy_first(
                X,
                y,
                _spec("zcdp", 5.0),
                target=0.6,
                random_state=rng,
                strategy="doubling",
            ).spend.rho
        )
    assert np.mean(nr) < np.mean(dbl)


@pytest.mark.parametrize("strategy, hand", [("noise_reduction", 8.0), ("doubling", 15.0), ("fixed", None)])
def test_every_strategy_is_charged_its_ex_ante_most_before_it_runs(data, strategy, hand):
    from dpci.ledger import Ledger

    X, y = data
    grid = [1.0, 2.0, 4.0, 8.0]
    with Ledger(budget="epsilon=100") as watch:
        r = accuracy_first(
            X,
            y,
            _spec("pure", 8.0),
            target=50.0,
            grid=grid,
            strategy=strategy,
        )
    status = watch.status()
    assert status.releases == 1 and status.spent == pytest.approx(r.charged.epsilon)
    if hand is not None:  # noise reduction: the last step; doubling: 1 + 2 + 4 + 8 (every release it may make)
        assert r.charged.epsilon == pytest.approx(hand)
    assert r.charged.epsilon >= r.spend.epsilon - 1e-12  # never less than what the outcome realised


def test_a_search_the_budget_cannot_pay_is_refused_before_it_runs(data):
    from dpci.ledger import BudgetExceeded, Ledger

    X, y = data
    rng = np.random.default_rng(0)
    start = rng.bit_generator.state
    with Ledger(budget="epsilon=5") as watch, pytest.raises(BudgetExceeded, match="costs ε = 8"):
        accuracy_first(
            X,
            y,
            _spec("pure", 8.0),
            target=0.3,
            grid=GRID,
            random_state=rng,
        )
    assert rng.bit_generator.state == start and watch.admissions == []
