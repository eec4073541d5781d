"""A public stand-in for a sensitive dataset: synthetic rows built from public facts only.

Tuning a budget split, c or the method on the real data spends privacy at every look (and the
choice itself is never paid for). A stand-in has the real data's public facts -- the number of
rows n (public in the paper: every noise scale uses it, Sections 4-5), the feature names and
count d, whether a constant feature is added -- and nothing else: its rows are drawn as the
known-truth synthetic data are (:func:`make_synthetic_logistic`, rows on the unit sphere, the
paper's "add a constant, then normalise"), its labels from a logistic model with a public
guess of the coefficients. Sweeps run on it cost no privacy; what they recommend is then
used once on the real data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpci.data.preprocessing import CONSTANT_NAME
from dpci.data.synthetic import make_synthetic_logistic

#: The public guess of the coefficients (repeated as needed; the constant's is the last): moderate
#: effects of both signs, as in the app's known-truth synthetic data. No value comes from any data.
DEFAULT_GUESS = (1.5, -1.0, 0.5, -0.3, 0.8, 0.2, -0.6, 1.0, -1.2, 0.4)
DEFAULT_CONSTANT_GUESS = 0.3


@dataclass(frozen=True)
class PublicFacts:
    """What a stand-in may know about the real data (all of it public by assumption)."""

    n: int
    feature_names: tuple[str, ...]  # without the constant
    source: str = ""  # what the facts describe, e.g. "Adult (UCI census)"

    @property
    def d(self) -> int:
        return len(self.feature_names)

    @classmethod
    def of(cls, dataset, source: str | None = None) -> PublicFacts:
        """The public facts of a :class:`~dpci.data.Dataset` (or any object with ``n`` and
        ``feature_names``): it reads those two attributes and never the rows."""
        names = [str(v) for v in dataset.feature_names if v != CONSTANT_NAME]
        return cls(int(dataset.n), tuple(names), source if source is not None else str(getattr(dataset, "name", "")))

    def describe(self) -> str:
        """The facts in words, for a page to say what the stand-in knows."""
        return (
            f"n = {self.n:,} rows and d = {self.d} features (names and count) of {self.source or 'the data'}, "
            "rows in the unit ball with a constant feature; no value of any row"
        )


def stand_in(
    facts: PublicFacts, d: int | None = None, guess: Sequence[float] | None = None, random_state=0
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(X, y, feature names) of a stand-in with ``facts.n`` rows and the first ``d`` features
    (default all) plus the constant; labels from the logistic model with coefficients ``guess``
    (default :data:`DEFAULT_GUESS`, repeated to length d, then the constant's)."""
    d = facts.d if d is None else int(d)
    if not 1 <= d <= max(facts.d, 1):
        raise ValueError(f"the stand-in has {facts.d} features; asked for d = {d}.")
    if guess is None:
        theta = np.append(np.resize(DEFAULT_GUESS, d), DEFAULT_CONSTANT_GUESS)
    else:
        theta = np.asarray(guess, dtype=float)
        if theta.shape != (d + 1,):
            raise ValueError(f"guess must have d + 1 = {d + 1} coefficients (the constant's last), got {theta.shape}.")
    X, y = make_synthetic_logistic(facts.n, theta, random_state=random_state)
    return X, y, [*facts.feature_names[:d], CONSTANT_NAME]


def stand_in_loader(facts: PublicFacts, guess=None, random_state=0):
    """``load(d) -> (X, y, names)`` for the sweeps (:mod:`dpci.experiments.sweeps`) on the stand-in."""

    def load(d):
        return stand_in(facts, int(d), guess, random_state)

    return load
