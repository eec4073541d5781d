"""Inference from one release: standard errors, z statistics, p-values and odds ratios, each a function
of what the release published (its coefficients and the draws or covariance its interval is built from),
so post-processing at no privacy cost (docs/inference.md).

Every interval of a release is theta~_j plus the alpha/2 and 1 - alpha/2 points of a law L_j of
theta_0 - theta~ (Algorithm 3, line 12 and Algorithm 5, line 12: the Monte Carlo draws D_j and their
linearly interpolated quantile function Q_j; Algorithm 5, lines 18-23 and the naive interval: the normal
law N(0, s_j^2)). Kulkarni et al.'s credible interval has the same form, with L_j the posterior draws
minus their mean. The definitions below follow the interval, so they hold for every method:

* standard error: the standard deviation of L_j (the draws' sample standard deviation; s_j in closed form);
* z statistic: theta~_j / SE_j (descriptive; the p-value does not assume it is normal);
* p-value for theta_0_j = 0: the infimum of the alpha whose (1 - alpha) interval excludes 0. The lower
  bound theta~_j + Q_j(alpha/2) exceeds 0 iff alpha > 2 p_lo with p_lo = max{p : Q_j(p) <= -theta~_j},
  and the upper bound falls below 0 iff alpha > 2 (1 - p_hi) with p_hi = min{p : Q_j(p) >= -theta~_j}
  (Q_j is continuous and non-decreasing), so p = min(2 p_lo, 2 (1 - p_hi), 1) and, for every alpha in
  (0, 1), p < alpha exactly when the (1 - alpha) interval excludes 0. Without ties at -theta~_j,
  p_lo = p_hi = F_j(-theta~_j), the draws' interpolated CDF, and p = 2 min(F, 1 - F). In closed form
  p = 2 Phi(-|z|). For a posterior this is the two-sided posterior tail probability of 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import ndtr

#: What an odds ratio here is per (dpci.presentation.odds states it per a feature's public range instead).
ODDS_UNIT = "one unit of the design column as fitted (the scaled feature, rows in the unit ball), the others fixed"

#: The columns of a coefficient table, in order.
COLUMNS = ("estimate", "SE", "z", "p", "lower", "upper")


def standard_errors(release) -> np.ndarray:
    """The standard deviation of each coefficient's interval law: of the Monte Carlo draws (``ddof=1``),
    or the square root of the closed form's variance."""
    if not getattr(release, "valid", True):  # no interval given (dpci.theta): nothing is known
        return np.full(len(release.theta), np.inf)
    if release.offsets is not None:
        return np.std(release.offsets, axis=0, ddof=1)
    return np.sqrt(np.diag(release.normal_cov))


def z_statistics(release) -> np.ndarray:
    """theta~_j / SE_j (NaN where the standard error is 0)."""
    se = standard_errors(release)
    return np.divide(release.theta, se, out=np.full_like(se, np.nan), where=se > 0)


def p_values(release) -> np.ndarray:
    """The p-value of each coefficient being 0, by inverting the release's interval family (module
    docstring): p < alpha exactly when the (1 - alpha) interval excludes 0."""
    if not getattr(release, "valid", True):
        return np.ones(len(release.theta))
    if release.offsets is None:
        return np.minimum(2.0 * ndtr(-np.abs(z_statistics(release))), 1.0)
    draws = np.sort(np.asarray(release.offsets, dtype=float), axis=0)
    # An interval widened by a fixed allowance a on both ends (dpci.theta) has its lower end above 0 when
    # Q(alpha/2) > a - theta~ and its upper end below 0 when Q(1 - alpha/2) < -theta~ - a.
    widen = getattr(release, "allowance", None)
    widen = np.zeros_like(release.theta) if widen is None else widen
    return np.array(
        [_draws_p_value(draws[:, j], a - float(t), -float(t) - a) for j, (t, a) in enumerate(zip(release.theta, widen))]
    )


def _draws_p_value(x: np.ndarray, t_lo: float, t_hi: float) -> float:
    """min(2 p_lo, 2 (1 - p_hi), 1) for the sorted draws x and the thresholds t_lo = t_hi = -theta~_j (an
    interval widened by a: a - theta~_j and -theta~_j - a), where Q is column_quantiles' interpolation:
    Q(p) = (1 - g) x_(k) + g x_(k+1) at p (m - 1) = k + g."""
    m = len(x)
    below_or_at = int(np.searchsorted(x, t_lo, side="right"))  # draws <= t_lo
    below = int(np.searchsorted(x, t_hi, side="left"))  # draws < t_hi
    p_lo = _crossing(x, t_lo, below_or_at, m)  # largest p with Q(p) <= t_lo
    p_hi = _crossing(x, t_hi, below, m)  # smallest p with Q(p) >= t_hi
    return min(2.0 * p_lo, 2.0 * (1.0 - p_hi), 1.0)


def _crossing(x: np.ndarray, t: float, k: int, m: int) -> float:
    """Where Q crosses t between x_(k-1) and x_(k), as a probability (0 before the first draw, 1 after
    the last)."""
    if k == 0:
        return 0.0
    if k == m:
        return 1.0
    lo, hi = x[k - 1], x[k]
    return float((k - 1 + (t - lo) / (hi - lo)) / (m - 1))


def p_value_floor(release) -> float:
    """The smallest p-value the Monte Carlo draws resolve, 2 / m (0 in closed form): below it the draws
    say only that 0 lies beyond (nearly) all of them."""
    return 0.0 if release.offsets is None else 2.0 / release.offsets.shape[0]


def coefficient_table(release, names, alpha=None) -> pd.DataFrame:
    """One row per coefficient: estimate, SE, z, p and the (1 - alpha) interval (the release's alpha by
    default), indexed by ``names``; ``attrs`` keeps the level and the p-value floor."""
    bounds = release.interval(alpha)
    table = pd.DataFrame(
        {
            "estimate": release.theta,
            "SE": standard_errors(release),
            "z": z_statistics(release),
            "p": p_values(release),
            "lower": bounds[:, 0],
            "upper": bounds[:, 1],
        },
        index=pd.Index(list(names), name="feature"),
    )
    table.attrs["alpha"] = release.alpha if alpha is None else float(alpha)
    table.attrs["p_floor"] = p_value_floor(release)
    return table


def odds_ratio_table(table: pd.DataFrame) -> pd.DataFrame:
    """exp of the estimate and of both bounds of a table with columns estimate, lower and upper: the
    odds ratios of a logistic model per unit of each (scaled) design column. exp is increasing, so the
    interval of exp(theta_j) is the image of theta_j's interval, with its level and its privacy."""
    out = np.exp(table[["estimate", "lower", "upper"]]).rename(columns={"estimate": "odds_ratio"})
    out.attrs = dict(table.attrs, unit=ODDS_UNIT)
    return out
