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

PRIVACY_NOTIONS = ("pure", "zcdp")
STEP_NAMES = ("coefficients", "hessian", "covariance")
MIN_BUDGET = 1e-9  # below it the noise scales (1/budget and more) overflow the intervals' arithmetic

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


def positive_finite(value, name: str, number: str = "number", note: str = "") -> float:
    """``value`` as a float, if it is a positive, finite number; else a ValueError that says what
    ``name`` must be (``number`` names its unit, ``note`` adds an alternative)."""
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive {number}{note}, got {value!r}.") from None
    if not (math.isfinite(result) and result > 0):
        raise ValueError(f"{name} must be a positive, finite {number}{note}, got {value!r}.")
    return result


def check_budget(budget, privacy="pure") -> float:
    symbol = "epsilon" if privacy == "pure" else "rho"
    value = positive_finite(budget, f"budget ({symbol})")
    if value < MIN_BUDGET:
        raise ValueError(
            f"budget ({symbol}) = {value:.3g} is below {MIN_BUDGET:g}: the noise would be so large that "
            "the intervals are infinite in floating point. Use a larger budget."
        )
    return value


def rho_from_epsilon(epsilon: float) -> float:
    """An epsilon-DP mechanism is epsilon^2/2-zCDP (Proposition 1); the paper compares at this rho (Section 7.2)."""
    return float(epsilon) ** 2 / 2.0


def epsilon_from_rho(rho: float) -> float:
    """The epsilon whose pure-DP mechanism costs ``rho`` in zCDP: sqrt(2 rho) (inverse of Proposition 1)."""
    return math.sqrt(2.0 * rho)


def rho_for_approx_dp(epsilon: float, delta: float) -> float:
    """The largest rho whose guarantee through Proposition 2 is (epsilon, delta)-DP: the root of
    rho + 2 sqrt(rho log(1/delta)) = epsilon, sqrt(rho) = sqrt(log(1/delta) + epsilon) - sqrt(log(1/delta)).
    Comparing zCDP with epsilon-DP at this rho is a comparison at equal (epsilon, delta); the
    paper's rho = epsilon^2/2 (Section 7.2) is a much weaker guarantee (epsilon = 1: (5.76, 1e-6)-DP)."""
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}.")
    log_term = math.log(1.0 / delta)
    return (math.sqrt(log_term + float(epsilon)) - math.sqrt(log_term)) ** 2


class Split(tuple):
    """The shares of a budget, one per step of a method, in the method's order: for the paper's
    methods (phi1, phi2, phi3) for the coefficients, the Hessian and the covariance; a method with
    other steps (:attr:`dpci.methods.Method.steps`) has as many shares as it has steps.

    Positive and summing to 1; a tuple, so it goes (and compares) wherever a tuple of shares did.
    The app's sliders set phi1 and phi2's *share of the rest* (:meth:`from_rest`,
    :attr:`phi2_rest`), so the three always sum to 1.

    Parameters
    ----------
    *shares : float
        One positive share per step, summing to 1 (to within 1e-9).

    Raises
    ------
    ValueError
        No share, a share that is not positive and finite, or shares that do not sum to 1.

    Examples
    --------
    >>> import dpci
    >>> dpci.Split(0.5, 0.25, 0.25)
    Split(phi1=0.5, phi2=0.25, phi3=0.25)
    >>> dpci.Split.from_rest(0.6, 0.5)  # phi1 = 0.6, and phi2 half of the remaining 0.4
    Split(phi1=0.6, phi2=0.2, phi3=0.2)
    >>> dpci.Split(0.5, 0.25, 0.25) == (0.5, 0.25, 0.25)
    True
    """

    __slots__ = ()

    def __new__(cls, *shares):
        shares = tuple(float(s) for s in shares)
        if not shares:
            raise ValueError("a split needs at least one share.")
        if not all(math.isfinite(s) and s > 0 for s in shares):
            raise ValueError(
                f"every share of the split must be positive: each pays for one step of the release (for the "
                f"paper's methods phi1 the coefficients, phi2 the Hessian, phi3 the covariance), and none "
                f"can be free; got {shares}."
            )
        total = sum(shares)
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"the shares of split must sum to 1, got {shares} (sum {total:.6g}).")
        return super().__new__(cls, shares)

    def __getnewargs__(self):
        return tuple(self)

    def __repr__(self):
        if len(self) == 3:
            return f"Split(phi1={self[0]!r}, phi2={self[1]!r}, phi3={self[2]!r})"
        return f"Split{tuple(self)!r}"

    phi1 = property(lambda self: self[0], doc="share of the first step (the coefficients)")
    phi2 = property(lambda self: self[1], doc="share of the second step (the Hessian)")
    phi3 = property(lambda self: self[2], doc="share of the third step (the gradient covariance)")

    @classmethod
    def from_rest(cls, phi1: float, phi2_rest: float) -> Split:
        """phi1, then phi2 = phi2_rest (1 - phi1) and phi3 the remainder (the app's two sliders)."""
        rest = 1.0 - phi1
        return cls(phi1, rest * phi2_rest, rest * (1.0 - phi2_rest))

    @classmethod
    def even_rest(cls, phi1: float, steps: int = 3) -> Split:
        """phi1, with the other steps splitting the rest equally (Section 7.3.1: phi2 = phi3)."""
        return cls(phi1, *[(1 - phi1) / (steps - 1)] * (steps - 1))

    @classmethod
    def coerce(cls, split, steps: int = 3) -> Split:
        """A Split of ``steps`` shares from a Split or any numbers (a generator too); a clear
        ValueError otherwise."""
        if isinstance(split, Split) and len(split) == steps:
            return split
        try:
            shares = tuple(float(s) for s in split)
        except (TypeError, ValueError):
            raise ValueError(f"split must be {steps} numbers (one share per step), got {split!r}.") from None
        if len(shares) != steps:
            names = " (phi1, phi2, phi3)" if steps == 3 else ""
            raise ValueError(f"split must have {steps} shares{names}, one per step of the method; got {len(shares)}.")
        return cls(*shares)

    @property
    def phi2_rest(self) -> float:
        """phi2's share of what phi1 leaves: phi2 / (phi2 + phi3)."""
        return self[1] / (self[1] + self[2])


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
    """The ledger of one release: each step's spend and their composition.

    What a release spent (``privacy_spent_`` of the estimators, ``PrivateRelease.spend``), made by
    its method's privacy map (:func:`dpci.allocate`), not by hand: read it, don't build it.

    Parameters
    ----------
    privacy : {"pure", "zcdp"}
        The release's privacy notion.
    mechanism : str
        The registered method that released it.
    steps : tuple of StepSpend
        Each step's name, share of the budget, epsilon (None when the step is not pure DP) and rho.

    Raises
    ------
    ValueError
        From :meth:`to_approx_dp`, for a delta outside (0, 1) (construction checks nothing).

    Examples
    --------
    >>> import dpci
    >>> spend = dpci.allocate(1.0, None, "objective", "pure").spend
    >>> spend.epsilon, round(spend.rho, 6)  # pure epsilon adds up; each epsilon_i costs epsilon_i^2 / 2 in rho
    (1.0, 0.241875)
    >>> spend.to_frame()["step"].tolist()
    ['coefficients', 'hessian', 'covariance', 'total']
    """

    privacy: str
    mechanism: str
    steps: tuple[StepSpend, ...]

    @property
    def epsilon(self) -> float | None:
        """Total pure epsilon (Proposition 4), or None when some step is not pure DP."""
        if any(s.epsilon is None for s in self.steps):
            return None
        return math.fsum(s.epsilon for s in self.steps if s.epsilon is not None)

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
    shares: tuple[float, ...]
    phi: tuple[float, ...]
    coef_epsilon: float | None
    spend: PrivacySpend


def step_spends(shares, phi, privacy: str, pure_steps: tuple[bool, ...], names=STEP_NAMES) -> tuple[StepSpend, ...]:
    """One StepSpend per step (``names``: the method's steps). A pure step spending phi_i-DP costs
    phi_i^2/2 in rho (Proposition 1); under zCDP, a step not pure spends its rho amount phi_i directly
    (Theorem 4); the release's total is their composition (Proposition 4)."""
    if not len(names) == len(shares) == len(phi) == len(pure_steps):
        raise ValueError(
            f"{len(names)} steps need as many shares, budgets and flags; got {len(shares)}, "
            f"{len(phi)}, {len(pure_steps)}."
        )
    steps = []
    for name, share, amount, pure in zip(names, shares, phi, pure_steps):
        if privacy == "pure":
            steps.append(StepSpend(name, share, amount, rho_from_epsilon(amount)))
        elif pure:
            # Theorem 2: a pure mechanism run at epsilon_i = sqrt(2 phi_i) costs epsilon_i^2/2 = phi_i.
            steps.append(StepSpend(name, share, epsilon_from_rho(amount), amount))
        else:
            steps.append(StepSpend(name, share, None, amount))
    return tuple(steps)
