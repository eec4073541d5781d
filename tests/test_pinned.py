"""Released numbers pinned from main before the method registry (2026-11-23): every paper
method, both losses, a variability run and a coverage run must give the same bits for the
same seed after any refactoring. The values in data/pinned_release_numbers.json were written
by running exactly these calls on that commit (bb472c9)."""

import json
from pathlib import Path

import numpy as np
import pytest

import dpci
from dpci.experiments.bootstrap import coverage, variability_intervals
from tests.conftest import logistic_labels, unit_ball_rows

PINNED = json.loads((Path(__file__).parent / "data" / "pinned_release_numbers.json").read_text())


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(20261122)
    n = 2000
    Z = unit_ball_rows(rng, n, 3)
    X = np.column_stack([Z, np.ones(n)]) / np.sqrt(2.0)
    y = logistic_labels(rng, X, np.array([1.5, -1.0, 0.5, 0.3]))
    return X, y


@pytest.mark.parametrize("loss", [dpci.LogisticLoss(), dpci.HuberLoss(0.5)], ids=lambda loss: loss.name)
@pytest.mark.parametrize("mechanism", ["objective", "output"])
@pytest.mark.parametrize("privacy, budget", [("pure", 1.0), ("zcdp", 0.5)])
def test_release_is_bit_identical_to_main(data, loss, mechanism, privacy, budget):
    X, y = data
    r = dpci.private_confidence_intervals(
        X, y, loss, mechanism, privacy, budget, c=1e-2, n_samples=2000, random_state=7
    )
    theta, bounds = PINNED[f"{loss.name}|{mechanism}|{privacy}"]
    assert r.theta.tolist() == theta
    assert r.conf_int.ravel().tolist() == bounds


def test_bootstrap_runs_are_bit_identical_to_main(data):
    X, y = data
    v = variability_intervals(
        X,
        y,
        dpci.LogisticLoss(),
        mechanism="objective",
        privacy="pure",
        budget=1.0,
        c=1e-2,
        n_replicates=64,
        random_state=3,
    )
    assert v.bounds.ravel().tolist() == PINNED["vi"]
    cv = coverage(
        X,
        y,
        dpci.HuberLoss(0.5),
        mechanism="output",
        privacy="zcdp",
        budget=0.5,
        c=1e-2,
        n_samples=500,
        n_replicates=16,
        random_state=3,
    )
    assert cv.bounds[-1].ravel().tolist() == PINNED["cov"]
