"""dpci.release: the low-level functions refuse input that voids the guarantee, and a
release hands Algorithm 2 each matrix with its own share and its own sensitivity."""

import math

import numpy as np
import pytest

import dpci.release
from dpci import (
    DataValidationError,
    PrivateLogisticRegression,
    nonprivate_confidence_intervals,
    private_confidence_intervals,
)
from dpci.intervals import hessian_and_covariance
from dpci.losses import HuberLoss, LogisticLoss
from dpci.mechanisms import priv_spd_mat
from dpci.solver import margin_rows

RELEASES = [
    pytest.param(
        lambda X, y: private_confidence_intervals(X, y, LogisticLoss(), n_samples=100, random_state=0), id="private"
    ),
    pytest.param(lambda X, y: nonprivate_confidence_intervals(X, y, LogisticLoss()), id="nonprivate"),
]


@pytest.mark.parametrize("release", RELEASES)
def test_valid_input_is_accepted(release, small_problem):
    X, y = small_problem
    first = release(X, y)
    again = release(X, y.astype(int))  # -1/+1 as integers are the same labels
    for result in (first, again):
        assert result.conf_int.shape == (X.shape[1], 2) and np.all(np.isfinite(result.conf_int))


@pytest.mark.parametrize("release", RELEASES)
def test_row_outside_the_unit_ball_is_refused(release, small_problem):
    X, y = small_problem
    X = X.copy()
    X[3] *= 1.5 / np.linalg.norm(X[3])
    with pytest.raises(DataValidationError, match=r"row 3 has L2 norm 1\.5 > 1.*unit ball"):
        release(X, y)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("release", RELEASES)
def test_non_finite_features_are_refused(release, bad, small_problem):
    X, y = small_problem
    X = X.copy()
    X[5, 2] = bad
    with pytest.raises(DataValidationError, match=r"NaN or infinite values \(first at row 5, column 2\)"):
        release(X, y)


@pytest.mark.parametrize(
    "labels, shown",
    [
        (lambda y: np.where(y > 0, 1.0, 0.0), lambda y: f"y[{np.argmax(y < 0)}] = 0.0"),  # 0/1 coding
        (lambda y: np.where(y > 0, 2, -1), lambda y: f"y[{np.argmax(y > 0)}] = 2"),
        (lambda y: np.where(y > 0, "yes", "no"), lambda y: f"y[0] = '{'yes' if y[0] > 0 else 'no'}'"),
        (lambda y: np.where(np.arange(len(y)) == 0, np.nan, y), lambda y: "y[0] = nan"),
    ],
    ids=["zero-one", "two", "strings", "nan"],
)
@pytest.mark.parametrize("release", RELEASES)
def test_labels_other_than_minus_one_and_one_are_refused(release, labels, shown, small_problem):
    X, y = small_problem
    with pytest.raises(DataValidationError, match=r"exactly the values -1 and \+1") as err:
        release(X, labels(y))
    assert shown(y) in str(err.value)
    assert "dpci.PrivateLogisticRegression and dpci.PrivateHuberSVM accept any two labels" in str(err.value)


@pytest.mark.parametrize("release", RELEASES)
def test_labels_of_the_wrong_length_are_refused(release, small_problem):
    X, y = small_problem
    with pytest.raises(DataValidationError, match="X has 2000 rows but y has 1999 labels"):
        release(X, y[:-1])


def test_the_estimators_validate_once(small_problem, monkeypatch):
    """fit checks (and codes) the data itself, then skips the low-level check (O(n d) saved)."""
    X, y = small_problem

    def refuse(*args):
        raise AssertionError("check_signed_data called from the estimator path")

    monkeypatch.setattr(dpci.release, "check_signed_data", refuse)
    model = PrivateLogisticRegression(n_samples=100, random_state=0).fit(X, np.where(y > 0, "yes", "no"))
    assert list(model.classes_) == ["no", "yes"] and model.conf_int_.shape == (X.shape[1], 2)


# Each matrix's own share and sensitivity (Algorithm 3, lines 4 and 6; Algorithm 5, lines 3 and 5).
SPLIT = (0.5, 0.3, 0.2)  # phi2 != phi3, so swapping the two matrices' shares is caught


@pytest.mark.parametrize("mechanism", ["objective", "output"])
@pytest.mark.parametrize("privacy, budget", [("pure", 1.0), ("zcdp", 0.5)])
@pytest.mark.parametrize("loss", [LogisticLoss(), HuberLoss(0.25)], ids=["logistic", "huber"])
def test_release_hands_each_matrix_its_share_and_sensitivity(
    mechanism, privacy, budget, loss, small_problem, monkeypatch
):
    X, y = small_problem
    n, c = len(X), 1e-3
    calls = []

    def spy(M, sensitivity, phi, c_, privacy_, rng):
        calls.append(dict(M=M.copy(), sensitivity=sensitivity, phi=phi, c=c_, privacy=privacy_))
        return priv_spd_mat(M, sensitivity, phi, c_, privacy_, rng)

    monkeypatch.setattr(dpci.methods.paper, "priv_spd_mat", spy)
    rel = private_confidence_intervals(
        X, y, loss, mechanism, privacy, budget, SPLIT, c=c, n_samples=100, random_state=1
    )
    assert len(calls) == 2
    hessian, covariance = calls
    # phi2 = 0.3 and phi3 = 0.2 of the budget, in the notion of the release (epsilon or rho; Theorems 2, 4).
    assert hessian["phi"] == pytest.approx(0.3 * budget, rel=1e-12)
    assert covariance["phi"] == pytest.approx(0.2 * budget, rel=1e-12)
    if isinstance(loss, LogisticLoss):
        hessian_sens = 1 / (2 * n)  # Lemma 3
        s = 1 / (1 + math.exp(-np.linalg.norm(rel.theta)))  # S(||theta~||), at the released theta~
        covariance_sens = 2 * s**2 / n  # Lemma 2
    else:
        hessian_sens = 1 / (n * 0.25)  # Lemma 5: 1/(n h)
        covariance_sens = 2 / n  # Lemma 4
    assert hessian["sensitivity"] == pytest.approx(hessian_sens, rel=1e-12)
    assert covariance["sensitivity"] == pytest.approx(covariance_sens, rel=1e-12)
    # ... and each share goes with its own matrix, both at theta~ (Eqs. 4.2 and 4.3).
    H, S = hessian_and_covariance(margin_rows(X, y), loss, rel.theta, c)
    np.testing.assert_allclose(hessian["M"], H, rtol=1e-12, atol=0)
    np.testing.assert_allclose(covariance["M"], S, rtol=1e-12, atol=1e-15)
    assert all(call["c"] == c and call["privacy"] == privacy for call in calls)
