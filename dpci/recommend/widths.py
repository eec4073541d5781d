"""The width and coverage of an interval whose draws are a Gaussian part plus privacy noise."""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from ..mechanisms import NoiseLaw
from ..methods import OffsetLaw
from .reference import PUBLIC_SEED

STANDARD_DRAWS = 1 << 16  # public draws behind the quantiles of a Gaussian-plus-Laplace offset
SHARES = np.linspace(0.0, 1.0, 41)  # the privacy noise's share r of a coordinate's variance, tabulated
LEVELS = np.linspace(0.0, 1.0, 4_001)  # probability levels of the tabulated quantiles


@lru_cache(maxsize=16)
def _standard_quantiles(kind: str, d: int) -> np.ndarray:
    """Quantiles at LEVELS of W_r = sqrt(1 - r) Z + sqrt(r) B for each r in SHARES (one row each): Z
    standard normal, B one coordinate of the noise law in d dimensions scaled to unit variance. From
    STANDARD_DRAWS public draws (a fixed seed; no data)."""
    rng = np.random.default_rng(PUBLIC_SEED)
    z = rng.standard_normal(STANDARD_DRAWS)
    law = NoiseLaw(kind, 1.0)
    b = law.sample(rng, d, STANDARD_DRAWS)[:, 0] / math.sqrt(law.coordinate_variance(d))
    index = np.round(LEVELS * (STANDARD_DRAWS - 1)).astype(int)
    return np.array([np.sort(math.sqrt(1.0 - r) * z + math.sqrt(r) * b)[index] for r in SHARES])


def _standard_cdf(kind: str, d: int, share: float, x: np.ndarray) -> np.ndarray:
    """P(W_r <= x) for the coordinate's share r (linear in r between the tabulated rows)."""
    if kind == "gaussian":  # W_r is standard normal whatever r
        return _normal_cdf(x)
    table = _standard_quantiles(kind, d)
    pos = float(np.interp(share, SHARES, np.arange(len(SHARES))))
    i = min(int(pos), len(SHARES) - 2)
    lo, hi = np.interp(x, table[i], LEVELS), np.interp(x, table[i + 1], LEVELS)
    return lo + (pos - i) * (hi - lo)


def _normal_cdf(x):
    from scipy.special import ndtr

    return ndtr(x)


def half_widths(law: OffsetLaw, alpha: float) -> np.ndarray:
    """The half-width of each coefficient's equal-tailed (1 - alpha) interval whose draws follow ``law``
    (symmetric, so half the distance between its alpha/2 and 1 - alpha/2 quantiles)."""
    if law.noise is None or law.noise.kind == "gaussian":
        return NormalDist().inv_cdf(1.0 - alpha / 2.0) * law.sd
    table = _standard_quantiles(law.noise.kind, law.sd.shape[-1])
    upper = np.array([np.interp(1.0 - alpha / 2.0, LEVELS, row) for row in table])
    return np.interp(law.noise_share, SHARES, upper) * law.sd


def coverage(error: OffsetLaw, halves: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Mean over the rows of ``halves`` (one row of half-widths per draw of the interval's matrices) of
    P(|E_j + shift_j| <= half_j) for E following ``error``: each interval's coverage when its centre is
    off by the error and its target by ``shift`` (a bias the interval may not account for)."""
    kind = "gaussian" if error.noise is None else error.noise.kind
    d = len(error.sd)
    out = np.empty(d)
    for j, (r, sd) in enumerate(zip(error.noise_share, error.sd)):
        h = halves[:, j] / sd
        s = shift[j] / sd
        out[j] = np.mean(_standard_cdf(kind, d, r, h - s) - _standard_cdf(kind, d, r, -h - s))
    return out
