"""Parameter ranges as data, read by code and docs (scikit-learn's ``Interval`` constraints are the
model): a loss declares the range of each parameter (``dpci.losses.parameter_ranges`` reads them),
and the app draws one control from each.

>>> from dpci.parameters import Interval
>>> Interval(0.1, 1.0).clip(5.0)
1.0
>>> 0.5 in Interval(0.1, 1.0)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Interval", "around"]


@dataclass(frozen=True)
class Interval:
    """A closed range [low, high] of a real parameter, with a control's step and label."""

    low: float
    high: float
    step: float | None = None
    label: str | None = None

    def __post_init__(self):
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"an interval needs finite low < high, got [{self.low!r}, {self.high!r}].")

    def clip(self, value: float) -> float:
        """``value`` moved into the range (an address's value outside it is clipped, never refused)."""
        return min(max(float(value), self.low), self.high)

    def __contains__(self, value) -> bool:
        return self.low <= value <= self.high


def around(default: float) -> Interval:
    """The range of a parameter that declares none: a tenth to ten times its default (which must be
    positive: a loss's widths and scales are), labelled later by its name."""
    if isinstance(default, bool) or not (isinstance(default, (int, float)) and default > 0):
        raise ValueError(f"a loss parameter without a declared range needs a positive default, got {default!r}.")
    low, high = default / 10.0, default * 10.0
    return Interval(low, high, step=float(f"{low:.1g}"))
