import os
import tempfile

import numpy as np
import pytest

# Tests never touch a developer's ledger: the app, the command line and the browser tests' servers keep
# their database and secret in a throw-away folder (DPCI_DATABASE_URL is set only by tests that want one).
os.environ["DPCI_DATA_DIR"] = tempfile.mkdtemp(prefix="dpci-tests-")
os.environ.pop("DPCI_DATABASE_URL", None)
os.environ.pop("DPCI_SECRET", None)


def unit_ball_rows(rng, n, d, radius_power=0.3):
    """Rows in the unit ball: uniform directions, radii in (0, 1] skewed towards 1."""
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X * rng.uniform(size=(n, 1)) ** radius_power


def logistic_labels(rng, X, theta):
    p = 1.0 / (1.0 + np.exp(-X @ theta))
    return np.where(rng.uniform(size=len(X)) < p, 1.0, -1.0)


def rows_with_constant(seed, n, theta):
    """n rows of three features in the unit ball and a constant 0.5, scaled back into the ball, with
    logistic labels drawn from ``theta`` (four coefficients)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([unit_ball_rows(rng, n, 3), np.full(n, 0.5)]) / np.sqrt(1.25)
    return X, logistic_labels(rng, X, np.asarray(theta, dtype=float))


@pytest.fixture
def small_problem():
    """A 2,000 x 4 logistic problem with a constant column, rows in the unit ball."""
    rng = np.random.default_rng(20261122)
    n, d = 2000, 3
    Z = unit_ball_rows(rng, n, d)
    X = np.column_stack([Z, np.ones(n)]) / np.sqrt(2.0)
    y = logistic_labels(rng, X, np.array([1.5, -1.0, 0.5, 0.3]))
    return X, y


def pytest_unconfigure(config):
    """However the run ends (Ctrl-C included), the worker processes joblib keeps for reuse end with it: a
    test that ran a parallel sweep or bootstrap must not leave them behind."""
    from joblib.externals.loky import reusable_executor

    executor = reusable_executor._executor  # None unless a test started one (asking would start one)
    if executor is not None:
        executor.shutdown(wait=False, kill_workers=True)
