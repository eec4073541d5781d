"""Gram products A^T diag(w) A (the Hessian of Eq. 4.2, the covariance of Eq. 4.3 and the solver's
steps): symmetric rank-k updates over chunks of rows must equal the plain product."""

import numpy as np
import pytest
from conftest import unit_ball_rows

from dpci import solver
from dpci.solver import margin_rows, row_major_transpose, weighted_gram, weighted_grams


def _plain(A, w):
    return A.T @ (w[:, None] * A)


@pytest.mark.parametrize("d", [1, 3, 50, 200])
@pytest.mark.parametrize("entries", [solver._GRAM_ENTRIES, 1_000])  # one chunk; many, with a short last one
def test_grams_equal_the_plain_product(monkeypatch, d, entries):
    """Every product of one pass equals A^T diag(w) A to double precision's rounding of a sum of n terms
    (n u ~ 1e-13 relative to the sum of |terms|), and is exactly symmetric; chunks of any size agree."""
    monkeypatch.setattr(solver, "_GRAM_ENTRIES", entries)
    rng = np.random.default_rng(d)
    n = 3_001
    X = unit_ball_rows(rng, n, d)
    A = margin_rows(X, rng.choice([-1.0, 1.0], size=n))
    weights = [rng.uniform(size=n), rng.integers(0, 4, size=n).astype(float), np.zeros(n)]
    grams = weighted_grams(row_major_transpose(A), *weights)
    for w, gram in zip(weights, grams):
        scale = np.abs(A).T @ (w[:, None] * np.abs(A))  # the sum of |terms| bounds the rounding
        assert np.all(np.abs(gram - _plain(A, w)) <= 1e-13 * n * scale + 1e-300)
        np.testing.assert_array_equal(gram, gram.T)
    np.testing.assert_array_equal(weighted_gram(row_major_transpose(A), weights[0]), grams[0])


def test_single_precision_grams_are_within_single_rounding():
    """In single precision (the solver's steps for d >= SINGLE_PRECISION_STEPS_D) the products are within
    n u_32 = n 6e-8 of the sum of |terms|, and still exactly symmetric."""
    rng = np.random.default_rng(1)
    n, d = 2_000, 40
    A = margin_rows(unit_ball_rows(rng, n, d), np.ones(n))
    w = rng.uniform(size=n)
    (gram,) = weighted_grams(row_major_transpose(A), w, dtype=np.float32)
    assert gram.dtype == np.float64
    scale = np.abs(A).T @ (w[:, None] * np.abs(A))
    assert np.all(np.abs(gram - _plain(A, w)) <= 6e-8 * n * scale)
    np.testing.assert_array_equal(gram, gram.T)


@pytest.mark.parametrize(
    "weights, words",
    [([-1.0, 1.0, 1.0], ">= 0"), ([np.nan, 1.0, 1.0], ">= 0"), ([1.0, 1.0], "must be 3 numbers")],
    ids=["negative", "nan", "short"],
)
def test_bad_weights_are_refused_with_a_message(weights, words):
    """Rows are scaled by sqrt(w): a negative or missing weight would give NaN, so it is refused."""
    AT = row_major_transpose(np.ones((3, 2)))
    with pytest.raises(ValueError, match=words):
        weighted_grams(AT, np.array(weights))


def test_large_products_run_on_one_blas_thread(monkeypatch):
    """A Gram product of ONE_THREAD_MACS multiply-adds or more runs with BLAS limited to one thread (on a
    busy machine, OpenBLAS's spinning threads made two threads 12x slower than one); a small one is left
    alone, and the caller's setting is back afterwards."""
    from threadpoolctl import threadpool_info

    def blas_threads():
        return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    before = blas_threads()
    with solver.one_blas_thread(solver.ONE_THREAD_MACS):
        assert set(blas_threads().values()) == {1}
    assert blas_threads() == before
    with solver.one_blas_thread(solver.ONE_THREAD_MACS - 1):
        assert blas_threads() == before
    seen = []
    monkeypatch.setattr(solver, "one_blas_thread", lambda macs: seen.append(macs) or solver.nullcontext())
    weighted_grams(row_major_transpose(np.ones((300, 7))), np.ones(300), np.ones(300))
    assert seen == [300 * 7 * 7]


def test_the_limit_reaches_the_thread_that_computes():
    """A limit set in one thread does not reach another with this OpenBLAS (threadpoolctl measured 2 threads
    in a new thread inside the main thread's limit of 1), so the limit is set by the call itself, in the
    thread that runs the product, and is that thread's own."""
    import threading

    from threadpoolctl import threadpool_info

    seen = []

    def inside():
        with solver.one_blas_thread(solver.ONE_THREAD_MACS):
            seen.append({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})

    thread = threading.Thread(target=inside)
    thread.start()
    thread.join()
    assert seen == [{1}]
