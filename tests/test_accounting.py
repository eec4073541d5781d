"""Budget split and composition checked against hand-computed values."""

import math

import numpy as np
import pytest
from conftest import unit_ball_rows

from dpci import PrivateLogisticRegression
from dpci.accounting import zcdp_to_approx_dp
from dpci.methods import allocate, default_split


def test_table2_defaults():
    assert default_split("objective", "pure") == (0.65, 0.175, 0.175)
    assert default_split("output", "pure") == (0.8, 0.1, 0.1)
    assert default_split("objective", "zcdp") == (0.9, 0.05, 0.05)
    assert default_split("output", "zcdp") == (0.9, 0.05, 0.05)


def test_pure_objective_totals():
    a = allocate(1.0, None, "objective", "pure")
    assert a.phi == pytest.approx((0.65, 0.175, 0.175))
    assert a.coef_epsilon == pytest.approx(0.65)
    assert a.spend.epsilon == pytest.approx(1.0)
    # Proposition 1 per step, then Proposition 4: (0.65^2 + 2 * 0.175^2) / 2
    assert a.spend.rho == pytest.approx(0.241875)
    assert [s.epsilon for s in a.spend.steps] == pytest.approx([0.65, 0.175, 0.175])


def test_pure_output_totals():
    a = allocate(2.0, None, "output", "pure")
    assert a.phi == pytest.approx((1.6, 0.2, 0.2))
    assert a.spend.epsilon == pytest.approx(2.0)
    assert a.spend.rho == pytest.approx((1.6**2 + 2 * 0.2**2) / 2)  # 1.32
    # pure DP is also (epsilon, delta)-DP for every delta: the smaller of the two bounds is reported
    assert a.spend.to_approx_dp(1e-5).epsilon == pytest.approx(2.0)


def test_zcdp_objective_runs_algorithm1_at_sqrt_2_rho1():
    a = allocate(0.5, None, "objective", "zcdp")
    assert a.phi == pytest.approx((0.45, 0.025, 0.025))
    assert a.coef_epsilon == pytest.approx(math.sqrt(0.9))  # 0.9486833
    assert a.spend.steps[0].epsilon == pytest.approx(0.9486833, abs=1e-7)
    assert a.spend.steps[0].rho == pytest.approx(0.45)  # epsilon1^2 / 2 (Theorem 2)
    assert a.spend.rho == pytest.approx(0.5)
    assert a.spend.epsilon is None  # the Gaussian steps have no pure epsilon
    # Proposition 2 with delta = 1e-5: 0.5 + 2 sqrt(0.5 ln 1e5) = 5.298526
    assert a.spend.to_approx_dp(1e-5).epsilon == pytest.approx(5.298526, abs=1e-6)


def test_zcdp_output_totals_and_custom_split():
    a = allocate(0.5, (0.5, 0.3, 0.2), "output", "zcdp")
    assert a.phi == pytest.approx((0.25, 0.15, 0.1))
    assert a.coef_epsilon is None
    assert a.spend.rho == pytest.approx(0.5)
    assert zcdp_to_approx_dp(0.5, 1e-6) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e6)))
    ledger = a.spend.to_frame()
    assert list(ledger["step"]) == ["coefficients", "hessian", "covariance", "total"]
    assert ledger["rho"].iloc[-1] == pytest.approx(0.5)


@pytest.mark.parametrize(
    "budget, split, message",
    [
        (0.0, None, "positive"),
        (-1.0, None, "positive"),
        (float("inf"), None, "finite"),
        ("abc", None, "positive number"),
        (1.0, (0.5, 0.5, 0.0), "every share"),
        (1.0, (0.5, 0.3, 0.3), "sum to 1"),
        (1.0, (0.5, 0.5), "3 shares"),
    ],
)
def test_bad_budgets_and_splits_are_refused(budget, split, message):
    with pytest.raises(ValueError, match=message):
        allocate(budget, split, "objective", "pure")


def test_bad_delta_is_refused():
    with pytest.raises(ValueError, match="delta"):
        allocate(1.0, None, "output", "zcdp").spend.to_approx_dp(0.0)


@pytest.mark.parametrize("mechanism", ["objective", "output"])
@pytest.mark.parametrize("privacy, budget", [("pure", 1.0), ("zcdp", 0.5)])
def test_estimator_reports_the_same_ledger(mechanism, privacy, budget):
    rng = np.random.default_rng(0)
    X = unit_ball_rows(rng, 3000, 3)
    y = rng.choice([0, 1], size=3000)
    model = PrivateLogisticRegression(mechanism=mechanism, privacy=privacy, budget=budget, random_state=0).fit(X, y)
    expected = allocate(budget, None, mechanism, privacy).spend
    assert model.privacy_spent_ == expected
    assert model.privacy_spent_.rho <= (budget if privacy == "zcdp" else budget**2 / 2) + 1e-12


def test_rho_at_equal_epsilon_delta_inverts_proposition_2():
    from dpci.accounting import rho_for_approx_dp, zcdp_to_approx_dp

    rho = rho_for_approx_dp(1.0, 1e-6)
    log_term = math.log(1e6)
    assert rho == pytest.approx((math.sqrt(log_term + 1) - math.sqrt(log_term)) ** 2)  # 0.0175 by hand
    assert rho == pytest.approx(0.017468, rel=1e-4)
    assert zcdp_to_approx_dp(rho, 1e-6) == pytest.approx(1.0)
    # the paper's rho = epsilon^2/2 is a much weaker guarantee: (5.76, 1e-6)-DP at epsilon = 1
    assert zcdp_to_approx_dp(0.5, 1e-6) == pytest.approx(5.757, abs=1e-3)
    with pytest.raises(ValueError, match="delta"):
        rho_for_approx_dp(1.0, 0.0)
