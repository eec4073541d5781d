"""The compiled pass of dpci.kernels computes what NumPy computes from the losses' own formulas,
to rounding, and a replicate's numbers do not depend on the replicates sharing its block."""

import numpy as np
import pytest
from conftest import logistic_labels, unit_ball_rows

from dpci.kernels import TILE, derivative_pass, exp_nonpositive
from dpci.losses import HuberLoss, LogisticLoss
from dpci.solver import margin_rows, row_major_transpose

LOSSES = [LogisticLoss(), HuberLoss(0.5), HuberLoss(0.05)]
IDS = ["logistic", "huber", "huber-narrow"]


def _block(seed, n=2 * TILE + 37, d=7, B=5):
    """Rows, bootstrap counts and iterates whose margins cover both tails, the Huber kinks and 0."""
    rng = np.random.default_rng(seed)
    X = unit_ball_rows(rng, n, d)
    A = margin_rows(X, logistic_labels(rng, X, rng.standard_normal(d)))
    W = np.array([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(B)], dtype=float)
    theta = rng.normal(0.0, 4.0, (B, d))
    theta[0] *= 300.0  # margins of several hundred: e^z overflows, e^-z underflows
    return A, W, theta


def _pass(A, W, theta, loss, rows=None):
    rows = np.arange(len(theta)) if rows is None else rows
    d2 = np.full((len(rows), A.shape[0]), np.nan, dtype=np.float32)
    sums = derivative_pass(row_major_transpose(A), W, rows, theta, *loss.kernel, True, d2)
    return sums, d2


@pytest.mark.parametrize("loss", LOSSES, ids=IDS)
def test_the_pass_gives_the_weighted_gradient_sums_and_second_derivatives(loss):
    A, W, theta = _block(0)
    lo, hi = loss.kinks or (-1.0, 1.0)
    A[:4] = 0.0  # replicate 1 meets the kinks exactly on rows 0-3, and just outside them
    A[:4, 0] = [lo, hi, np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)]
    theta[1, 0], W[1, :4] = 1.0, 2.0
    z = theta @ A.T
    sums, d2 = _pass(A, W, theta, loss)
    d1_ref, d2_ref = loss.derivatives(z)
    terms = W * d1_ref
    # Summation of n terms in another order: error at most ~n eps times the sum of the |terms|.
    bound = 1e-15 * A.shape[0] * (np.abs(terms) @ np.abs(A)) + 1e-300
    assert np.all(np.abs(sums - terms @ A) <= bound)
    # f'' as the loss defines it, also where it jumps (the closed middle piece of the Huber loss)
    np.testing.assert_allclose(d2, (W * d2_ref).astype(np.float32), rtol=2e-7, atol=0)


@pytest.mark.parametrize("loss", LOSSES, ids=IDS)
def test_a_replicates_numbers_do_not_depend_on_its_block(loss):
    A, W, theta = _block(1)
    sums, d2 = _pass(A, W, theta, loss)
    for b in range(len(theta)):
        alone, alone_d2 = _pass(A, W, theta[b : b + 1], loss, rows=np.array([b]))
        np.testing.assert_array_equal(alone[0], sums[b])
        np.testing.assert_array_equal(alone_d2[0], d2[b])
    order = np.array([3, 0, 4, 2, 1])
    shuffled, _ = _pass(A, W, theta[order], loss, rows=order)
    np.testing.assert_array_equal(shuffled, sums[order])


def test_the_exponential_is_within_one_ulp_and_zero_below_its_range():
    from numba import njit

    @njit
    def apply(x):
        out = np.empty_like(x)
        for i in range(len(x)):
            out[i] = exp_nonpositive(x[i])
        return out

    rng = np.random.default_rng(2)
    x = np.concatenate([-rng.exponential(20.0, 20_000), -np.linspace(0, 708, 5001), [0.0, -0.0, -1e-300]])
    got, want = apply(x), np.exp(x)
    assert np.all(np.abs(got - want) <= np.spacing(want))
    np.testing.assert_array_equal(apply(np.array([-708.5, -745.2, -1e5, -np.inf])), 0.0)


def test_counted_draws_are_numpys_counts():
    from dpci.kernels import count_draws

    rng = np.random.default_rng(3)
    for n in (1, 7, 1000):
        draws = rng.integers(0, n, size=3 * n)
        counts = np.full(n, np.nan, dtype=np.float32)
        count_draws(draws, counts)
        np.testing.assert_array_equal(counts, np.bincount(draws, minlength=n))
