"""The progress of a bootstrap run (Section 7.2): what iter_variability and iter_coverage yield after
each chunk, with the intervals, coverage and length computed from the replicates so far."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..intervals import column_quantiles

if TYPE_CHECKING:
    import pandas as pd  # imported where a frame is made: a worker process never needs it (0.15 s)


def _feature_names(names, d):
    return list(names) if names is not None else [f"x{j}" for j in range(d)]


@dataclass(frozen=True)
class _Progress:
    """What every bootstrap run reports: ``done`` of ``total`` replicates, against theta_0."""

    done: int
    total: int
    theta0: np.ndarray

    @property
    def finished(self) -> bool:
        return self.done >= self.total


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
