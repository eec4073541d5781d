"""Coverage, seen: the same release repeated on fresh samples from a known population.

A 95% confidence interval is a procedure that catches the truth in about 95% of repetitions. With
synthetic data drawn from a logistic model with known coefficients (:mod:`dpci.data.synthetic`),
every repetition draws a new sample of n rows and new privacy noise, releases the private interval
and computes the non-private one, and checks whether each contains the population's theta_0 at the
same c (Eq. 3.1 with n -> infinity, :func:`dpci.data.population_theta0`): for a teaching page the
hits and misses stack up one repetition at a time, with the running count of hits and its Wilson
interval (:func:`dpci.intervals.wilson_interval`). The seed is public: the data are synthetic and
nothing here is a private release, so a run is repeated exactly from its seed (:func:`fresh_seed`
draws a new one for each run of the demonstration).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.synthetic import make_synthetic_logistic, population_theta0
from ..intervals import check_count, wilson_interval
from ..noise import check_random_state
from ..release import nonprivate_confidence_intervals
from ..spec import ReleaseSpec, check_spec

KINDS = ("private", "nonprivate")
SEEDS = 2**31  # a public seed is an integer in [0, SEEDS): short enough to read out and type


def fresh_seed() -> int:
    """A new public seed from the operating system, for one run of the demonstration."""
    return secrets.randbelow(SEEDS)


@dataclass(frozen=True)
class RepeatProgress:
    """The repetitions so far: one row per repetition, kind (private, non-private) and coefficient."""

    done: int
    total: int
    theta0: np.ndarray
    frame: pd.DataFrame  # columns: repetition, kind, coefficient, lower, upper, covers

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    def _rows(self, kind: str, coefficient: int | None) -> pd.DataFrame:
        rows = self.frame[self.frame["kind"] == kind]
        return rows if coefficient is None else rows[rows["coefficient"] == coefficient]

    def hits(self, kind: str, coefficient: int | None = None) -> tuple[int, int]:
        """(intervals that cover theta_0, intervals) for a kind, one coefficient or all."""
        rows = self._rows(kind, coefficient)
        return int(rows["covers"].sum()), len(rows)

    def coverage_interval(self, kind: str, coefficient: int | None = None, level: float = 0.95):
        """The Wilson interval of the coverage so far (the Monte Carlo error of :meth:`hits`); NaNs before
        the first repetition."""
        hits, total = self.hits(kind, coefficient)
        return wilson_interval(hits, total, level) if total else (math.nan, math.nan)

    def coverage(self, kind: str, coefficient: int | None = None) -> tuple[float, float]:
        """(share of intervals that cover theta_0, its standard error) for a kind, one coefficient or all.
        The standard error is 0 at no or all hits: :meth:`coverage_interval` is the one to show."""
        hits, total = self.hits(kind, coefficient)
        if not total:
            return math.nan, math.nan
        share = hits / total
        return share, math.sqrt(share * (1 - share) / total)


def iter_repeated_releases(
    theta,
    n: int,
    spec: ReleaseSpec,
    repetitions: int = 100,
    random_state=0,
) -> Iterator[RepeatProgress]:
    """Yield after each repetition: a fresh sample of n rows from the logistic model ``theta`` (the
    constant's last), the private intervals of ``spec`` (a :class:`dpci.ReleaseSpec`) and the
    non-private ones at its loss, c and alpha, and whether they cover theta_0. ``random_state`` (the
    demonstration's public seed, or a Generator) draws the samples and the noise, in this order."""
    repetitions = check_count("repetitions", repetitions, 1, 100_000)
    n = check_count("n", n, 100, 10**7, "rows per repetition")
    theta = np.asarray(theta, dtype=float)
    measurement = check_spec(spec, "iter_repeated_releases").measure()
    # the theta_0 its interval targets: at c, or at the c the method picks itself (dpci.methods.Method.estimand_c)
    target_c = measurement.method.estimand_c(measurement, n, len(theta))
    theta0 = population_theta0(theta, target_c, loss=spec.loss)
    rng = check_random_state(random_state)
    rows: list[dict] = []
    for r in range(repetitions):
        X, y = make_synthetic_logistic(n, theta, random_state=rng)
        private = spec.release(X, y, random_state=rng).conf_int
        nonprivate = nonprivate_confidence_intervals(X, y, spec.loss, c=spec.c, alpha=spec.alpha).conf_int
        for kind, bounds in zip(KINDS, (private, nonprivate)):
            for j, (low, high) in enumerate(bounds):
                rows.append(
                    dict(repetition=r, kind=kind, coefficient=j, lower=low, upper=high, covers=low <= theta0[j] <= high)
                )
        yield RepeatProgress(r + 1, repetitions, theta0, pd.DataFrame(rows))
