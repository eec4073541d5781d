"""What the ledger answers: a dataset's :class:`Status`, a release's :class:`Preview` before it runs, the
:class:`Admission` written before its noise is drawn, a :class:`StoredRelease` read back, and the
words of a refusal (:mod:`dpci.ledger.ledger` computes them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .filter import Budget


@dataclass(frozen=True)
class Status:
    """What a dataset has spent: ``spent`` of ``budget`` (in its unit) over ``releases`` private
    releases; ``not_private`` results no guarantee covers; for demo data scoped per visitor,
    ``server_spent`` and ``server_releases`` over every visitor of the same data."""

    key: str
    label: str
    budget: Budget
    spent: float
    releases: int
    not_private: int
    group_size: int
    demo: bool
    server_spent: float
    server_releases: int

    @property
    def remaining(self) -> float:
        return max(self.budget.amount - self.spent, 0.0)

    def describe(self) -> str:
        """ "ε = 1.5 of 3 spent in 2 private releases" (zCDP: with its (ε, δ))."""
        plural = "s" * (self.releases != 1)
        return f"{self.budget.describe(self.spent)} of {self.budget.describe()} spent in {self.releases} private release{plural}"


@dataclass(frozen=True)
class Preview:
    """What a release would cost before it runs: its ``charge``, the total ``before`` and ``after`` it,
    and whether the filter admits it (else ``reason``)."""

    charge: float
    before: float
    after: float
    budget: Budget
    admitted: bool
    reason: str = ""

    def describe(self, what: str = "This release") -> str:
        b = self.budget
        if math.isnan(self.charge):  # a notion the budget cannot pay for
            return f"{what} cannot be paid from this dataset's budget: {self.reason}"
        text = f"{what} costs {b.symbol} = {self.charge:.3g}: the budget of this dataset goes from {self.before:.3g} to {self.after:.3g} of {b.amount:.3g}."
        return text if self.admitted else f"{text} {self.reason}"


@dataclass(frozen=True)
class Admission:
    """A charge written to the ledger (``id``), before the release's noise is drawn."""

    id: int
    dataset: str
    private: bool
    charge: float
    spent_before: float
    budget: Budget


@dataclass(frozen=True)
class StoredRelease:
    """A release's public outputs as stored (``payload``), its specification and what it cost."""

    id: str
    dataset: str
    identity: str
    spec: dict
    payload: dict
    created: float
    charge: dict | None = field(default=None)


def refusal(status: Status, charge: float, after: float) -> str:
    b = status.budget
    who, setting = (
        ("each visitor's budget on demo data", "DPCI_DEMO_BUDGET")
        if status.demo
        else ("the dataset's budget", "DPCI_BUDGET")
    )
    return (
        f"Refused before it ran: this release costs {b.symbol} = {charge:.3g}, and with the {status.spent:.3g} already "
        f"spent on this data the total would be {after:.3g}, over {who} of {b.amount:.3g}. Only whoever runs the "
        f"server can set a budget ({setting}, or python -m dpci ledger); ask for less privacy budget here, or use a "
        "public seed (the app's teaching mode: free, and not private)."
    )
