"""The progress of a bootstrap run (Section 7.2): what iter_variability and iter_coverage yield after
each chunk, with the intervals, coverage and length computed from the replicates so far, their
Monte Carlo error, and whether a run given a ``precision`` stopped early because it was reached
(:mod:`dpci.experiments.stopping`)."""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..intervals import column_quantiles
from .stopping import coverage_error, endpoint_errors

if TYPE_CHECKING:
    import pandas as pd  # imported where a frame is made: a worker process never needs it (0.15 s)


def _feature_names(names, d):
    return list(names) if names is not None else [f"x{j}" for j in range(d)]


def _percent(fraction: float) -> str:
    """A fraction as a percentage with two significant digits: 0.0097 -> "0.97%", 0.01 -> "1%"."""
    return f"{100 * fraction:.2g}%"


@dataclass(frozen=True)
class _Progress:
    """What every bootstrap run reports: ``done`` of at most ``total`` replicates, against theta_0;
    the run's ``precision`` target (None: it runs all ``total``) and whether a check found it met
    (``converged``: then the run stopped there, with ``done`` the replicates its results use)."""

    done: int
    total: int
    theta0: np.ndarray
    _: KW_ONLY
    precision: float | None = None
    converged: bool = False

    @property
    def finished(self) -> bool:
        """True once the run is over: all ``total`` replicates done, or the precision reached."""
        return self.converged or self.done >= self.total

    @property
    def stopped_early(self) -> bool:
        """True when the precision was reached before ``total`` replicates."""
        return self.converged and self.done < self.total

    def _said(self, achieved: str, asked: str, running: str) -> str:
        """The summary: the count, what the run achieved, and, when it has a target it has not met, the
        target (``asked``: short of it once finished, ``running`` while it runs)."""
        text = self._count() + achieved
        if self.precision is not None and not self.converged:
            text += f", short of the {asked} asked" if self.finished else running
        return text

    def _count(self) -> str:
        if self.finished:
            most = " (the most allowed)" if self.precision is not None and not self.converged else ""
            return f"done: {self.done:,} replicates{most}"
        of = "of at most" if self.precision is not None else "of"
        return f"{self.done:,} {of} {self.total:,} replicates"


@dataclass(frozen=True)
class VariabilityProgress(_Progress):
    """The variability intervals after ``done`` of ``total`` replicates."""

    estimates: np.ndarray = field(repr=False)  # (done, d) private estimates so far
    alpha: float
    elapsed: float

    @property
    def bounds(self) -> np.ndarray:
        """(d, 2): the alpha/2 and 1 - alpha/2 quantiles of the estimates (Section 7.2)."""
        return column_quantiles(self.estimates, [self.alpha / 2, 1 - self.alpha / 2]).T

    @property
    def endpoint_errors(self) -> np.ndarray:
        """(d, 2): each endpoint's Monte Carlo standard error as a fraction of its coordinate's width."""
        return endpoint_errors(self.estimates, self.alpha)

    @property
    def achieved_precision(self) -> np.ndarray:
        """(2,): the largest relative Monte Carlo error over coordinates, of the lower and of the
        upper endpoints (what ``precision`` bounds)."""
        return self.endpoint_errors.max(axis=0)

    @property
    def predicted_total(self) -> int:
        """The replicates the run is predicted to stop at: ``done`` x (achieved / target)^2, as the errors
        fall as 1/sqrt(B) (Andrews and Buchinsky's step 2), at least ``done`` and at most ``total`` (no
        target, or too few replicates to estimate the error: ``total``)."""
        if self.finished:
            return self.done
        if self.precision is None or self.done < 2:
            return self.total
        ratio = float(self.achieved_precision.max()) / self.precision
        return int(min(self.total, max(self.done, math.ceil(self.done * ratio * ratio))))

    def summary(self) -> str:
        """One sentence on the run: "done: 1,800 replicates, endpoints ±0.97% of the width"; with
        the target while it runs, or when the most replicates allowed did not reach it."""
        if self.done < 2:
            return self._count()
        achieved = f", endpoints ±{_percent(float(self.achieved_precision.max()))} of the width"
        asked = f"±{_percent(self.precision)}" if self.precision is not None else ""
        return self._said(achieved, asked, f" so far (target {asked})")

    def to_frame(self, feature_names=None) -> pd.DataFrame:
        import pandas as pd

        b = self.bounds
        return pd.DataFrame(
            {
                "feature": _feature_names(feature_names, len(self.theta0)),
                "theta0": self.theta0,
                "vi_lower": b[:, 0],
                "vi_upper": b[:, 1],
                "vi_length": b[:, 1] - b[:, 0],
                "replicates": self.done,
            }
        )


@dataclass(frozen=True)
class CoverageProgress(_Progress):
    """Coverage of theta_0 and interval length after ``done`` of ``total`` replicates."""

    bounds: np.ndarray = field(repr=False)  # (done, d, 2) private intervals so far
    alpha: float
    elapsed: float

    @property
    def covered(self) -> np.ndarray:
        return (self.bounds[..., 0] <= self.theta0) & (self.theta0 <= self.bounds[..., 1])

    @property
    def lengths(self) -> np.ndarray:
        return self.bounds[..., 1] - self.bounds[..., 0]

    @staticmethod
    def _mean_se(values):
        """Mean over replicates and its Monte Carlo standard error (replicates are independent)."""
        k = len(values)
        mean = values.mean(axis=0)
        se = values.std(axis=0, ddof=1) / math.sqrt(k) if k > 1 else np.full_like(mean, np.nan)
        return mean, se

    @property
    def coverage(self):
        """Per-coordinate coverage and its standard error."""
        return self._mean_se(self.covered.astype(float))

    @property
    def overall_coverage(self):
        """Coverage averaged over coordinates (Section 7.2) and its standard error."""
        return self._mean_se(self.covered.mean(axis=1))

    @property
    def mean_length(self):
        """Per-coordinate mean length and its standard error."""
        return self._mean_se(self.lengths)

    @property
    def overall_length(self):
        return self._mean_se(self.lengths.mean(axis=1))

    @property
    def coverage_error(self) -> float:
        """The overall coverage's standard error as the stopping rule sees it (at least the binomial
        one at the nominal coverage: :func:`dpci.experiments.stopping.coverage_error`)."""
        return coverage_error(self.covered, self.alpha)

    def summary(self) -> str:
        """One sentence on the run: "done: 650 replicates, coverage 0.951 ± 0.0049 (standard error)";
        with the target while it runs, or when the most replicates allowed did not reach it."""
        if self.done < 2:
            return self._count()
        achieved = f", coverage {self.overall_coverage[0]:.3f} ± {self.coverage_error:.2g} (standard error)"
        asked = f"± {self.precision:.2g}" if self.precision is not None else ""
        return self._said(achieved, asked, f", target {asked}")

    def to_frame(self, feature_names=None) -> pd.DataFrame:
        import pandas as pd

        cov, cov_se = self.coverage
        length, length_se = self.mean_length
        return pd.DataFrame(
            {
                "feature": _feature_names(feature_names, len(self.theta0)),
                "theta0": self.theta0,
                "coverage": cov,
                "coverage_se": cov_se,
                "length": length,
                "length_se": length_se,
                "replicates": self.done,
            }
        )
