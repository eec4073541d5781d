"""The privacy notions as values: each says its symbol, its unit, its budgets' readable stops and how
an amount in it converts, so no caller branches on a notion's name.

>>> from dpci.notions import notion
>>> zcdp = notion("zcdp")
>>> zcdp.symbol, zcdp.unit, zcdp.label
('ρ', 'rho', 'ρ-zCDP')
>>> round(zcdp.approx_epsilon(0.5, 1e-6), 3)  # Proposition 2
5.757
>>> notion("pure").approx_epsilon(1.0, 1e-6)  # pure epsilon-DP is (epsilon, 0)-DP
1.0
>>> zcdp.from_pure_epsilon(1.0), zcdp.pure_epsilon(0.5)  # Proposition 1, both ways
(0.5, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from .accounting import epsilon_from_rho, zcdp_to_approx_dp

__all__ = ["NOTIONS", "Notion", "notion"]


@dataclass(frozen=True)
class Notion:
    """A privacy notion: how a budget in it is named, offered and converted.

    Parameters
    ----------
    name : str
        Its key ("pure", "zcdp"): a release specification's ``privacy``.
    label, words : str
        A control's label ("Pure ε-DP") and the words a report uses ("pure differential privacy").
    symbol, unit : str
        "ε" and "epsilon": the unit is also the attribute of a ``PrivacySpend`` that holds its amount.
    stops : tuple of float
        A budget slider's readable stops (about 1-2-2.5-3-4-5-6-7.5 per decade).
    default : float
        The budget offered first.
    needs_delta : bool
        True when its (ε, δ)-DP equivalent needs a δ (zCDP, Proposition 2); pure ε-DP is (ε, 0)-DP.
    counted_by : tuple of str
        The notions of the budgets that can count a release of this notion: a pure ε-DP release is also
        ε²/2-zCDP (Proposition 1); a zCDP release fits no pure budget.
    """

    name: str
    label: str
    words: str
    symbol: str
    unit: str
    stops: tuple[float, ...]
    default: float
    needs_delta: bool
    counted_by: tuple[str, ...]

    def amount(self, spend) -> float:
        """The amount a ``PrivacySpend`` (or a ledger's book) spends, in this notion's unit."""
        return getattr(spend, self.unit)

    def approx_epsilon(self, amount: float, delta: float) -> float:
        """The ε of the (ε, δ)-DP guarantee ``amount`` implies (Proposition 2 for zCDP; δ = 0 for pure)."""
        return zcdp_to_approx_dp(amount, delta) if self.needs_delta else float(amount)

    def pure_epsilon(self, amount: float) -> float:
        """The ε of a pure-DP mechanism costing ``amount`` (Proposition 1 inverted for zCDP: √(2ρ))."""
        return epsilon_from_rho(amount) if self.needs_delta else float(amount)

    def from_pure_epsilon(self, epsilon: float) -> float:
        """The amount a pure-DP mechanism of this ``epsilon`` costs here (Proposition 1: ρ = ε²/2 for
        zCDP), read to twelve significant digits; the inverse of :meth:`pure_epsilon`."""
        return float(f"{epsilon**2 / 2.0 if self.needs_delta else float(epsilon):.12g}")

    def say(self, amount: float) -> str:
        """ "ε = 1" / "ρ = 0.5"."""
        return f"{self.symbol} = {amount:g}"


EPSILONS: tuple[float, ...] = (
    0.01,
    0.02,
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.4,
    0.5,
    0.6,
    0.75,
    1.0,
    1.25,
    1.5,
    2.0,
    2.5,
    3.0,
    4.0,
    5.0,
)
EPSILONS += (6.0, 7.5, 10.0, 15.0, 20.0)
RHOS: tuple[float, ...] = (
    0.0005,
    0.001,
    0.002,
    0.005,
    0.01,
    0.02,
    0.03,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.5,
    0.75,
    1.0,
    1.5,
    2.0,
)
RHOS += (3.0, 5.0, 10.0)

NOTIONS: dict[str, Notion] = {
    "pure": Notion(
        "pure", "Pure ε-DP", "pure differential privacy", "ε", "epsilon", EPSILONS, 1.0, False, ("pure", "zcdp")
    ),
    "zcdp": Notion("zcdp", "ρ-zCDP", "zero-concentrated DP", "ρ", "rho", RHOS, 0.5, True, ("zcdp",)),
}


def notion(name: str) -> Notion:
    """The notion called ``name`` ("pure" or "zcdp"); a ValueError names the choices."""
    if name not in NOTIONS:
        raise ValueError(f"unknown privacy notion {name!r}; use one of {', '.join(map(repr, NOTIONS))}.")
    return NOTIONS[name]
