"""Released numbers pinned before the method registry: every paper
method and both losses must give the same numbers for the same seed after any refactoring (to the
rounding a different CPU or BLAS may bring, see RELEASE_PIN), and a variability run and a coverage
run the same numbers to the solver's tolerance (see SOLVER_PIN). The values in
data/pinned_release_numbers.json were written by running exactly these calls on that commit
(bb472c9), on a machine whose OpenBLAS ran its Haswell/Zen kernels.

How "any CPU" is checked: OpenBLAS picks its kernel from the CPU, and ``OPENBLAS_CORETYPE``
overrides the choice, so the same machine runs each kernel family in turn. Measured on
an AMD EPYC: Haswell and Zen kernels reproduce the pins to the bit; Prescott, Nehalem, Sandybridge
and SkylakeX (this CPU's default) differ by at most 6.8e-14 relative (512 ULP of a bound near 0.1),
well inside RELEASE_PIN. ``python bench/blas_kernels.py`` reruns this file under each kernel (a
developer's check, not CI's: the machines set OPENBLAS_CORETYPE themselves where a kernel misbehaves)."""

import json
from pathlib import Path

import numpy as np
import pytest

import dpci
from dpci.experiments.bootstrap import coverage, variability_intervals
from dpci.spec import ReleaseSpec
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


# Why 1e-11 and not the bit: a BLAS kernel sums a dot product over n = 2,000 rows in its own order,
# which moves it by at most gamma_n = n u / (1 - n u) ~ 2.2e-13 relative (Higham, Accuracy and
# Stability, Lemma 3.1; u = 2^-53). The Newton solve carries that through H^-1, whose condition
# number is at most (t + 2c) / (2c) = 13.5 for t = 1/4, c = 1e-2 (H = mean f'' x x^T + 2c I), and
# the Monte Carlo interval is a smooth function of the same matrices: ~3e-12 in all, rounded up to
# 1e-11. A real change of the method (a noise scale, a share, a quantile) moves the numbers by 1e-4
# or more, so this still catches every one.
RELEASE_PIN = 1e-11


@pytest.mark.parametrize("loss", [dpci.LogisticLoss(), dpci.HuberLoss(0.5)], ids=lambda loss: loss.name)
@pytest.mark.parametrize("mechanism", ["objective", "output"])
@pytest.mark.parametrize("privacy, budget", [("pure", 1.0), ("zcdp", 0.5)])
def test_release_matches_main(data, loss, mechanism, privacy, budget):
    X, y = data
    r = dpci.private_confidence_intervals(
        X, y, loss, mechanism, privacy, budget, c=1e-2, n_samples=2000, random_state=7
    )
    theta, bounds = PINNED[f"{loss.name}|{mechanism}|{privacy}"]
    np.testing.assert_allclose(r.theta, theta, rtol=RELEASE_PIN, atol=RELEASE_PIN)
    np.testing.assert_allclose(r.conf_int.ravel(), bounds, rtol=RELEASE_PIN, atol=RELEASE_PIN)


# The bootstrap runs are pinned to the solver's tolerance, not to the bit: the batched solver
# (dpci.batch) may take other steps to the same minimisers (faster-engine branch), and each
# returned minimiser is only guaranteed to have ||grad J|| <= tol = 1e-10. J is 2c-strongly
# convex, so each lies within tol / (2c) = 5e-9 (c = 1e-2) of the exact minimiser, and two runs'
# replicates within 1e-8 of each other; quantiles move no more than the values, and the coverage
# intervals (private matrices and Monte Carlo at the replicates' coefficients) moved 2.3e-10 when
# the solver changed.
SOLVER_PIN = 2 * 1e-10 / (2 * 1e-2)


def test_bootstrap_runs_match_main_to_the_solver_tolerance(data):
    X, y = data
    v = variability_intervals(
        X,
        y,
        ReleaseSpec(loss=dpci.LogisticLoss(), method="objective", privacy="pure", budget=1.0, c=1e-2),
        n_replicates=64,
        random_state=3,
    )
    np.testing.assert_allclose(v.bounds.ravel(), PINNED["vi"], rtol=0, atol=SOLVER_PIN)
    cv = coverage(
        X,
        y,
        ReleaseSpec(loss=dpci.HuberLoss(0.5), method="output", privacy="zcdp", budget=0.5, c=1e-2, n_samples=500),
        n_replicates=16,
        random_state=3,
    )
    np.testing.assert_allclose(cv.bounds[-1].ravel(), PINNED["cov"], rtol=0, atol=SOLVER_PIN)
