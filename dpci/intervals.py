"""Confidence intervals: Algorithm 3 (objective perturbation), Algorithm 5 (output
perturbation, Monte Carlo and zCDP closed form) and the non-private sandwich; and the Wilson
score interval of a count of hits (the Monte Carlo error of a coverage measured by repetition).

The matrices follow Section 4.3: the Hessian of Eq. 4.2 and the gradient
covariance of Eq. 4.3, both at a given theta. With a_i = y_i x_i, the gradient
of row i is f'(z_i) a_i, so grad f_i grad f_i^T = f'(z_i)^2 a_i a_i^T.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from .solver import row_major_transpose, weighted_grams


def hessian_and_covariance(A, loss, theta, c, weights=None):
    """H[J_n(theta)] (Eq. 4.2) and Sigma (Eq. 4.3, last line) from one pass over the rows.

    ``weights`` are row multiplicities (a bootstrap replicate); n stays the number of rows.
    """
    n, d = A.shape
    AT = row_major_transpose(A)
    d1, d2 = loss.derivatives(theta @ AT)
    if weights is not None:
        d1, d2 = d1 * np.sqrt(weights), d2 * weights  # d1^2 is weighted once
    hessian, covariance = weighted_grams(AT, d2, d1 * d1)  # both in one pass over the rows
    hessian = hessian / n + 2.0 * c * np.eye(d)
    covariance = covariance / n - 4.0 * c * c * np.outer(theta, theta)
    return hessian, covariance


def gaussian_factor(covariance):
    """A matrix L with L L^T = covariance (Cholesky; eigen-decomposition if not PD)."""
    try:
        return np.linalg.cholesky(covariance)
    except np.linalg.LinAlgError:
        w, v = np.linalg.eigh((covariance + covariance.T) / 2.0)
        return v * np.sqrt(np.clip(w, 0.0, None))


def _product_rows(matrix) -> int:
    """Rows of draws per product by ``matrix``: each product small enough that OpenBLAS keeps it on one
    thread (up to about 2^18 multiply-adds; a threaded one as small as these waits for a busy core on a
    shared machine: measured 8-12 ms instead of 0.14 for 10,000 x 11 draws with the other core taken)."""
    return max(1, 2**18 // matrix.size)


def _times(draws, matrix):
    """draws @ matrix (square), written over the draws a block of :func:`_product_rows` rows at a
    time: no second m x d array. A row's result depends only on its block's place in that grid."""
    rows = _product_rows(matrix)
    for start in range(0, draws.shape[0], rows):
        block = draws[start : start + rows]
        np.matmul(block, matrix, out=block)  # numpy reads an overlapping input through a copy
    return draws


DRAW_BLOCK = 2**17  # entries (1 MB) of noise drawn, scaled, multiplied and added while in cache


def _draw_rows(matrix, d) -> int:
    """Rows of d draws per block: about DRAW_BLOCK entries, a whole number of the product's rows."""
    step = 1 if matrix is None else _product_rows(matrix)
    return step * max(1, DRAW_BLOCK // (step * d))


def _add_noise(total, noise_law, rng, matrix=None, subtract=False):
    """total += (or -= if ``subtract``) m draws of ``noise_law`` @ matrix (none when None), bit for bit
    as with the whole m x d draw, drawn a block at a time: no second m x d array, and each block is
    scaled, multiplied and added while in cache. A block is a whole number of the product's rows, so
    :func:`_times` multiplies the same groups of rows as it would the whole draw."""
    m, d = total.shape
    for where, block in noise_law.sample_blocks(rng, d, m, _draw_rows(matrix, d)):
        if matrix is not None:
            block = _times(block, matrix)
        if not subtract:
            total[where] += block
        else:
            total[where] -= block
    return total


def _gaussian_part(hessian, covariance, n, m, rng):
    """m draws of H~^{-1} G / sqrt(n) with G ~ N(0, Sigma~), and H~^{-1} itself."""
    d = hessian.shape[0]
    h_inv = np.linalg.inv(hessian)
    factor = h_inv @ gaussian_factor(covariance) / np.sqrt(n)
    draws, rows = np.empty((m, d)), _draw_rows(factor, d)
    for start in range(0, m, rows):  # rng.standard_normal((m, d)) bit for bit, multiplied while in cache
        _times(rng.standard_normal(out=draws[start : start + rows]), factor.T)
    return draws, h_inv


def objective_offsets(hessian, covariance, n, noise_law, m, rng):
    """Algorithm 3, lines 7-11: m draws of H~^{-1} (G + beta/sqrt(n)) / sqrt(n).

    G ~ N(0, Sigma~) and beta from the same law as Algorithm 1's noise (gamma = epsilon'/2).
    The draws approximate theta_0 - theta~ (Eq. 4.1).
    """
    gauss, h_inv = _gaussian_part(hessian, covariance, n, m, rng)
    return _add_noise(gauss, noise_law, rng, h_inv.T / n)


def output_offsets(hessian, covariance, n, noise_law, m, rng):
    """Algorithm 5, lines 7-11: m draws of H~^{-1} G / sqrt(n) - beta (Eq. 5.2).

    beta follows Algorithm 4's noise law (spherical Laplace with gamma = n c phi1, or
    the Gaussian for zCDP, whose closed form is :func:`output_zcdp_covariance`).
    """
    gauss, _ = _gaussian_part(hessian, covariance, n, m, rng)
    return _add_noise(gauss, noise_law, rng, subtract=True)


def output_zcdp_covariance(hessian, covariance, n, sigma):
    """U = sigma^2 I + H~^{-1} Sigma~ H~^{-1} / n of Algorithm 5, line 19 (sigma^2 = 1/(2 phi1 (nc)^2))."""
    return sigma**2 * np.eye(hessian.shape[0]) + sandwich_covariance(hessian, covariance, n)


MIN_SAMPLES = 100  # Monte Carlo draws m: fewer cannot place a 2.5% quantile
MAX_SAMPLES = 10_000_000  # m x d floats are held at once (10^7 x 10: 800 MB)


def check_count(name, value, least, most=None, hint="") -> int:
    """An integer in [least, most], or a ValueError naming the parameter, the value and the range."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ValueError(
            f"{name} must be an integer of at least {least:,}{f' ({hint})' if hint else ''}, got {value!r}."
        )
    if most is not None and value > most:
        raise ValueError(
            f"{name} = {value:,} is more than {most:,}, which would not fit in memory{f' ({hint})' if hint else ''}."
        )
    return int(value)


def check_alpha(alpha) -> float:
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}.") from None
    if not (0.0 < value < 1.0):
        raise ValueError(f"alpha must lie strictly between 0 and 1 (0.05 gives 95% intervals), got {alpha!r}.")
    return value


def column_quantiles(draws, probs):
    """Quantiles of each column with linear interpolation (``np.quantile``'s default, ``axis=0``):
    q(p) = (1 - g) x_(j) + g x_(j+1), with x_(0) <= ... <= x_(m-1) the column's draws in order (NaN
    last, as ``np.sort`` puts it), j = floor(p (m - 1)) and g its fractional part.

    Only the order statistics the probabilities need are found (:func:`order_statistics`), not the
    whole order, so the result is that of a full sort to the last bit.
    """
    lanes = np.array(np.asarray(draws).T, dtype=float, order="C")  # our copy: reordered in place
    m = lanes.shape[1]
    pos = np.asarray(probs, dtype=float) * (m - 1)
    j = np.floor(pos).astype(int)
    g = pos - j
    above = np.minimum(j + 1, m - 1)
    ranks = np.unique(np.concatenate([j, above]))
    found = order_statistics(lanes, ranks)
    lo, hi = found[:, np.searchsorted(ranks, j)], found[:, np.searchsorted(ranks, above)]
    return np.ascontiguousarray((lo * (1.0 - g) + hi * g).T)


TAIL = 0.1  # ranks within this share of either end are looked for among the draws past a threshold
TAIL_FROM = 2_000  # draws per row from which that pays
SAMPLE = 500  # draws per row (evenly spaced) that place the thresholds


def order_statistics(lanes, ranks):
    """x_(r) for each of the sorted, distinct ``ranks`` in each row of ``lanes`` (d, m), which is reordered.

    When every rank lies in a tail (the 2.5% and 97.5% points of 10,000 Monte Carlo draws), each row's
    ranks are selected among the draws beyond a threshold, chosen from an evenly spaced sample of the
    row so that about 1.5 times as many draws as needed lie beyond it: every draw below a threshold is
    smaller than every draw above it, so x_(r) of the row is x_(r) of the draws below (lower tail), or
    x_(r - k) of the draws above when k draws are not above (upper tail). A row whose threshold keeps
    too few draws is partitioned whole (numpy's selection), and so is every row when a rank lies
    between the tails, when there are fewer than TAIL_FROM draws, or with NaN (or both infinities).
    For 10,000 x 11 draws, the 2.5% and 97.5% points: 1.15 ms, against 1.7 ms for whole partitions.
    """
    d, m = lanes.shape
    low, high = ranks[ranks < TAIL * m], ranks[ranks >= TAIL * m]
    with np.errstate(invalid="ignore"):  # inf - inf is NaN too: such rows are partitioned whole, as NaN rows
        unordered = bool(np.isnan(lanes.sum()))
    if m < TAIL_FROM or np.any(high < (1.0 - TAIL) * m) or unordered:
        lanes.partition(ranks, axis=1)
        return lanes[:, ranks]
    found = np.empty((d, len(ranks)))
    sample = lanes[:, :: m // SAMPLE].copy()
    s = sample.shape[1]
    whole = np.zeros(d, dtype=bool)  # rows whose threshold kept too few
    for wanted, upper in ((low, False), (high, True)):
        if not len(wanted):
            continue
        need = (m - wanted[0]) if upper else (wanted[-1] + 1)
        k = int(1.5 * need * s / m) + 10
        k = max(0, s - 1 - k) if upper else min(s - 1, k)
        sample.partition(k, axis=1)
        mask = lanes > sample[:, k : k + 1] if upper else lanes < sample[:, k : k + 1]
        beyond, counts = lanes[mask], mask.sum(axis=1)  # each row's draws past its threshold, row after row
        ends = np.cumsum(counts)
        columns = np.searchsorted(ranks, wanted)
        for i in range(d):
            part = beyond[ends[i] - counts[i] : ends[i]]
            offset = m - counts[i] if upper else 0
            if counts[i] < need:
                whole[i] = True
                continue
            part.partition(wanted - offset)
            found[i, columns] = part[wanted - offset]
    for i in np.flatnonzero(whole):
        lanes[i].partition(ranks)
        found[i] = lanes[i, ranks]
    return found


def quantile_interval(theta, offsets, alpha):
    """Equal-tailed (1 - alpha) interval: theta + the alpha/2 and 1 - alpha/2 quantiles of the offsets."""
    alpha = check_alpha(alpha)
    lo, hi = column_quantiles(offsets, [alpha / 2.0, 1.0 - alpha / 2.0])
    return np.column_stack([theta + lo, theta + hi])


def normal_interval(theta, cov, alpha):
    """theta_j -/+ z_{alpha/2} sqrt(cov_jj) (Algorithm 5, lines 18-23)."""
    alpha = check_alpha(alpha)
    half = NormalDist().inv_cdf(1.0 - alpha / 2.0) * np.sqrt(np.diag(cov))
    return np.column_stack([theta - half, theta + half])


def sandwich_covariance(hessian, covariance, n):
    """H^{-1} Sigma H^{-1} / n, the non-private asymptotic covariance of theta-hat."""
    h_inv = np.linalg.inv(hessian)
    return h_inv @ covariance @ h_inv.T / n


def too_wide(half_width: float, typical: float) -> bool:
    """Whether intervals of this (mean) half-width are too wide to be useful: they could not tell a
    coefficient of the typical size ``typical`` (a median |coefficient|) from 0, because an interval
    around such a coefficient would still reach 0. The one rule every page, table and recommendation
    uses (:func:`dpci.recommend_c`'s ``useful`` is its negation).

    Parameters
    ----------
    half_width : float
        Half the (mean) width of the intervals.
    typical : float
        A typical |coefficient| of what they estimate (the median over the coefficients).

    Returns
    -------
    bool
        True when ``half_width >= typical`` (or either is NaN).

    Examples
    --------
    >>> too_wide(0.4, 0.5), too_wide(7.0, 1.24)
    (False, True)
    """
    return not half_width < typical


def wilson_interval(hits: int, total: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a proportion: ``hits`` successes in ``total`` independent trials
    (Wilson 1927; Brown, Cai and DasGupta 2001, Eq. 4). Unlike p -/+ z SE it never collapses to a
    point at 0 or all hits (50 of 50 at 95% gives (0.929, 1)) and it stays inside [0, 1].

    >>> [round(v, 3) for v in wilson_interval(47, 50)]
    [0.838, 0.979]
    """
    total = check_count("total", total, 1)
    hits = check_count("hits", hits, 0)
    if hits > total:
        raise ValueError(f"hits must be at most total ({total:,}), got {hits:,}.")
    level = 1.0 - check_alpha(1.0 - level)
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    p, z2n = hits / total, z * z / total
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / total + z2n / (4.0 * total))
    # at 0 or all hits one end is exactly 0 or 1; rounding must not leave it a hair inside
    return (0.0 if hits == 0 else centre - half, 1.0 if hits == total else centre + half)
