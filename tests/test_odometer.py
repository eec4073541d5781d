"""The privacy odometer: composition against hand-computed values, repeated releases, the cap."""

import copy
import math
import pickle

import pytest

from dpci.accounting import allocate
from dpci.odometer import BudgetExceeded, PrivacyOdometer, Total

LOG = math.log(1e6)  # log(1/delta) at delta = 1e-6


def spend(budget, privacy="pure", mechanism="output"):
    return allocate(budget, None, mechanism, privacy).spend


def test_pure_releases_add_up_by_basic_composition():
    odo = PrivacyOdometer()
    for i in range(3):
        assert odo.charge(f"r{i}", spend(1.0))
    assert odo.total.releases == 3
    assert odo.total.pure_epsilon == pytest.approx(3.0)
    approx = odo.total.to_approx_dp(1e-6)
    assert (approx.epsilon, approx.delta) == (pytest.approx(3.0), 0.0)  # 3 < rho route 1.5 + 2 sqrt(1.5 log 1e6)


def test_the_same_release_again_costs_nothing_more():
    odo = PrivacyOdometer()
    assert odo.charge("same", spend(1.0))
    assert not odo.charge("same", spend(1.0))
    assert not odo.charge("same", spend(5.0))  # the key names the release: it was charged once
    assert odo.epsilon() == pytest.approx(1.0)


def test_zcdp_releases_add_their_rho_then_convert():
    odo = PrivacyOdometer(delta=1e-6)
    odo.charge("a", spend(0.5, "zcdp"))
    odo.charge("b", spend(0.5, "zcdp"))
    assert odo.total.rho == pytest.approx(1.0)
    assert odo.epsilon() == pytest.approx(1.0 + 2 * math.sqrt(1.0 * LOG))  # Proposition 2: 8.43


def test_objective_perturbation_under_zcdp_counts_its_pure_step_in_rho():
    s = spend(0.5, "zcdp", "objective")  # Algorithm 1 at epsilon1 = sqrt(2 * 0.45) costs rho 0.45
    odo = PrivacyOdometer()
    odo.charge("a", s)
    assert odo.total.rho == pytest.approx(0.5)
    assert odo.total.zcdp_rho == pytest.approx(0.5)


def test_mixed_pure_and_zcdp_takes_the_tighter_valid_bound():
    odo = PrivacyOdometer()
    odo.charge("pure", spend(1.0))
    odo.charge("zcdp", spend(0.5, "zcdp"))
    basic = 1.0 + 0.5 + 2 * math.sqrt(0.5 * LOG)  # 6.76: epsilon 1 plus the zCDP part as (eps, delta)
    via_rho = 1.0 + 2 * math.sqrt(1.0 * LOG)  # 8.43: 0.5 + 1^2/2 in rho
    assert odo.epsilon() == pytest.approx(min(basic, via_rho))
    assert odo.total.to_approx_dp(1e-6).delta == 1e-6


def test_many_small_pure_releases_are_tighter_through_rho():
    total = Total.of([spend(0.1)] * 100)  # output perturbation, Table 2's split 0.8 / 0.1 / 0.1
    rho = 100 * (0.08**2 + 0.01**2 + 0.01**2) / 2  # each step's epsilon_i is epsilon_i^2/2-zCDP (Proposition 1)
    approx = total.to_approx_dp(1e-6)
    assert approx.epsilon == pytest.approx(rho + 2 * math.sqrt(rho * LOG))  # 4.60 < 10 by basic composition
    assert approx.delta == 1e-6


def test_cap_refuses_then_confirm_spends():
    odo = PrivacyOdometer(cap=2.5)
    odo.charge("a", spend(1.0))
    odo.charge("b", spend(1.0))
    assert odo.would_exceed(spend(1.0))
    assert not odo.would_exceed(spend(1.0), key="a")  # already charged: nothing more
    with pytest.raises(BudgetExceeded, match=r"epsilon = 3, over the cap of 2\.5"):
        odo.charge("c", spend(1.0))
    assert odo.total.releases == 2  # nothing charged
    assert odo.charge("c", spend(1.0), confirm=True)
    assert odo.epsilon() == pytest.approx(3.0)


def test_not_private_results_are_noted_not_charged():
    odo = PrivacyOdometer()
    odo.charge("a", spend(1.0))
    assert odo.note_not_private("sweep", "Budget allocation sweep on the real data")
    assert not odo.note_not_private("sweep", "again")
    assert odo.total.releases == 1
    assert [e.what for e in odo.not_private] == ["Budget allocation sweep on the real data"]


def test_shared_not_copied_and_errors_pickle():
    odo = PrivacyOdometer()
    assert copy.deepcopy(odo) is odo and copy.copy(odo) is odo
    err = pickle.loads(pickle.dumps(BudgetExceeded(3.0, 2.0, 0.0)))
    assert (err.total, err.cap) == (3.0, 2.0)


@pytest.mark.parametrize("cap", [0, -1, float("nan"), float("inf"), "x"])
def test_bad_cap_is_refused_clearly(cap):
    with pytest.raises(ValueError, match="cap must be a positive"):
        PrivacyOdometer(cap=cap)


def test_charge_needs_a_spend():
    with pytest.raises(TypeError, match="PrivacySpend"):
        PrivacyOdometer().charge("a", 1.0)


def _data():
    from dpci.data import make_synthetic_logistic

    return make_synthetic_logistic(2_000, [1.0, -0.5, 0.3], random_state=4)


def test_releases_and_estimators_report_to_the_active_odometer():
    from dpci import LogisticLoss, PrivateLogisticRegression, private_confidence_intervals

    X, y = _data()
    odo = PrivacyOdometer()
    with odo:
        private_confidence_intervals(X, y, LogisticLoss(), "output", "pure", 1.0, n_samples=200, random_state=1)
        private_confidence_intervals(X, y, LogisticLoss(), "output", "pure", 1.0, n_samples=500, random_state=1)
        assert odo.total.releases == 1  # the same data, settings and seed: one release (m is post-processing)
        PrivateLogisticRegression(mechanism="output", budget=0.5, n_samples=200).fit(X, y)  # fresh randomness
        PrivateLogisticRegression(mechanism="output", budget=0.5, n_samples=200).fit(X, y)
    assert odo.total.releases == 3 and odo.epsilon() == pytest.approx(2.0)
    private_confidence_intervals(X, y, LogisticLoss(), "output", "pure", 1.0, n_samples=200)
    assert odo.total.releases == 3  # outside the block nothing is reported


def test_the_cap_refuses_a_release_before_its_noise_is_drawn():
    from dpci import LogisticLoss, private_confidence_intervals

    X, y = _data()
    with PrivacyOdometer(cap=1.5) as odo:
        private_confidence_intervals(X, y, LogisticLoss(), "output", "pure", 1.0, n_samples=200)
        with pytest.raises(BudgetExceeded):
            private_confidence_intervals(X, y, LogisticLoss(), "output", "pure", 1.0, n_samples=200)
    assert odo.total.releases == 1


def test_an_invalid_c_is_refused_before_anything_is_charged():
    from dpci import LogisticLoss, RegularisationTooSmall, private_confidence_intervals

    X, y = _data()
    with PrivacyOdometer() as odo, pytest.raises(RegularisationTooSmall):
        private_confidence_intervals(X[:200], y[:200], LogisticLoss(), "objective", "pure", 0.1, c=1e-6)
    assert odo.total.releases == 0


def test_a_bootstrap_on_the_data_is_noted_as_not_private():
    from dpci import LogisticLoss
    from dpci.experiments.bootstrap import variability_intervals

    X, y = _data()
    with PrivacyOdometer() as odo:
        variability_intervals(X, y, LogisticLoss(), mechanism="output", n_replicates=20)
    assert odo.total.releases == 0
    assert [e.what for e in odo.not_private] == ["bootstrap replicates of output on the data"]
