"""The arithmetic of the privacy ledger: a dataset's budget and the privacy filter that admits releases.

Pure functions, no storage. The argument, step by step, is in docs/privacy-ledger.md; in short:

* A dataset's **budget** is fixed before its first release, in one notion: ``pure`` (epsilon, delta = 0)
  or ``zcdp`` (rho, stated as (epsilon, delta)-DP at the dataset's delta).
* Each release's **charge** is in the budget's unit. Under a pure budget, a release's total epsilon
  (basic composition of its steps, Proposition 4 of the paper); a release that is not pure DP (some
  step is zCDP only) is refused, since no epsilon describes it. Under a zCDP budget, its total rho
  (Proposition 4), a pure epsilon_i step counting epsilon_i^2 / 2 (Proposition 1; Bun & Steinke 2016,
  Prop. 1.4).
* **Group privacy**: where one person may contribute up to k rows, a release that is epsilon-DP for
  one row is k epsilon-DP for one person (Dwork & Roth 2014, Theorem 2.2) and rho-zCDP becomes
  k^2 rho-zCDP (Bun & Steinke 2016, Proposition 1.9); the charge is multiplied accordingly.
* The **filter** admits a release only if the charges so far plus this one stay within the budget.
  With privacy parameters chosen adaptively (after seeing earlier releases) a running sum is a valid
  guarantee only as such a filter, with the budget fixed in advance: for pure DP the basic-composition
  filter of Rogers, Roth, Ullman & Vadhan (2016), for zCDP the filter of Feldman & Zrnic (2021; a
  zCDP filter is a Renyi filter at every order) and Whitehouse, Ramdas, Rogers & Wu (2023).
  Charges are summed with ``math.fsum`` (correctly rounded) and compared with the budget up to
  :data:`ROUNDING` (relative): a release's steps run at share x budget, products rounded to the
  nearest double, so ten releases at 0.1 sum to 1.0000000000000002 in the mechanisms' own parameters.
  The guarantee is therefore budget x (1 + 1e-10): for epsilon = 10, 1e-9 more.
* **Practice data** (public data shipped for teaching, where nobody is protected) is never refused:
  every release is counted, and :func:`curator_refusals` replays the filter over them to mark each
  release a curator holding the same budget would have refused.
* rho-zCDP is reported as (epsilon, delta)-DP by the conversion of Canonne, Kamath & Steinke (2020,
  Proposition 12 / Corollary 13), tighter than the paper's Proposition 2, whichever is smaller.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from scipy.optimize import minimize_scalar

from ..accounting import ApproxDP, PrivacySpend, positive_finite, zcdp_to_approx_dp

NOTIONS = ("pure", "zcdp")
ROUNDING = 1e-10  # relative: covers the rounding of share x budget in thousands of releases
DEFAULT_DELTA = 1e-6


class NotCovered(ValueError):
    """The release is of a notion the dataset's budget cannot pay for (a zCDP release on a pure budget)."""


class BudgetExceeded(ValueError):
    """A release would take a dataset past its budget; nothing was charged and no noise was drawn.

    ``spent`` (before it), ``charge`` (its own) and ``budget`` are in the budget's unit. A
    ``ValueError``, raised by every release (the estimators' ``fit``,
    :func:`~dpci.release.private_confidence_intervals`, searches, the command line) that the active
    ledger refuses.

    Parameters
    ----------
    message : str
        What was refused and what to do instead.
    spent : float
        What the dataset had spent before this release.
    charge : float
        What this release would cost.
    budget : float
        The dataset's budget.

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(2_000, [1.0, -0.5], random_state=0)
    >>> fit = lambda: dpci.PrivateLogisticRegression(mechanism="output", budget=0.6, classes=(-1, 1)).fit(X, y)
    >>> with dpci.Ledger(budget="epsilon=1"):
    ...     model = fit()  # epsilon = 0.6 of 1 spent
    ...     try:
    ...         fit()  # another 0.6 would pass the budget: refused before any noise is drawn
    ...     except dpci.BudgetExceeded as refused:
    ...         print(refused.spent, refused.charge, refused.budget)
    0.6 0.6 1.0
    """

    def __init__(self, message: str, spent: float = math.nan, charge: float = math.nan, budget: float = math.nan):
        super().__init__(message)
        self.spent, self.charge, self.budget = spent, charge, budget

    def __reduce__(self):
        return type(self), (str(self), self.spent, self.charge, self.budget)


def tight_epsilon(rho: float, delta: float) -> float:
    """The epsilon at which rho-zCDP is (epsilon, delta)-DP (Canonne, Kamath & Steinke 2020, Cor. 13):
    for any order a > 1, epsilon = a rho + (log(1/delta) + (a - 1) log(1 - 1/a) - log a) / (a - 1).

    Every a gives a valid bound, so the numerical minimisation can only be loose, never wrong; the
    result is also never above Proposition 2's rho + 2 sqrt(rho log(1/delta)). 0 for rho = 0.
    """
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}.")
    if rho <= 0.0:
        return 0.0
    log_term = math.log(1.0 / delta)

    def bound(log_a_minus_1: float) -> float:
        a = 1.0 + math.exp(log_a_minus_1)
        return a * rho + (log_term + (a - 1.0) * math.log1p(-1.0 / a) - math.log(a)) / (a - 1.0)

    best = minimize_scalar(bound, bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-12})
    return min(float(best.fun), zcdp_to_approx_dp(rho, delta))


def tight_rho(epsilon: float, delta: float) -> float:
    """The largest rho whose :func:`tight_epsilon` at ``delta`` is at most ``epsilon`` (bisection:
    tight_epsilon grows with rho); a zCDP budget stated as (epsilon, delta)-DP."""
    epsilon = positive_finite(epsilon, "epsilon")
    lo, hi = 0.0, epsilon  # tight_epsilon(rho) >= rho, so the root lies below epsilon
    for _ in range(200):
        mid = (lo + hi) / 2
        if tight_epsilon(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return lo


@dataclass(frozen=True)
class Budget:
    """A dataset's privacy budget: ``notion`` "pure" (``amount`` = epsilon, ``delta`` = 0) or "zcdp"
    (``amount`` = rho, reported as (epsilon, delta)-DP at ``delta``).

    Fixed for a dataset before its first release; the :class:`Ledger` admits a release only if the
    dataset's total stays within it (ε adds up under pure DP, ρ under zCDP).

    Parameters
    ----------
    notion : {"pure", "zcdp"}
        Pure epsilon-DP or rho-zCDP.
    amount : float
        The budget: epsilon for "pure", rho for "zcdp"; positive and finite.
    delta : float
        0 for "pure"; for "zcdp" the delta (strictly between 0 and 1) at which the total is stated
        as (epsilon, delta)-DP.

    Raises
    ------
    ValueError
        An unknown notion, an amount that is not a positive finite number, a delta with a pure
        budget, or a zCDP delta outside (0, 1).

    See Also
    --------
    Budget.parse : the same from text (``"epsilon=3"``), as the app's settings and ``DPCI_BUDGET`` give it.
    Budget.approx : the zCDP budget whose total is (epsilon, delta)-DP.

    Examples
    --------
    >>> import dpci
    >>> dpci.Budget.parse("epsilon=3")
    Budget(notion='pure', amount=3.0, delta=0.0)
    >>> dpci.Budget("zcdp", 0.5, delta=1e-6).approx_dp().epsilon  # what rho = 0.5 is as (epsilon, 1e-6)-DP
    5.22...
    """

    notion: str
    amount: float
    delta: float = 0.0

    def __post_init__(self):
        if self.notion not in NOTIONS:
            raise ValueError(f"a budget's notion must be 'pure' or 'zcdp', got {self.notion!r}.")
        unit = "epsilon" if self.notion == "pure" else "rho"
        object.__setattr__(self, "amount", positive_finite(self.amount, f"the budget ({unit})"))
        if self.notion == "pure" and self.delta != 0.0:
            raise ValueError("a pure epsilon-DP budget has delta = 0; for a delta use a zCDP budget (rho, delta).")
        if self.notion == "zcdp" and not (0.0 < self.delta < 1.0):
            raise ValueError(
                f"a zCDP budget states its guarantee at a delta strictly between 0 and 1, got {self.delta!r}."
            )

    @classmethod
    def pure(cls, epsilon: float) -> Budget:
        return cls("pure", epsilon, 0.0)

    @classmethod
    def zcdp(cls, rho: float, delta: float = DEFAULT_DELTA) -> Budget:
        return cls("zcdp", rho, delta)

    @classmethod
    def approx(cls, epsilon: float, delta: float = DEFAULT_DELTA) -> Budget:
        """A zCDP budget whose total is (epsilon, delta)-DP (the largest rho that is, :func:`tight_rho`)."""
        return cls("zcdp", tight_rho(epsilon, delta), delta)

    @classmethod
    def parse(cls, text: str) -> Budget:
        """From configuration text: ``"epsilon=3"`` (pure), ``"rho=0.5,delta=1e-6"`` (zCDP), or
        ``"epsilon=3,delta=1e-6"`` (zCDP at the largest rho that is (3, 1e-6)-DP)."""
        pairs = dict(re.findall(r"(\w+)\s*=\s*([^,;\s]+)", str(text)))
        unknown = set(pairs) - {"epsilon", "rho", "delta"}
        if not pairs or unknown or ("epsilon" in pairs) == ("rho" in pairs):
            raise ValueError(
                f"a budget reads 'epsilon=3' (pure DP), 'rho=0.5,delta=1e-6' (zCDP) or 'epsilon=3,delta=1e-6'; "
                f"got {text!r}."
            )
        try:
            values = {k: float(v) for k, v in pairs.items()}
        except ValueError:
            raise ValueError(f"a budget's values must be numbers, got {text!r}.") from None
        if "rho" in values:
            return cls.zcdp(values["rho"], values.get("delta", DEFAULT_DELTA))
        if "delta" in values:
            return cls.approx(values["epsilon"], values["delta"])
        return cls.pure(values["epsilon"])

    @property
    def unit(self) -> str:
        return "epsilon" if self.notion == "pure" else "rho"

    @property
    def symbol(self) -> str:
        return "ε" if self.notion == "pure" else "ρ"

    def to_text(self) -> str:
        return (
            f"epsilon={self.amount:.17g}" if self.notion == "pure" else f"rho={self.amount:.17g},delta={self.delta:g}"
        )

    def approx_dp(self, amount: float | None = None) -> ApproxDP:
        """``amount`` (default: the whole budget) in the budget's unit as (epsilon, delta)-DP."""
        amount = self.amount if amount is None else amount
        if self.notion == "pure":
            return ApproxDP(amount, 0.0)
        return ApproxDP(tight_epsilon(amount, self.delta), self.delta)

    def describe(self, amount: float | None = None) -> str:
        """``amount`` (default: the budget) in words: "ε = 3" or "ρ = 0.5, that is (ε = 5.22, δ = 1e-06)"."""
        amount = self.amount if amount is None else amount
        if self.notion == "pure":
            return f"ε = {amount:.3g}"
        eps = self.approx_dp(amount).epsilon
        return f"ρ = {amount:.3g}, that is (ε = {eps:.3g}, δ = {self.delta:.0e})"

    def charge(self, spend: PrivacySpend, group_size: int = 1) -> float:
        """What a release with this ``spend`` costs in the budget's unit, for groups of ``group_size``
        rows (module docstring). Raises :class:`NotCovered` for a release the notion cannot pay for."""
        k = check_group_size(group_size)
        if self.notion == "pure":
            if spend.epsilon is None:
                raise NotCovered(
                    "This dataset's budget is pure ε-DP, and this release is ρ-zCDP, which no ε describes. "
                    "Choose pure ε-DP in the settings, or ask whoever runs the server to give the dataset a "
                    "zCDP budget."
                )
            return k * spend.epsilon  # group privacy, Dwork & Roth Theorem 2.2
        return k * k * spend.rho  # group privacy for zCDP, Bun & Steinke Proposition 1.9


def check_group_size(group_size) -> int:
    try:
        k = int(group_size)
    except (TypeError, ValueError):
        k = 0
    if k < 1 or k != group_size:
        raise ValueError(
            f"the number of rows one person may contribute must be a whole number >= 1, got {group_size!r}."
        )
    return k


def total(charges) -> float:
    """The composition of charges in one unit: their correctly rounded sum (basic composition for pure
    DP, Proposition 4 for zCDP)."""
    return math.fsum(charges)


def admits(budget: Budget, charges, charge: float) -> bool:
    """The filter: True when the charges so far and ``charge`` together stay within the budget."""
    return math.fsum([*charges, charge]) <= budget.amount * (1.0 + ROUNDING)


def curator_refusals(budget: Budget, charges) -> list[bool]:
    """For each release in order (its charge in the budget's unit, or None when the budget's notion
    cannot pay for it), whether the filter with this budget refuses it. A refused release adds nothing,
    so the replay is the filter a curator would have run over the same requests."""
    kept: list[float] = []
    refused = []
    for charge in charges:
        no = charge is None or not admits(budget, kept, charge)
        if not no:
            kept.append(charge)
        refused.append(no)
    return refused
