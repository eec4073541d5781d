"""Seeded numbers recorded with the keyword API before the experiments took a release specification
(tests/data/spec_pins.json): every method's release, the bootstrap's variability and coverage runs,
Repeat a release, a split sweep and accuracy-first must give the same numbers from the same seeds
through the spec (the same noise draws in the same order). Tolerances as tests/test_pinned.py: a
release to RELEASE_PIN (another CPU's BLAS kernel), a bootstrap run to SOLVER_PIN (the batched
solver's tolerance); on the machine that recorded them they agree to the bit."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpci
import dpci.teaching
from dpci import ReleaseSpec
from dpci.data import make_synthetic_logistic
from dpci.experiments.bootstrap import _last, coverage, variability_intervals
from dpci.experiments.repeat import iter_repeated_releases
from dpci.experiments.sweeps import iter_split_sweep
from tests.test_pinned import RELEASE_PIN, SOLVER_PIN

PINS = json.loads((Path(__file__).parent / "data" / "spec_pins.json").read_text())
LOGISTIC = dpci.LogisticLoss()
RELEASES = [
    ("objective", "pure", 1.0),
    ("objective", "zcdp", 0.5),
    ("output", "pure", 1.0),
    ("output", "zcdp", 0.5),
    ("naive", "pure", 1.0),
    ("naive", "zcdp", 0.5),
    ("wu", "pure", 1.0),
    ("wu", "zcdp", 0.5),
    ("kulkarni", "zcdp", 0.5),
]


@pytest.fixture(scope="module")
def data():
    return make_synthetic_logistic(800, [1.0, -0.5, 0.4], random_state=11)


def _close(values, pinned, tol):
    np.testing.assert_allclose(np.ravel(values), pinned, rtol=tol, atol=tol)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("method, privacy, budget", RELEASES)
def test_every_methods_seeded_release_is_unchanged(data, method, privacy, budget):
    X, y = data
    theta, bounds = PINS[f"release|{method}|{privacy}"]
    spec = ReleaseSpec(method, privacy, budget, loss=LOGISTIC, c=1e-2, n_samples=500, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_spec = spec.release(X, y)
        by_keywords = dpci.private_confidence_intervals(
            X, y, LOGISTIC, method, privacy, budget, c=1e-2, n_samples=500, random_state=7
        )
    for release in (by_spec, by_keywords):
        _close(release.theta, theta, RELEASE_PIN)
        _close(release.conf_int, bounds, RELEASE_PIN)


def test_a_release_from_a_generator_with_a_split_is_unchanged(data):
    X, y = data
    spec = ReleaseSpec("output", "pure", 2.0, (0.5, 0.3, 0.2), dpci.HuberLoss(0.3), c=1e-2, alpha=0.1, n_samples=400)
    release = spec.release(X, y, random_state=np.random.default_rng(3))
    theta, bounds = PINS["release|huber-generator"]
    _close(release.theta, theta, RELEASE_PIN)
    _close(release.conf_int, bounds, RELEASE_PIN)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "method, privacy, budget",
    [
        ("objective", "pure", 1.0),
        ("output", "zcdp", 0.5),
        ("none", "pure", 1.0),
        ("wu", "pure", 1.0),
        ("kulkarni", "zcdp", 0.5),
    ],
)
def test_variability_runs_are_unchanged(data, method, privacy, budget):
    X, y = data
    private = method != "none"
    spec = ReleaseSpec(method if private else "objective", privacy, budget, loss=LOGISTIC, c=1e-2)
    reps = 6 if method == "kulkarni" else 40
    run = variability_intervals(X, y, spec, n_replicates=reps, random_state=5, private=private)
    _close(run.estimates, PINS[f"variability|{method}|{privacy}"], SOLVER_PIN)


@pytest.mark.parametrize(
    "method, privacy, budget", [("objective", "pure", 1.0), ("output", "zcdp", 0.5), ("naive", "pure", 1.0)]
)
def test_coverage_runs_are_unchanged(data, method, privacy, budget):
    X, y = data
    spec = ReleaseSpec(method, privacy, budget, loss=LOGISTIC, c=1e-2, n_samples=200)
    run = coverage(X, y, spec, n_replicates=8, random_state=5)
    _close(run.bounds, PINS[f"coverage|{method}|{privacy}"], SOLVER_PIN)


def test_a_repeated_release_and_a_split_sweep_are_unchanged(data):
    X, y = data
    spec = ReleaseSpec("output", "zcdp", 0.5, loss=LOGISTIC, c=1e-2, n_samples=200)
    last = _last(iter_repeated_releases([1.0, -0.5, 0.4], 300, spec, repetitions=3, random_state=9))
    _close(last.frame[["lower", "upper"]].to_numpy(), PINS["repeat|output|zcdp"], RELEASE_PIN)
    spec = ReleaseSpec("output", "pure", 1.0, loss=LOGISTIC, c=1e-2, n_samples=200)
    sweep = _last(iter_split_sweep(X, y, spec, vary="phi1", shares=(0.5, 0.8), n_replicates=8, random_state=4))
    _close(sweep.frame.select_dtypes("number").to_numpy(), PINS["sweep|split"], SOLVER_PIN)


@pytest.mark.parametrize("strategy", ["noise_reduction", "doubling"])
def test_accuracy_first_is_unchanged(data, strategy):
    from dpci.accuracy_first import accuracy_first

    X, y = data
    budget, bounds = PINS[f"accuracy_first|{strategy}"]
    spec = ReleaseSpec("output", "zcdp", 2.0, loss=LOGISTIC, c=1e-2, n_samples=300)  # the search's most: 2
    res = accuracy_first(X, y, spec, target=0.8, random_state=8, strategy=strategy)
    assert res.budget == pytest.approx(budget, rel=RELEASE_PIN)
    _close(res.release.conf_int, bounds, RELEASE_PIN)


@pytest.mark.parametrize(
    "function",
    [dpci.private_confidence_intervals, dpci.teaching.walkthrough, dpci.PrivateLogisticRegression.__init__],
    ids=["private_confidence_intervals", "walkthrough", "estimator"],
)
def test_the_keyword_api_has_the_specs_defaults(function):
    """The keywords are written out (a scikit-learn estimator's __init__ must be), so this test keeps
    their defaults those of ReleaseSpec: one description of the release's defaults."""
    import dataclasses
    import inspect

    params = inspect.signature(function).parameters
    defaults = {f.name: f.default for f in dataclasses.fields(ReleaseSpec) if f.name != "loss"}
    names = {"method": "mechanism", "seed": "random_state"}
    if function is dpci.PrivateLogisticRegression.__init__:
        # the estimator's c=None is the c for its default estimand (recommended for theta), not a second default
        assert params["c"].default is None
        assert dpci.PrivateHuberSVM(classes=(-1, 1))._default_c() == defaults.pop("c")
    for field, default in defaults.items():
        assert params[names.get(field, field)].default == default, field


def test_an_experiment_given_a_loss_instead_of_a_spec_says_how_to_make_one(data):
    """The old call (the loss where the spec now stands) is refused with a message naming ReleaseSpec,
    before any work, for every experiment."""
    from dpci.accuracy_first import accuracy_first
    from dpci.experiments.bootstrap import iter_coverage, iter_variability
    from dpci.experiments.sample_size import iter_sample_size_match
    from dpci.experiments.sweeps import iter_grid_sweep

    X, y = data
    calls = [
        lambda: next(iter_variability(X, y, LOGISTIC)),
        lambda: next(iter_coverage(X, y, LOGISTIC)),
        lambda: next(iter_repeated_releases([1.0, -0.5], 300, LOGISTIC)),
        lambda: next(iter_split_sweep(X, y, LOGISTIC)),
        lambda: next(iter_grid_sweep(lambda d: (X, y, None), LOGISTIC, ns=[300], ds=[2])),
        lambda: next(iter_sample_size_match(lambda d: (X, y, None), LOGISTIC, [300], d=2, step=300)),
        lambda: accuracy_first(X, y, LOGISTIC),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=r"dpci\.ReleaseSpec, got LogisticLoss: make one with ReleaseSpec\("):
            call()
