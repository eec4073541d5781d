"""The teaching walkthrough is the real release taken apart: same draws, same interval."""

import numpy as np
import pytest

from dpci import HuberLoss, LogisticLoss, private_confidence_intervals
from dpci.mechanisms import floor_eigenvalues
from dpci.teaching import walkthrough


@pytest.mark.parametrize("mechanism, privacy, budget", [("objective", "pure", 1.0), ("output", "zcdp", 0.5)])
@pytest.mark.parametrize("loss", [LogisticLoss(), HuberLoss(0.5)], ids=["logistic", "huber"])
def test_walkthrough_matches_the_release(small_problem, mechanism, privacy, budget, loss):
    X, y = small_problem
    kw = dict(mechanism=mechanism, privacy=privacy, budget=budget, random_state=7)
    w = walkthrough(X, y, loss, **kw)
    rel = private_confidence_intervals(X, y, loss, closed_form=False, **kw)
    np.testing.assert_array_equal(w.theta_private, rel.theta)
    np.testing.assert_array_equal(w.conf_int, rel.conf_int)
    np.testing.assert_array_equal(w.hessian_private, rel.hessian)
    np.testing.assert_allclose(floor_eigenvalues(w.covariance_noisy, rel.c), rel.covariance, atol=1e-15)
    np.testing.assert_allclose(w.hessian_noisy, w.hessian_noisy.T)
    if mechanism == "output":
        np.testing.assert_allclose(w.theta_private - w.theta_hat, w.coef_noise, atol=1e-12)
