"""The batched solver returns, for every replicate, the same exact minimiser as the single solver."""

import numpy as np
import pytest
from conftest import logistic_labels, unit_ball_rows

from dpci.batch import minimise_erm_batch
from dpci.losses import HuberLoss, LogisticLoss
from dpci.noise import spherical_laplace
from dpci.solver import margin_rows, minimise_erm


@pytest.mark.parametrize(
    "loss", [LogisticLoss(), HuberLoss(0.5), HuberLoss(0.05)], ids=["logistic", "huber", "huber-narrow"]
)
def test_batch_equals_single_solves(loss):
    rng = np.random.default_rng(0)
    n, d, c, B = 3000, 5, 1e-3, 24
    X = unit_ball_rows(rng, n, d)
    A = margin_rows(X, logistic_labels(rng, X, 3 * rng.standard_normal(d)))
    W = np.array([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(B)], dtype=float)
    beta = spherical_laplace(rng, d, 0.2, B)  # strong noise: the replicates land far from each other
    batch = minimise_erm_batch(A, loss, c, W, beta)
    for b in range(B):
        single = minimise_erm(A, loss, c, linear=beta[b], weights=W[b]).theta
        np.testing.assert_allclose(batch[b], single, atol=1e-7, rtol=0)
        grad = A.T @ (W[b] * loss.derivatives(A @ batch[b])[0]) / n + 2 * c * batch[b] + beta[b] / n
        assert np.linalg.norm(grad) <= 1e-10


def test_batch_needs_a_batch():
    A = margin_rows(np.eye(2) * 0.5, np.ones(2))
    with pytest.raises(ValueError, match="weights, linear"):
        minimise_erm_batch(A, LogisticLoss(), 1e-3)


@pytest.mark.parametrize("loss", [LogisticLoss(), HuberLoss(0.5)], ids=["logistic", "huber"])
def test_weighted_derivatives_are_the_weighted_derivatives(loss):
    rng = np.random.default_rng(1)
    z = np.concatenate([rng.normal(0, 3, 1000), [-800.0, 800.0, 0.5, 1.5]]).reshape(4, -1)
    w = rng.poisson(1.0, z.shape).astype(float)
    d1, d2 = loss.derivatives(z)
    for weights, scale in ((w, w), (None, 1.0)):
        first, second = loss.weighted_derivatives(z.copy(), weights, second=True)
        np.testing.assert_allclose(first, scale * d1, rtol=1e-14, atol=1e-300)
        # w / e - w / e^2 cancels where f'' is tiny: absolute error ~1e-16, far below the single
        # precision the Hessians are computed in.
        np.testing.assert_allclose(second, scale * d2, rtol=1e-12, atol=1e-15)
        assert loss.weighted_derivatives(z.copy(), weights)[1] is None


def test_scratch_arrays_are_reused_within_and_across_threads_but_not_outside_a_space():
    import threading

    from dpci.batch import scratch, scratch_space

    assert not np.shares_memory(scratch("x", (4, 5)), scratch("x", (4, 5)))  # outside: new arrays
    with scratch_space():
        a = scratch("x", (4, 5))
        assert np.shares_memory(a, scratch("x", (2, 3)))  # a smaller request reuses the array
        assert not np.shares_memory(a, scratch("y", (4, 5)))
    seen = []
    thread = threading.Thread(target=lambda: seen.append(_in_space(scratch, scratch_space)))
    thread.start()
    thread.join()
    assert np.shares_memory(a, seen[0])  # the space given back serves the next thread


def _in_space(scratch, scratch_space):
    with scratch_space():
        return scratch("x", (4, 5))


@pytest.mark.parametrize("before", [True, False])
def test_solver_arrays_skip_numpys_huge_page_request_and_leave_its_switch_as_it_was(before, monkeypatch):
    import dpci.batch as batch_module

    real = batch_module._set_madvise_hugepage
    previous = real(before)
    seen = []
    monkeypatch.setattr(batch_module, "_set_madvise_hugepage", lambda flag: seen.append(flag) or real(flag))
    try:
        a = batch_module._empty((3, 2), np.float32, order="F")
        assert a.shape == (3, 2) and a.dtype == np.float32 and a.flags.f_contiguous
        assert seen == [False, before]  # off for the allocation, then back to the caller's setting
        assert real(before) is before
    finally:
        real(previous)


@pytest.mark.parametrize(
    "loss", [LogisticLoss(), HuberLoss(0.5), HuberLoss(0.05)], ids=["logistic", "huber", "huber-narrow"]
)
@pytest.mark.parametrize("terms", ["weights", "linear", "both"])
def test_shared_hessian_chord_steps_equal_single_solves(loss, terms):
    """Wide rows (d >= SHARED_HESSIAN_D) take chord steps with the full data's Hessian: every replicate
    still ends with ||grad J_b|| <= 1e-10 in double precision, at the single solver's minimiser (both
    within tol / (2c) of it; a replicate whose steps stop contracting is finished by the single solver)."""
    from dpci.batch import SHARED_HESSIAN_D, batch_start
    from dpci.solver import SharedStart

    rng = np.random.default_rng(SHARED_HESSIAN_D)
    n, d, c, B = 4000, SHARED_HESSIAN_D + 2, 1e-3, 12
    X = unit_ball_rows(rng, n, d)
    A = margin_rows(X, logistic_labels(rng, X, 3 * rng.standard_normal(d) / np.sqrt(d)))
    W = np.array([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(B)], dtype=float)
    beta = spherical_laplace(rng, d, 0.2, B)  # strong noise: the replicates land far from theta_0
    W, beta = (None if terms == "linear" else W), (None if terms == "weights" else beta)
    start = batch_start(A, loss, minimise_erm(A, loss, c).theta)
    assert isinstance(start, SharedStart)
    batch = minimise_erm_batch(A, loss, c, W, beta, start=start)
    for b in range(B):
        w = np.ones(n) if W is None else W[b]
        lin = np.zeros(d) if beta is None else beta[b]
        single = minimise_erm(A, loss, c, linear=lin, weights=w).theta
        np.testing.assert_allclose(batch[b], single, atol=1e-10 / c, rtol=0)
        grad = A.T @ (w * loss.derivatives(A @ batch[b])[0]) / n + 2 * c * batch[b] + lin / n
        assert np.linalg.norm(grad) <= 1e-10
