"""When a bootstrap run may stop: its Monte Carlo error is below a stated target.

A run of :mod:`dpci.experiments.bootstrap` draws at most ``n_replicates`` replicates; given a
``precision`` it stops earlier, as soon as a check finds the Monte Carlo error small enough:

* **variability intervals**: every endpoint's Monte Carlo standard error (the error of a sample
  quantile of B replicates) is at most ``precision`` times the width of its coordinate's interval;
* **coverage**: the standard error of the overall coverage is at most ``precision``.

The number of replicates follows Andrews and Buchinsky (2000), *A three-step method for choosing
the number of bootstrap repetitions*, Econometrica 68(1), 23-51: estimate the error from the
replicates so far, predict the count B* that brings it to the target (errors fall as 1/sqrt(B)),
run to B* and check again. Here the checks repeat until one passes (their step 3, iterated),
and a prediction is not trusted beyond twice the replicates so far, since an early estimate is
rough.

Checks happen only at replicate counts that are a function of the replicates before them
(:func:`next_checkpoint`: the first at ``first``, then multiples of ``step``), and a check at c
uses replicates 0..c-1 only. Replicates are the same however a run is chunked and whatever runs
them, so the checks, the count a run stops at and its result are too.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

VARIABILITY_FIRST = 200  # replicates before the first check (below, a 2.5% quantile rests on 5 of them)
VARIABILITY_STEP = 100  # later checks at multiples of this: "done: 1,800 replicates"
COVERAGE_FIRST = 100  # coverage replicates are ~100 times dearer; its error estimate is a plain mean's
COVERAGE_STEP = 50
GROWTH = 2.0  # a check is at most this many times the replicates of the one before
_Z_BANDWIDTH = NormalDist().inv_cdf(0.975)  # z_{1 - tau/2} of the Hall-Sheather bandwidth, tau = 0.05


def check_precision(precision, meaning: str) -> float | None:
    """None, or ``precision`` as a float strictly between 0 and 1; else a ValueError saying what it means."""
    if precision is None:
        return None
    if isinstance(precision, bool) or not isinstance(precision, numbers.Real):
        raise ValueError(f"precision must be None or a number strictly between 0 and 1 ({meaning}), got {precision!r}.")
    value = float(precision)
    if not (0.0 < value < 1.0):  # also refuses nan
        raise ValueError(f"precision must lie strictly between 0 and 1 ({meaning}), got {precision!r}.")
    return value


def _at(ordered: np.ndarray, pos: float) -> np.ndarray:
    """Each row of ``ordered`` (sorted) at fractional position ``pos``, interpolated linearly."""
    lo = math.floor(pos)
    hi = min(lo + 1, ordered.shape[1] - 1)
    frac = pos - lo
    return ordered[:, lo] * (1.0 - frac) + ordered[:, hi] * frac


def bandwidth(p: float, count: int) -> int:
    """Half-width m, in order statistics, of the spacing that estimates the density at quantile p:
    m = c_p B^(2/3), the bandwidth of Hall and Sheather (1988) that Andrews and Buchinsky (2000)
    use in their step 2, c_p = z^(2/3) (1.5 phi(z_p)^2 / (2 z_p^2 + 1))^(1/3); at least 1."""
    z_p = NormalDist().inv_cdf(p)
    c_p = _Z_BANDWIDTH ** (2 / 3) * (1.5 * NormalDist().pdf(z_p) ** 2 / (2 * z_p**2 + 1)) ** (1 / 3)
    return max(1, int(c_p * count ** (2 / 3)))


def _quantile_se(ordered: np.ndarray, p: float) -> np.ndarray:
    """Monte Carlo standard error of each row's sample p-quantile (``ordered``: rows sorted, B columns).

    The asymptotic variance of a sample quantile is p (1 - p) / (B f(q)^2) (e.g. Serfling 1980,
    Sec. 2.3.3). 1/f(q) = dQ/dp is estimated, as in step 2 of Andrews and Buchinsky (2000), by
    the spacing of the order statistics m either side of q divided by the probability between
    them (Siddiqui 1960; Bloch and Gastwirth 1968), m from :func:`bandwidth`.
    """
    count = ordered.shape[1]
    pos, m = p * (count - 1), bandwidth(p, count)
    lo, hi = max(0.0, pos - m), min(count - 1.0, pos + m)
    sparsity = (_at(ordered, hi) - _at(ordered, lo)) * (count - 1) / (hi - lo)
    return math.sqrt(p * (1.0 - p) / count) * sparsity


def endpoint_errors(draws, alpha: float) -> np.ndarray:
    """(d, 2): the Monte Carlo standard error of each coordinate's alpha/2 and 1 - alpha/2 sample
    quantiles of ``draws`` (B, d), as a fraction of that coordinate's interval width. A coordinate
    whose draws are all equal has error 0; fewer than 2 draws give inf."""
    draws = np.asarray(draws, dtype=float)
    count, d = draws.shape
    if count < 2:
        return np.full((d, 2), np.inf)
    ordered = np.sort(np.ascontiguousarray(draws.T), axis=1)
    probs = (alpha / 2.0, 1.0 - alpha / 2.0)
    width = _at(ordered, probs[1] * (count - 1)) - _at(ordered, probs[0] * (count - 1))
    se = np.column_stack([_quantile_se(ordered, p) for p in probs])
    positive = width[:, None] > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(positive, se / np.where(positive, width[:, None], 1.0), np.where(se > 0, np.inf, 0.0))


def coverage_error(covered, alpha: float) -> float:
    """Standard error of the overall coverage (the mean over coordinates, then over replicates) of
    ``covered`` (k, d): the replicates' standard deviation over sqrt(k), as
    :attr:`~dpci.experiments.progress.CoverageProgress.overall_coverage` reports it, but at least
    sqrt(alpha (1 - alpha) / (k d)), the error of k d independent checks at the nominal coverage.
    Without that floor a start in which every interval covers (an estimate of 0) would stop a run
    at once, and early runs of hits, whose estimated error is small, would stop it too soon."""
    covered = np.asarray(covered, dtype=float)
    k, d = covered.shape
    if k < 2:
        return math.inf
    se = float(covered.mean(axis=1).std(ddof=1)) / math.sqrt(k)
    return max(se, math.sqrt(alpha * (1.0 - alpha) / (k * d)))


def normal_replicates(alpha: float, target: float) -> float:
    """Andrews and Buchinsky's step 1: the replicates B1 after which the endpoints of a percentile
    interval have Monte Carlo error ``target`` (as a fraction of its width) if the replicates are
    normal, (sqrt(p (1 - p)) / (2 z phi(z)) / target)^2 with p = alpha/2, z = z_{1 - alpha/2}
    (0.68^2 / target^2 for 95% intervals: 1,163 for 2%)."""
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    p = alpha / 2.0
    return (math.sqrt(p * (1.0 - p)) / (2.0 * z * NormalDist().pdf(z)) / target) ** 2


def first_checkpoint(first: int, total: int, step: int = 1, least: float = 0.0) -> int:
    """The replicate count of the first check: ``first``, or ``least`` rounded up to a multiple of
    ``step`` if more, and ``total`` if that is less."""
    return int(min(total, max(first, step * math.ceil(least / step))))


def next_checkpoint(done: int, error: float, target: float, step: int, total: int) -> int:
    """The next check after one at ``done`` replicates found ``error`` above ``target``.

    Andrews and Buchinsky's step 3: an error falling as 1/sqrt(B) reaches the target at
    B* = done (error / target)^2, rounded up here to a multiple of ``step``; the check is at
    least one step on, at most GROWTH times ``done`` and at most ``total``.
    """
    need = done * (error / target) ** 2 if math.isfinite(error) else math.inf
    most = min(total, GROWTH * done)
    at = most if need >= most else step * math.ceil(need / step)
    return int(min(total, max(done + step, at)))


@dataclass(frozen=True)
class Rule:
    """A run's stopping rule: stop at the first check whose ``error_of(rows[:c])`` is at most
    ``target``; checks from ``first`` on, then at :func:`next_checkpoint` (multiples of ``step``, at
    most ``total``)."""

    target: float
    first: int
    step: int
    total: int
    error_of: Callable[[np.ndarray], float]


def run_checks(rows: np.ndarray, checkpoint: int | None, rule: Rule) -> tuple[int | None, int | None]:
    """The checks due now that ``rows`` (one per replicate, in replicate order) are in, from
    ``checkpoint`` on. Returns (the count to stop at, or None; the next checkpoint, or None when no
    check is left)."""
    while checkpoint is not None and checkpoint <= len(rows):
        error = rule.error_of(rows[:checkpoint])
        if error <= rule.target:
            return checkpoint, None
        last = checkpoint >= rule.total
        checkpoint = None if last else next_checkpoint(checkpoint, error, rule.target, rule.step, rule.total)
    return None, checkpoint


def largest_endpoint_error(draws, alpha: float) -> float:
    """The largest of :func:`endpoint_errors`: what a variability run's ``precision`` bounds."""
    return float(endpoint_errors(draws, alpha).max())
