"""Awan and Wang's known-truth logistic design (Simulation-based, finite-sample inference for privatized
data, JASA, Section 5), the design the interval for theta is compared on (docs/theta.md)."""

from __future__ import annotations

import numbers

import numpy as np

from dpci.data.synthetic import _expit
from dpci.noise import check_random_state

#: Awan and Wang's logistic design (Simulation-based, finite-sample inference for privatized data, JASA;
#: Section 5): beta = (0.5, 2) on (1, x) with x ~ Beta(0.5, 0.5) on [-1, 1].
AWAN_WANG_BETA = np.array([0.5, 2.0])


def make_awan_wang(n: int, *, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Awan and Wang's known-truth logistic design, rows in the unit ball.

    x is 2 B - 1 with B ~ Beta(0.5, 0.5) (the arcsine law on [-1, 1]), P(y = +1 | x) = S(0.5 + 2 x), and
    each row (1, x) is divided by the public sqrt(2) (their scaling), so ||row|| <= 1. On these rows the
    true coefficients are sqrt(2) * :data:`AWAN_WANG_BETA`; divide an interval by sqrt(2) for beta's.

    Returns
    -------
    X : numpy.ndarray of shape (n, 2)
        The constant column, then x, both divided by sqrt(2).
    y : numpy.ndarray of shape (n,)
        Labels in {-1.0, +1.0}.
    """
    if not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}.")
    rng = check_random_state(random_state)
    x = 2.0 * rng.beta(0.5, 0.5, n) - 1.0
    X = np.column_stack([np.ones(n), x]) / np.sqrt(2.0)
    y = np.where(rng.random(n) < _expit(AWAN_WANG_BETA[0] + AWAN_WANG_BETA[1] * x), 1.0, -1.0)
    return X, y
