"""Budget split and privacy accounting (Propositions 1, 2, 4; Theorems 2 and 4).

The total budget phi (epsilon for pure DP, rho for zCDP) is split into shares
(phi1, phi2, phi3) for the coefficients, the Hessian and the gradient covariance.
Every step reports its own spend and the total is their composition
(Proposition 4), so a ledger can be drawn without recomputing anything.

Under zCDP, objective perturbation is an epsilon-DP mechanism that costs
epsilon1^2 / 2 in rho (Proposition 1, Theorem 2): the rho amount r1 = share1 * rho
is spent by running Algorithm 1 at epsilon1 = sqrt(2 r1). See docs/paper-notes.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MECHANISMS = ("objective", "output")
PRIVACY_NOTIONS = ("pure", "zcdp")
STEP_NAMES = ("coefficients", "hessian", "covariance")

# Table 2 of the paper (Section 7.3). For zCDP + objective perturbation the text of
# Section 7.3.2 says 0.8 but Table 2 and Figure 6 (rho1 = 0.45 of rho = 0.5) say 0.9;
# we follow Table 2 (docs/paper-notes.md).
TABLE2_SPLITS = {
    ("pure", "objective"): (0.65, 0.175, 0.175),
    ("pure", "output"): (0.8, 0.1, 0.1),
    ("zcdp", "objective"): (0.9, 0.05, 0.05),
    ("zcdp", "output"): (0.9, 0.05, 0.05),
}


def check_choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}.")
    return value


def check_budget(budget, privacy="pure") -> float:
    symbol = "epsilon" if privacy == "pure" else "rho"
    try:
        value = float(budget)
    except (TypeError, ValueError):
        raise ValueError(f"budget ({symbol}) must be a positive number, got {budget!r}.") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"budget ({symbol}) must be a positive, finite number, got {budget!r}.")
    return value


def default_split(mechanism: str, privacy: str) -> tuple[float, float, float]:
    """The paper's Table 2 shares (phi1, phi2, phi3) for a mechanism and privacy notion."""
    check_choice("mechanism", mechanism, MECHANISMS)
    check_choice("privacy", privacy, PRIVACY_NOTIONS)
    return TABLE2_SPLITS[(privacy, mechanism)]


def check_split(split, mechanism: str, privacy: str) -> tuple[float, float, float]:
    """Validate shares (phi1, phi2, phi3): three positive numbers summing to 1."""
    if split is None:
        return default_split(mechanism, privacy)
    try:
        shares = tuple(float(s) for s in split)
    except (TypeError, ValueError):
        raise ValueError(f"split must be three numbers (phi1, phi2, phi3), got {split!r}.") from None
    if len(shares) != 3:
        raise ValueError(f"split must have three shares (phi1, phi2, phi3), got {len(shares)}.")
    if not all(math.isfinite(s) and s > 0 for s in shares):
        raise ValueError(
            f"every share of the split must be positive: phi1 pays for the coefficients, phi2 for "
            f"the Hessian and phi3 for the covariance, and none can be free; got {shares}."
        )
    total = sum(shares)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"the shares of split must sum to 1, got {shares} (sum {total:.6g}).")
    return shares


@dataclass(frozen=True)
class StepSpend:
    """Privacy spent by one step: ``epsilon`` for a pure-DP step (else None), its ``rho``."""

    step: str
    share: float
    epsilon: float | None
    rho: float


@dataclass(frozen=True)
class ApproxDP:
    epsilon: float
    delta: float


def zcdp_to_approx_dp(rho: float, delta: float) -> float:
    """Proposition 2: rho-zCDP implies (rho + 2 sqrt(rho log(1/delta)), delta)-DP."""
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}.")
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


@dataclass(frozen=True)
class PrivacySpend:
    """The ledger of one release: each step's spend and their composition."""

    privacy: str
    mechanism: str
    steps: tuple[StepSpend, ...]

    @property
    def epsilon(self) -> float | None:
        """Total pure epsilon (Proposition 4), or None when some step is not pure DP."""
        if any(s.epsilon is None for s in self.steps):
            return None
        return math.fsum(s.epsilon for s in self.steps)

    @property
    def rho(self) -> float:
        """Total rho (Proposition 4); a pure epsilon_i step counts epsilon_i^2/2 (Proposition 1)."""
        return math.fsum(s.rho for s in self.steps)

    def to_approx_dp(self, delta: float) -> ApproxDP:
        """(epsilon, delta)-DP implied by the release (Proposition 2; pure DP also gives delta = 0)."""
        eps = zcdp_to_approx_dp(self.rho, delta)
        if self.epsilon is not None:
            eps = min(eps, self.epsilon)
        return ApproxDP(eps, delta)

    def to_frame(self):
        """The ledger as a pandas DataFrame, one row per step plus the total."""
        import pandas as pd

        rows = [dict(step=s.step, share=s.share, epsilon=s.epsilon, rho=s.rho) for s in self.steps]
        rows.append(dict(step="total", share=sum(s.share for s in self.steps), epsilon=self.epsilon, rho=self.rho))
        return pd.DataFrame(rows)


@dataclass(frozen=True)
class Allocation:
    """The parameters each step runs at, and what the whole release spends.

    ``phi`` holds the budget of each step in the notion of its mechanism: for the
    coefficients under zCDP + objective perturbation, ``coef_epsilon`` =
    sqrt(2 phi[0]) is the epsilon Algorithm 1 runs at.
    """

    privacy: str
    mechanism: str
    budget: float
    shares: tuple[float, float, float]
    phi: tuple[float, float, float]
    coef_epsilon: float | None
    spend: PrivacySpend


def allocate(budget, split, mechanism: str, privacy: str) -> Allocation:
    """Split a total budget into the three steps and account for it."""
    check_choice("mechanism", mechanism, MECHANISMS)
    check_choice("privacy", privacy, PRIVACY_NOTIONS)
    total = check_budget(budget, privacy)
    shares = check_split(split, mechanism, privacy)
    phi = tuple(share * total for share in shares)
    if privacy == "pure":
        # Every step is phi_i-DP, hence phi_i^2/2-zCDP (Proposition 1); Theorems 2 and 4.
        steps = tuple(StepSpend(name, s, p, p * p / 2.0) for name, s, p in zip(STEP_NAMES, shares, phi))
        coef_epsilon = phi[0]
    elif mechanism == "objective":
        # Theorem 2: Algorithm 1 at epsilon1 costs epsilon1^2/2; the rho amount phi1 buys epsilon1 = sqrt(2 phi1).
        coef_epsilon = math.sqrt(2.0 * phi[0])
        steps = (StepSpend(STEP_NAMES[0], shares[0], coef_epsilon, phi[0]),) + tuple(
            StepSpend(name, s, None, p) for name, s, p in zip(STEP_NAMES[1:], shares[1:], phi[1:])
        )
    else:
        # Theorem 4: the Gaussian output perturbation and Algorithm 2 spend their rho directly.
        coef_epsilon = None
        steps = tuple(StepSpend(name, s, None, p) for name, s, p in zip(STEP_NAMES, shares, phi))
    return Allocation(privacy, mechanism, total, shares, phi, coef_epsilon, PrivacySpend(privacy, mechanism, steps))
