"""A privacy odometer: what every private result computed from one dataset has spent, together.

Each release is charged once under a key naming it: the same data, settings and randomness give the
same release, and looking at it again (or at its interval at another level: post-processing of the
released draws) costs nothing more. Distinct releases compose:

* pure epsilon-DP releases by basic composition: their epsilons add (Proposition 4 of the paper);
* rho-zCDP releases by adding their rhos (Proposition 4); a pure epsilon_i-DP release is also
  epsilon_i^2/2-zCDP (Proposition 1);
* the total as (epsilon, delta)-DP is the smaller of two valid bounds: basic composition of the pure
  part (delta = 0) with the zCDP part converted by Proposition 2, and everything counted in rho and
  converted by Proposition 2.

Results that no guarantee covers (computed with a public seed, or a sweep run on the real data) are
noted as such: they are not charged, since no epsilon describes them; the odometer says the total no
longer bounds what was learned from the data.

An optional cap (in epsilon at the odometer's delta) refuses a charge that would go over it unless
the caller confirms (:class:`BudgetExceeded`). The odometer is shared, never copied
(``copy.deepcopy``, as scikit-learn's ``clone`` does, returns it as it is).

Library code reports to the odometer made active by ``with odometer:``: every private release
(:func:`dpci.private_confidence_intervals`, the estimators' ``fit``) is charged before its noise is
drawn (refused over the cap), and every bootstrap or sweep on data is noted as a result no guarantee
covers (run sweeps on a public stand-in, :mod:`dpci.data.standin`, outside the ``with`` block).
"""

from __future__ import annotations

import hashlib
import math
import threading
import uuid
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from .accounting import ApproxDP, PrivacySpend, positive_finite, zcdp_to_approx_dp

DEFAULT_DELTA = 1e-6


class BudgetExceeded(ValueError):
    """A charge would take the odometer over its cap; ``total`` is the epsilon it would reach."""

    def __init__(self, total: float, cap: float, delta: float):
        self.total, self.cap, self.delta = total, cap, delta
        at = "" if delta == 0 else f" at delta = {delta:.0e}"
        super().__init__(
            f"this release would bring the privacy spent on this dataset to epsilon = {total:.3g}{at}, over "
            f"the cap of {cap:.3g}. Raise the cap, or confirm to spend it anyway."
        )

    def __reduce__(self):
        return (type(self), (self.total, self.cap, self.delta))


@dataclass(frozen=True)
class Entry:
    """One result computed from the data: a private release (``spend`` set) or a result no guarantee
    covers (``spend`` None)."""

    key: str
    what: str
    spend: PrivacySpend | None

    @property
    def private(self) -> bool:
        return self.spend is not None


@dataclass(frozen=True)
class Total:
    """The composition of private releases: ``pure_epsilon`` (basic composition of the releases that
    are pure DP), ``zcdp_rho`` (the rho of the others) and ``rho`` (everything in rho)."""

    releases: int
    pure_epsilon: float
    zcdp_rho: float
    rho: float

    @classmethod
    def of(cls, spends) -> Total:
        spends = list(spends)
        pure = [s.epsilon for s in spends if s.epsilon is not None]
        zcdp = [s.rho for s in spends if s.epsilon is None]
        return cls(len(spends), math.fsum(pure), math.fsum(zcdp), math.fsum(s.rho for s in spends))

    @property
    def is_pure(self) -> bool:
        return self.zcdp_rho == 0.0

    def to_approx_dp(self, delta: float = DEFAULT_DELTA) -> ApproxDP:
        """The total as (epsilon, delta)-DP: delta = 0 when every release is pure DP and basic
        composition is the tighter bound; else the smaller of the two bounds (module docstring)."""
        if self.releases == 0:
            return ApproxDP(0.0, 0.0)
        via_rho = zcdp_to_approx_dp(self.rho, delta) if self.rho > 0 else 0.0
        if self.is_pure:
            return ApproxDP(self.pure_epsilon, 0.0) if self.pure_epsilon <= via_rho else ApproxDP(via_rho, delta)
        mixed = self.pure_epsilon + zcdp_to_approx_dp(self.zcdp_rho, delta)  # basic composition of the two parts
        return ApproxDP(min(mixed, via_rho), delta)


class PrivacyOdometer:
    """The running privacy spend of one dataset (see the module docstring).

    ``cap``: the most epsilon (at ``delta`` when some release is zCDP) the user allows, or None.
    """

    def __init__(self, cap: float | None = None, delta: float = DEFAULT_DELTA, name: str = ""):
        self.cap = _check_cap(cap)
        if not (0.0 < delta < 1.0):
            raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}.")
        self.delta = float(delta)
        self.name = name
        self._entries: dict[str, Entry] = {}
        self._lock = threading.Lock()

    # --- the active odometer --------------------------------------------------------------------
    def __enter__(self) -> PrivacyOdometer:
        self._tokens = [*getattr(self, "_tokens", []), _ACTIVE.set(self)]
        return self

    def __exit__(self, *exc) -> None:
        _ACTIVE.reset(self._tokens.pop())

    # --- sharing, never copying -------------------------------------------------------------
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        eps = self.epsilon()
        return f"<PrivacyOdometer {self.name!r}: {self.total.releases} releases, epsilon {eps:.3g}>"

    # --- reading ------------------------------------------------------------------------------
    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(self._entries.values())

    @property
    def total(self) -> Total:
        return Total.of(e.spend for e in self._entries.values() if e.spend is not None)

    @property
    def not_private(self) -> tuple[Entry, ...]:
        """The results computed from the data that no guarantee covers."""
        return tuple(e for e in self._entries.values() if not e.private)

    def epsilon(self, total: Total | None = None) -> float:
        """The epsilon of the total at the odometer's delta (0 for pure DP when that is tighter)."""
        return (total or self.total).to_approx_dp(self.delta).epsilon

    def has(self, key: str) -> bool:
        return key in self._entries

    def after(self, spend: PrivacySpend, key: str | None = None) -> Total:
        """The total once ``spend`` is charged (unchanged if ``key`` is already charged)."""
        spends = [e.spend for e in self._entries.values() if e.spend is not None]
        if key is None or key not in self._entries:
            spends.append(spend)
        return Total.of(spends)

    def would_exceed(self, spend: PrivacySpend, key: str | None = None) -> bool:
        return self.cap is not None and self.epsilon(self.after(spend, key)) > self.cap * (1 + 1e-12)

    # --- charging -----------------------------------------------------------------------------
    def charge(self, key: str, spend: PrivacySpend, what: str = "", confirm: bool = False) -> bool:
        """Charge a private release; False if ``key`` was already charged (the same release again).

        Raises :class:`BudgetExceeded` (nothing charged) when it would go over the cap, unless ``confirm``.
        """
        if not isinstance(spend, PrivacySpend):
            raise TypeError(f"charge takes a PrivacySpend (a release's .spend), got {spend!r}.")
        with self._lock:
            if key in self._entries:
                return False
            if not confirm and self.would_exceed(spend):
                raise BudgetExceeded(self.epsilon(self.after(spend)), float(self.cap or 0.0), self._delta_shown(spend))
            self._entries[key] = Entry(key, what, spend)
            return True

    def note_not_private(self, key: str, what: str) -> bool:
        """Note a result computed from the data that no guarantee covers; False if already noted."""
        with self._lock:
            if key in self._entries:
                return False
            self._entries[key] = Entry(key, what, None)
            return True

    def set_cap(self, cap: float | None) -> None:
        self.cap = _check_cap(cap)

    def _delta_shown(self, spend):
        after = self.after(spend)
        return after.to_approx_dp(self.delta).delta


_ACTIVE: ContextVar[PrivacyOdometer | None] = ContextVar("dpci_odometer", default=None)


def active() -> PrivacyOdometer | None:
    """The odometer of the innermost ``with odometer:`` block, or None."""
    return _ACTIVE.get()


def data_key(*parts) -> str:
    """A key naming a computation on data: arrays by their bytes, anything else by its repr."""
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        if isinstance(part, np.ndarray):
            digest.update(np.ascontiguousarray(part).tobytes())
            digest.update(repr((part.shape, part.dtype.str)).encode())
        else:
            digest.update(repr(part).encode())
    return digest.hexdigest()


def report_release(spend: PrivacySpend, X, y, settings: tuple, random_state, what: str) -> None:
    """Charge a release to the active odometer, if any, before its noise is drawn. With an integer
    seed the same data, settings and seed are the same release (charged once); with fresh randomness
    (None) or a Generator every call is a new release."""
    meter = active()
    if meter is None:
        return
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        key = data_key(X, y, settings, int(random_state))
    else:
        key = uuid.uuid4().hex
    meter.charge(key, spend, what)


def report_not_private(X, y, settings: tuple, what: str) -> None:
    """Note on the active odometer, if any, a computation on data that no guarantee covers."""
    meter = active()
    if meter is not None:
        meter.note_not_private(data_key(X, y, settings), what)


def _check_cap(cap):
    if cap is None:
        return None
    return positive_finite(cap, "the cap", "epsilon", " (or None)")
