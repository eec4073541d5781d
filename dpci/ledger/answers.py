"""What the ledger answers: a dataset's :class:`Status`, a release's :class:`Preview` before it runs, the
:class:`Admission` written before its noise is drawn, a :class:`StoredRelease` read back, and the
words of a refusal (:mod:`dpci.ledger.ledger` computes them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .filter import DEFAULT_DELTA, Budget, tight_epsilon


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
    and whether the filter admits it (else ``reason``; for practice data, always admitted, ``reason``
    says when a curator would refuse it)."""

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
        return f"{text} {self.reason}" if self.reason else text


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


@dataclass(frozen=True)
class Practice:
    """A practice dataset's ledger (public data: counted, never refused): ``epsilon`` (the releases'
    ε added up, None when one of them is ρ-zCDP only) and ``rho`` spent over ``releases`` releases,
    and for each, whether a curator holding ``budget`` would have refused it (``refused``)."""

    budget: Budget
    epsilon: float | None
    rho: float
    releases: int
    refused: tuple[bool, ...]
    refused_ids: frozenset[str] = frozenset()  # the stored releases among those refused

    @property
    def over(self) -> int:
        """How many releases a curator would have refused."""
        return sum(self.refused)

    def total(self) -> float | None:
        """The one total the practice budget counts, in its own unit: ε added up for a pure budget (None when
        a release was ρ-zCDP only), else the ρ added up turned into ε at the budget's δ (Proposition 2)."""
        if self.budget.notion == "pure":
            return self.epsilon
        return tight_epsilon(self.rho, self.budget.delta or DEFAULT_DELTA)

    def describe(self) -> str:
        """The spend as the budget counts it: "13 releases: ε = 320 at δ = 1e-06 of ε = 10 at δ = 1e-06"."""
        if not self.releases:
            return "no releases yet"
        total = self.total()
        said = "beyond pure ε" if total is None else self._said(total)
        return f"{self.releases} release{'s' * (self.releases != 1)}: {said} of {self.budget_said().split(' (')[0]}"

    def _said(self, epsilon: float) -> str:
        b = self.budget
        return f"ε = {epsilon:.3g}" if b.notion == "pure" else f"ε = {epsilon:.3g} at δ = {b.delta:.0e}"

    def conversion(self) -> str:
        """One sentence for a help tip: how the total was counted, and why it is not the ε's added up."""
        if self.budget.notion == "pure" and self.epsilon is None:
            return f"A ρ-zCDP release has no pure ε, so this pure budget cannot count it: ρ = {self.rho:.3g} so far."
        if self.budget.notion == "pure" or not self.releases:
            return "The ε of each release, added up (basic composition)."
        added = f" (their ε's add up to {self.epsilon:.3g})" if self.epsilon is not None else ""
        return (
            f"The practice budget is counted in zCDP: each release's ρ is added up (ρ = {self.rho:.3g}{added}) and "
            f"the sum is stated as ε at δ = {self.budget.delta:.0e}. For one release that is larger than its ε, "
            "because the conversion pays for δ; for many it is smaller, because the sum of ρ grows with each ε "
            "squared and the conversion only with its square root."
        )

    def budget_said(self) -> str:
        """The practice budget as a teacher reads it: "ε = 10 at δ = 1e-06 (ρ = 1.54)", or "ε = 10"."""
        b = self.budget
        if b.notion == "pure":
            return b.describe()
        return f"ε = {b.approx_dp().epsilon:.3g} at δ = {b.delta:.0e} (ρ = {b.amount:.3g})"

    def mark(self, release_id: str | None = None) -> str:
        """What a curator would do with the stored release ``release_id`` (default: the last release), in
        words; "" when it is within the budget."""
        over = release_id in self.refused_ids if release_id is not None else bool(self.refused and self.refused[-1])
        if not over:
            return ""
        return f"Over a budget of {self.budget_said()}: a curator would refuse this release."


def refusal(status: Status, charge: float, after: float) -> str:
    b = status.budget
    return (
        f"Refused before it ran: this release costs {b.symbol} = {charge:.3g}, and with the {status.spent:.3g} already "
        f"spent on this data the total would be {after:.3g}, over the dataset's budget of {b.amount:.3g}. A budget is "
        "fixed before a dataset's first release, by whoever runs the server (dpci ledger set-budget KEY "
        "epsilon=3). Ask for less privacy budget, show a release already made "
        "again (free), or use a public seed (teaching mode: free, and not private)."
    )
