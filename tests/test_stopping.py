"""A bootstrap that stops once precise enough: the stopping rule of
dpci.experiments.stopping in variability and coverage runs, its Monte Carlo error measured by
repetition, its independence of chunking and workers, and its refusals."""

import math

import numpy as np
import pytest

from dpci import LogisticLoss, ReleaseSpec
from dpci.data.synthetic import make_synthetic_logistic
from dpci.experiments import bootstrap, stopping
from dpci.experiments.bootstrap import coverage, iter_variability, variability_intervals
from dpci.experiments.sweeps import ALL, iter_split_sweep

SPEC = ReleaseSpec("output", "zcdp", 0.5, loss=LogisticLoss(), c=1e-3)  # near-normal replicates


@pytest.fixture(scope="module")
def data():
    return make_synthetic_logistic(400, [1.0, -0.5, 0.3], random_state=7)


def test_a_variability_run_stops_early_and_says_so(data):
    X, y = data
    states = list(iter_variability(X, y, SPEC, n_replicates=5_000, precision=0.03, random_state=1))
    last = states[-1]
    assert last.converged and last.finished and last.stopped_early
    assert last.done < 5_000 and last.done % stopping.VARIABILITY_STEP == 0 and last.total == 5_000
    assert last.done >= stopping.normal_replicates(0.05, 0.03)  # Andrews-Buchinsky's step 1: 517
    assert last.estimates.shape == (last.done, 3)
    assert last.achieved_precision.shape == (2,) and last.achieved_precision.max() <= 0.03
    assert not any(s.finished for s in states[:-1]) and [s.done for s in states] == sorted(s.done for s in states)
    assert last.summary().startswith(f"done: {last.done:,} replicates, endpoints ±")
    assert last.summary().endswith("% of the width") and "short" not in last.summary()
    assert "of at most 5,000 replicates" in states[0].summary() and "(target ±3%)" in states[0].summary()
    # the check at the stop used the replicates before it only: a fixed run of that many is the same
    fixed = variability_intervals(X, y, SPEC, n_replicates=last.done, random_state=1)
    np.testing.assert_array_equal(last.estimates, fixed.estimates)
    np.testing.assert_array_equal(last.bounds, fixed.bounds)


def test_the_predicted_stop_is_near_where_the_run_stops(data):
    """Andrews-Buchinsky's prediction from the replicates so far (errors fall as 1/sqrt(B)): always between
    the replicates done and the most allowed; from half-way on (what the app uses it for: is the run
    about to end?) within a factor 1.3 of where the run stops, over three seeds; the stopped state
    predicts itself; without a target, the most replicates."""
    X, y = data
    for seed in (1, 2, 3):
        states = list(iter_variability(X, y, SPEC, n_replicates=5_000, precision=0.03, random_state=seed))
        stop = states[-1].done
        assert states[-1].predicted_total == stop
        assert all(s.done <= s.predicted_total <= 5_000 for s in states)
        late = [s for s in states[:-1] if s.done >= stop / 2]
        assert late, [s.done for s in states]
        for s in late:
            assert stop / 1.3 <= s.predicted_total <= 1.3 * stop, (seed, s.done, s.predicted_total, stop)
    plain = next(iter_variability(X, y, SPEC, n_replicates=300, random_state=1))
    assert plain.finished or plain.predicted_total == 300


def test_the_stopped_endpoints_monte_carlo_error_is_below_the_target(data):
    """30 runs with different seeds on the same data: the spread of each endpoint across them is
    the Monte Carlo error of the run that stopped, and it is at most the target times the width.
    With 30 runs a standard deviation equal to its target exceeds 1.34 times it with probability
    0.005 (chi-square, 29 degrees of freedom); the seeds are fixed, so the test is deterministic."""
    X, y = data
    target, seeds = 0.04, range(30)
    runs = [variability_intervals(X, y, SPEC, n_replicates=4_000, precision=target, random_state=s) for s in seeds]
    assert all(r.converged for r in runs) and max(r.done for r in runs) < 4_000
    bounds = np.array([r.bounds for r in runs])  # (runs, d, 2)
    width = (bounds[..., 1] - bounds[..., 0]).mean(axis=0)[:, None]
    ratio = bounds.std(axis=0, ddof=1) / width / target
    print(f"\nreplicates {sorted(r.done for r in runs)}; sd / (target x width) per endpoint:\n{ratio.round(2)}")
    assert ratio.max() <= 1.34
    assert np.sqrt((ratio**2).mean()) <= 1.0  # pooled over the six endpoints


@pytest.mark.parametrize("kind", ["normal", "laplace", "gamma"])
def test_the_rule_meets_its_target_on_known_distributions(kind):
    """The rule alone, on draws whose quantiles are known: 400 seeds, one column each, so a single
    endpoint binds (the hardest case for a rule taking the largest error over endpoints). The
    realised standard deviation of the stopped endpoints is at most the target (with 400 seeds
    its estimate is within 10% at 3 standard errors)."""
    target, alpha, most = 0.03, 0.05, 6_000
    draw = dict(
        normal=lambda rng, k: rng.standard_normal(k),
        laplace=lambda rng, k: rng.laplace(size=k),
        gamma=lambda rng, k: rng.gamma(3.0, size=k),
    )[kind]
    truth = np.quantile(draw(np.random.default_rng(0), 2_000_000), [alpha / 2, 1 - alpha / 2])
    first = stopping.first_checkpoint(
        stopping.VARIABILITY_FIRST, most, stopping.VARIABILITY_STEP, stopping.normal_replicates(alpha, target)
    )
    error_of = lambda rows: stopping.largest_endpoint_error(rows, alpha)  # noqa: E731
    rule = stopping.Rule(target, first, stopping.VARIABILITY_STEP, most, error_of)
    ends, stops = [], []
    for seed in range(1, 401):
        rows = draw(np.random.default_rng(seed), most)[:, None]
        stop, _ = stopping.run_checks(rows, rule.first, rule)
        stops.append(stop or most)
        ends.append(np.quantile(rows[: stops[-1], 0], [alpha / 2, 1 - alpha / 2]))
    ratio = np.std(ends, axis=0, ddof=1) / (truth[1] - truth[0]) / target
    print(f"\n{kind}: median stop {np.median(stops):.0f}, sd / (target x width) {ratio.round(3)}")
    assert np.median(stops) < most and ratio.max() <= 1.0


def test_the_quantile_standard_error_estimate_is_close_to_the_truth():
    """The spacing estimate (Andrews and Buchinsky's step 2) against the standard deviation of the
    sample quantile over 2,000 seeds: close on average, over by less than 10% at B = 2,000."""
    estimates, quantiles = [], []
    for seed in range(2_000):
        draws = np.random.default_rng(seed).standard_normal((2_000, 1))
        estimates.append(stopping._quantile_se(np.sort(draws.T, axis=1), 0.975)[0])
        quantiles.append(np.quantile(draws, 0.975))
    ratio = np.mean(estimates) / np.std(quantiles)
    assert 0.95 <= ratio <= 1.1


def test_stopping_does_not_depend_on_chunks(data, monkeypatch):
    X, y = data
    kw = dict(n_replicates=5_000, precision=0.03, random_state=4)
    runs = [variability_intervals(X, y, SPEC, chunk_size=size, **kw) for size in (32, 96, 700)]
    for other in runs[1:]:
        assert other.done == runs[0].done
        np.testing.assert_array_equal(other.estimates, runs[0].estimates)
    # inline (n_jobs=1) a run computes no chunk past the one holding its last check
    calls = []
    chunk = bootstrap._variability_chunk
    monkeypatch.setattr(bootstrap, "_variability_chunk", lambda *a: calls.append(a[3]) or chunk(*a))
    done = variability_intervals(X, y, SPEC, chunk_size=96, **kw).done
    assert max(calls) - 96 < done <= max(calls)


@pytest.mark.slow  # starts worker processes: over 3 s
def test_stopping_does_not_depend_on_workers_and_cancels_the_rest(data, monkeypatch):
    from dpci.experiments import engine

    X, y = data
    bootstrap.warm_up_workers(2)
    kw = dict(n_replicates=5_000, precision=0.03, random_state=4)
    one = variability_intervals(X, y, SPEC, chunk_size=64, **kw)
    pool = engine.get_engine()
    others = pool._active  # runs of earlier tests in this process not closed yet (a generator left open)
    submitted, ask = [], pool._fair.ask  # the run's calls, as it queues them for the pool (dpci.experiments.fair)
    monkeypatch.setattr(pool._fair, "ask", lambda *call: submitted.append(ask(*call)) or submitted[-1])
    monkeypatch.setattr(engine, "AHEAD", 16)  # many chunks in flight when the run stops
    two = variability_intervals(X, y, SPEC, chunk_size=32, n_jobs=2, **kw)
    assert two.done == one.done and two.converged
    np.testing.assert_array_equal(two.estimates, one.estimates)
    assert pool._active <= others  # the run has left the pool (a leftover may be collected meanwhile)
    # its chunks still waiting were cancelled: in the fair queue, or in the pool before they started
    assert any(f.cancelled() or (f.pool_future is not None and f.pool_future.cancelled()) for f in submitted)
    cov_kw = dict(n_replicates=400, precision=0.01, random_state=3)
    a = coverage(X, y, SPEC.replace(n_samples=300), chunk_size=8, **cov_kw)
    b = coverage(X, y, SPEC.replace(n_samples=300), chunk_size=24, n_jobs=2, **cov_kw)
    assert a.done == b.done
    np.testing.assert_array_equal(a.bounds, b.bounds)


def test_without_precision_a_run_is_unchanged(data):
    X, y = data
    kw = dict(n_replicates=300, random_state=2)
    plain = variability_intervals(X, y, SPEC, **kw)
    none = variability_intervals(X, y, SPEC, precision=None, **kw)
    assert plain.done == none.done == 300 and plain.precision is None and not plain.converged
    assert plain.finished and not plain.stopped_early
    np.testing.assert_array_equal(plain.estimates, none.estimates)
    assert plain.summary().startswith("done: 300 replicates, endpoints ±")
    assert "target" not in plain.summary() and "short" not in plain.summary()


@pytest.mark.parametrize("bad", [0, 0.0, -0.01, 1, 1.5, math.nan, math.inf, "0.01", True, [0.01]])
def test_a_bad_precision_is_refused(data, bad):
    X, y = data
    with pytest.raises(ValueError, match="precision"):
        next(iter_variability(X, y, SPEC, n_replicates=100, precision=bad))
    with pytest.raises(ValueError, match="precision"):
        next(bootstrap.iter_coverage(X, y, SPEC, n_replicates=10, precision=bad))


def test_a_coverage_run_stops_once_its_standard_error_is_below_the_target(data):
    X, y = data
    kw = dict(n_replicates=600, random_state=5)
    spec = SPEC.replace(n_samples=300)
    res = coverage(X, y, spec, precision=0.01, **kw)
    cov, se = res.overall_coverage
    assert res.converged and res.stopped_early and res.done % stopping.COVERAGE_STEP == 0
    assert se <= res.coverage_error <= 0.01
    assert res.coverage_error >= math.sqrt(0.05 * 0.95 / (res.done * 3))  # the nominal floor
    assert (
        res.summary()
        == f"done: {res.done:,} replicates, coverage {cov:.3f} ± {res.coverage_error:.2g} (standard error)"
    )
    fixed = coverage(X, y, spec, **dict(kw, n_replicates=res.done))
    np.testing.assert_array_equal(res.bounds, fixed.bounds)
    # a target out of reach: the run does them all and says so
    short = coverage(X, y, spec, precision=0.001, **dict(kw, n_replicates=120))
    assert short.done == 120 and short.finished and not short.converged
    assert "(the most allowed)" in short.summary() and "short of the ± 0.001 asked" in short.summary()


def test_a_sweep_passes_the_precision_to_each_setting(data):
    X, y = data
    kw = dict(shares=(0.5, 0.8), n_replicates=600, random_state=1, precision=0.01)
    last = None
    for last in iter_split_sweep(X, y, ReleaseSpec(loss=LogisticLoss(), c=2e-3, n_samples=300), **kw):
        pass
    rows = last.frame[last.frame["feature"] == ALL]
    assert len(rows) == 2 and (rows["replicates"] < 600).all() and (rows["coverage_se"] <= 0.01).all()


def test_checkpoints():
    # a check predicts the replicates that reach the target (errors fall as 1/sqrt(B)), rounded up
    assert stopping.next_checkpoint(1_200, 0.02 * math.sqrt(1.5), 0.02, 100, 10_000) == 1_800
    assert stopping.next_checkpoint(1_200, 0.0201, 0.02, 100, 10_000) == 1_300  # at least a step on
    assert stopping.next_checkpoint(1_200, 0.2, 0.02, 100, 10_000) == 2_400  # at most twice
    assert stopping.next_checkpoint(6_000, 0.2, 0.02, 100, 10_000) == 10_000  # at most the total
    assert stopping.first_checkpoint(200, 10_000, 100, stopping.normal_replicates(0.05, 0.01)) == 4_700
    assert stopping.first_checkpoint(200, 150, 100, 0.0) == 150
