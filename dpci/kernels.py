"""Compiled passes over the data for the batched solver of :mod:`dpci.batch` (Numba).

One pass takes a block of replicates b (row multiplicities W[b], iterates theta_b) and, for every
row i, computes the margin z = a_i . theta_b, the loss derivatives w f'(z) and w f''(z) (Section 6)
and accumulates the gradient sum sum_i W[b, i] f'(z) a_i; with ``second`` it also writes
W[b, i] f''(z) out, in single precision, for the Hessian product of :mod:`dpci.batch`. NumPy takes
five sweeps over a (B, n) array for this (two matrix products and three elementwise passes); here
the rows go by in tiles of TILE that stay in the cache, each tile for every replicate in turn.

Reproducibility: a replicate's numbers depend on its own W[b] and theta_b and on n only, never on
the other replicates of the block. Its margins and derivatives are plain IEEE arithmetic (no
reassociation); its sums run tile by tile in row order, each tile's sum vectorised by the compiler
(``reassoc`` on those reductions only), an order fixed by the tile sizes, which n fixes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .losses import HUBER_KERNEL, LOGISTIC_KERNEL

TILE = 256  # rows per tile: a tile of A (d x 256 doubles) and its margins stay in the L1/L2 cache
# error_model="numpy": x / 0 gives inf rather than raising, which lets the loops be vectorised;
# "contract" lets a * b + c be one fused multiply-add; nogil: threads of one process (the app's
# jobs) compute at once, as in NumPy's matrix products.
_PLAIN: dict[str, Any] = dict(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
_SUMS: dict[str, Any] = dict(
    cache=True, nogil=True, error_model="numpy", fastmath={"contract", "reassoc"}
)  # reductions only

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 = _LN2_HI + _LN2_LO, k * _LN2_HI exact for |k| < 2^11
_LN2_LO = 1.90821492927058770002e-10
_ROUND = 6755399441055744.0  # 1.5 * 2^52: x + _ROUND - _ROUND rounds x to an integer


@intrinsic
def _float_from_bits(typingctx, bits):
    """The float64 whose bit pattern is the int64 ``bits``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@njit(inline="always", **_PLAIN)
def exp_nonpositive(x):
    """e^x for x <= 0, within 1 ulp, in straight-line arithmetic the compiler can vectorise
    (NumPy's exponential is vectorised; a scalar libm call per row is several times slower):
    x = k ln 2 + r with |r| <= ln(2)/2, e^r by its Taylor polynomial of degree 13 (remainder
    < 2e-16), times 2^k from its bits. Below -708 (e^x < 3e-308) it returns 0."""
    y = max(x, -708.0)
    k = (y * _LOG2E + _ROUND) - _ROUND
    r = (y - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 6227020800.0
    for coef in (
        1.0 / 479001600.0,
        1.0 / 39916800.0,
        1.0 / 3628800.0,
        1.0 / 362880.0,
        1.0 / 40320.0,
        1.0 / 5040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ):
        p = p * r + coef
    value = p * _float_from_bits((np.int64(k) + 1023) << 52)
    return value if x >= -708.0 else 0.0


@njit(inline="always", **_PLAIN)
def _logistic(z, w):
    """(w f'(z), w f''(z)) for f(z) = log(1 + e^-z), in the stable form of
    :meth:`dpci.losses.LogisticLoss.value_and_derivatives`: with e = e^-|z|, f' = -S(-z) and
    f'' = e / (1 + e)^2."""
    e = exp_nonpositive(-abs(z))
    inv = 1.0 / (1.0 + e)
    s_minus = e * inv if z >= 0.0 else inv  # S(-z)
    return -(w * s_minus), w * (e * inv * inv)


@njit(inline="always", **_PLAIN)
def _huber(z, w, h):
    """(w f'(z), w f''(z)) for the Huberized hinge of width h (Section 3.3), as
    :meth:`dpci.losses.HuberLoss.value_and_derivatives`: f' = -clip(1 + h - z, 0, 2h) / (2h) and
    f'' = 1/(2h) on the closed middle piece |1 - z| <= h, else 0."""
    first = (-min(max((1.0 + h) - z, 0.0), 2.0 * h) / (2.0 * h)) * w
    return first, (1.0 / (2.0 * h) if abs(1.0 - z) <= h else 0.0) * w


@njit(inline="always", **_PLAIN)
def _derivatives(kernel, param, z, w, m, d2, second):
    """z[:m] <- w f'(z) and, with ``second``, d2[:m] <- w f''(z) (one loop each way, so that the
    loop without second derivatives does not compute them)."""
    if kernel == LOGISTIC_KERNEL and second:
        for r in range(m):
            z[r], d2[r] = _logistic(z[r], w[r])
    elif kernel == LOGISTIC_KERNEL:
        for r in range(m):
            z[r] = _logistic(z[r], w[r])[0]
    elif kernel == HUBER_KERNEL and second:
        for r in range(m):
            z[r], d2[r] = _huber(z[r], w[r], param)
    elif kernel == HUBER_KERNEL:
        for r in range(m):
            z[r] = _huber(z[r], w[r], param)[0]
    else:
        raise ValueError("unknown loss kernel")


@njit(inline="always", **_PLAIN)
def _margins(AT, t0, m, theta, eta, z, y):
    """z[:m] <- a_i . theta and y[:m] <- a_i . eta for the rows t0, ..., t0 + m - 1: two replicates
    per sweep over the tile, four coordinates per sweep over z and y."""
    d = AT.shape[0]
    z[:m] = 0.0
    y[:m] = 0.0
    j = 0
    while j + 4 <= d:
        a0, a1, a2, a3 = AT[j, t0 : t0 + m], AT[j + 1, t0 : t0 + m], AT[j + 2, t0 : t0 + m], AT[j + 3, t0 : t0 + m]
        p0, p1, p2, p3 = theta[j], theta[j + 1], theta[j + 2], theta[j + 3]
        q0, q1, q2, q3 = eta[j], eta[j + 1], eta[j + 2], eta[j + 3]
        for r in range(m):
            x0, x1, x2, x3 = a0[r], a1[r], a2[r], a3[r]
            z[r] = z[r] + p0 * x0 + p1 * x1 + p2 * x2 + p3 * x3
            y[r] = y[r] + q0 * x0 + q1 * x1 + q2 * x2 + q3 * x3
        j += 4
    for k in range(j, d):
        a, p, q = AT[k, t0 : t0 + m], theta[k], eta[k]
        for r in range(m):
            z[r] = z[r] + p * a[r]
            y[r] = y[r] + q * a[r]


@njit(**_SUMS)
def _dots(x, y, a, m):
    """(x . a, y . a) over the first m entries."""
    s = t = 0.0
    for r in range(m):
        s += x[r] * a[r]
        t += y[r] * a[r]
    return s, t


@njit(**_SUMS)
def _dots4(x, y, a0, a1, a2, a3, m):
    """(x . a0, ..., x . a3, y . a0, ..., y . a3) with one sweep over the tile."""
    s0 = s1 = s2 = s3 = t0 = t1 = t2 = t3 = 0.0
    for r in range(m):
        u, v = x[r], y[r]
        b0, b1, b2, b3 = a0[r], a1[r], a2[r], a3[r]
        s0 += u * b0
        s1 += u * b1
        s2 += u * b2
        s3 += u * b3
        t0 += v * b0
        t1 += v * b1
        t2 += v * b2
        t3 += v * b3
    return s0, s1, s2, s3, t0, t1, t2, t3


@njit(inline="always", **_PLAIN)
def _accumulate(AT, t0, m, x, y, g, h):
    """g[j] += sum_r x[r] a_{t0 + r, j} and h[j] += sum_r y[r] a_{t0 + r, j} for every coordinate j."""
    d = AT.shape[0]
    j = 0
    while j + 4 <= d:
        s = _dots4(x, y, AT[j, t0 : t0 + m], AT[j + 1, t0 : t0 + m], AT[j + 2, t0 : t0 + m], AT[j + 3, t0 : t0 + m], m)
        for k in range(4):
            g[j + k] += s[k]
            h[j + k] += s[4 + k]
        j += 4
    for k in range(j, d):
        s0, s1 = _dots(x, y, AT[k, t0 : t0 + m], m)
        g[k] += s0
        h[k] += s1


@njit(**_PLAIN)
def derivative_pass(AT, W, rows, theta, kernel, param, second, d2):
    """Gradient sums of a block of replicates, and their weighted second derivatives.

    AT : (d, n) rows a_i as columns; W : (R, n) row multiplicities (single or double precision);
    rows : (B,) the row of W of each replicate; theta : (B, d) iterates; kernel, param : the loss
    (``Loss.kernel``); d2 : (B, n) float32, set to W f''(z) when ``second``. Returns G (B, d),
    G[b] = sum_i W[rows[b], i] f'(z) a_i. Replicates go in pairs (sharing the loads of the tile);
    an odd one out is paired with itself, the copy's results thrown away, so that every replicate
    is computed by the same instructions wherever it stands in the block.
    """
    d, n = AT.shape
    B = len(rows)
    grad = np.zeros((B + 1, d))  # row B: an odd one out's copy
    spare = np.empty(TILE, dtype=np.float32)
    z, y = np.empty(TILE), np.empty(TILE)
    for t0 in range(0, n, TILE):
        m = min(TILE, n - t0)
        for b in range(0, B, 2):
            c = min(b + 1, B - 1)
            _margins(AT, t0, m, theta[b], theta[c], z, y)
            _derivatives(kernel, param, z, W[rows[b], t0 : t0 + m], m, d2[b, t0 : t0 + m], second)
            _derivatives(
                kernel, param, y, W[rows[c], t0 : t0 + m], m, d2[c, t0 : t0 + m] if c > b else spare[:m], second
            )
            _accumulate(AT, t0, m, z, y, grad[b], grad[c] if c > b else grad[B])
    return grad[:B]


@njit(**_PLAIN)
def count_draws(draws, out):
    """out <- how many times each index appears in ``draws`` (a third of the time of ``np.add.at``)."""
    out[:] = 0.0
    for i in draws:
        out[i] += 1.0


def load():
    """Load the compiled functions (or compile them, the first time: Numba keeps the machine code on
    disk) for the argument types bootstraps pass: single-precision counts, rows writable or read-only
    (memory-mapped in the worker processes). Numba's start-up takes ~0.3 s in a process: better
    before a run than in its first chunk."""
    count_draws(np.zeros(1, dtype=np.int64), np.empty(1, dtype=np.float32))
    rows = np.zeros((1, 1))
    read_only = rows.copy()
    read_only.flags.writeable = False
    for AT in (rows, read_only):
        derivative_pass(
            AT,
            np.ones((1, 1), np.float32),
            np.zeros(1, np.intp),
            np.zeros((1, 1)),
            LOGISTIC_KERNEL,
            0.0,
            True,
            np.empty((1, 1), np.float32),
        )
