"""What a method is: the one object that owns a way of releasing private coefficients and
their confidence intervals -- its name and label, the privacy notions it supports, its
privacy map (what each step spends of a budget, as OpenDP's measurements carry theirs),
how it releases, how its bootstrap replicates are simulated, and its colour in figures.

Nothing outside a method asks which method it is: accounting, release, the bootstrap,
the sweeps, teaching, figures, the command line and the app all read these objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np

from ..accounting import Allocation, PrivacySpend, Split, check_budget, check_choice, step_spends
from ..intervals import check_alpha, normal_interval, quantile_interval
from ..mechanisms import NoiseLaw

Notion = Literal["pure", "zcdp"]
NOTION_LABELS = {"pure": "pure DP", "zcdp": "zCDP"}


@dataclass(frozen=True)
class PrivateRelease:
    """Everything one release publishes (all of it differentially private).

    ``offsets`` are Monte Carlo draws of theta_0 - theta~ (None for a closed form, which keeps
    the covariance ``normal_cov`` instead); both are post-processing, so an interval at another
    alpha costs no budget. ``hessian`` and ``covariance`` are the private matrices of Algorithm 2
    (None for a method that releases none).
    """

    theta: np.ndarray
    hessian: np.ndarray | None
    covariance: np.ndarray | None
    conf_int: np.ndarray
    alpha: float
    n: int
    c: float
    allocation: Allocation
    coef_noise: NoiseLaw | None
    offsets: np.ndarray | None = field(default=None, repr=False)
    normal_cov: np.ndarray | None = field(default=None, repr=False)

    @property
    def spend(self) -> PrivacySpend:
        return self.allocation.spend

    def interval(self, alpha=None) -> np.ndarray:
        """The (1 - alpha) interval, recomputed from the released draws (post-processing)."""
        alpha = self.alpha if alpha is None else check_alpha(alpha)
        if self.offsets is not None:
            return quantile_interval(self.theta, self.offsets, alpha)
        return normal_interval(self.theta, self.normal_cov, alpha)


class Method:
    """Base class of a registered method. A subclass sets the class attributes and implements
    :meth:`coefficient_noise_law`, :meth:`release` and :meth:`replicate_coefficients` (plus
    :meth:`replicate_interval` for coverage); :meth:`allocate` is its privacy map.
    """

    name: ClassVar[str]
    label: ClassVar[str]  # "objective perturbation"
    short: ClassVar[str]  # "obj", for tight labels
    notions: ClassVar[tuple[Notion, ...]] = ("pure", "zcdp")
    colors: ClassVar[dict[str, str]] = {}  # notion -> colour in figures
    splits: ClassVar[dict[str, tuple[float, float, float]]] = {}  # notion -> default shares (phi1, phi2, phi3)
    description: ClassVar[str] = ""
    how_it_trains: ClassVar[str] = ""  # completes "<Label> ...", for teaching pages
    #: False for a baseline whose interval leaves the privacy noise out (it under-covers by design).
    accounts_for_privacy_noise: ClassVar[bool] = True
    #: The most bootstrap replicates an interactive page should ask for (None: no limit); a method
    #: whose replicate is slow (a posterior per replicate) sets it so a classroom never waits on it.
    max_replicates: ClassVar[int | None] = None
    #: Which steps are pure-DP mechanisms whatever the notion (their zCDP cost is epsilon^2/2).
    pure_steps: ClassVar[tuple[bool, bool, bool]] = (False, False, False)

    # --- privacy map ---------------------------------------------------------------------------
    def default_split(self, privacy: Notion) -> Split:
        return Split(*self.splits[self.check_notion(privacy)])

    def check_notion(self, privacy) -> Notion:
        return check_choice(f"privacy (for method {self.name!r})", privacy, self.notions)

    def allocate(self, budget, split, privacy: str) -> Allocation:
        """The budget split into the three steps and what each spends (Proposition 4 composes them)."""
        privacy = self.check_notion(privacy)
        total = check_budget(budget, privacy)
        shares = self.default_split(privacy) if split is None else Split.coerce(split)
        phi = tuple(share * total for share in shares)
        steps = step_spends(shares, phi, privacy, self.pure_steps)
        coef_epsilon = steps[0].epsilon
        return Allocation(
            privacy, self.name, total, tuple(shares), phi, coef_epsilon, PrivacySpend(privacy, self.name, steps)
        )

    def estimand_c(self, alloc: Allocation, n: int, d: int, c: float, loss) -> float:
        """The regularisation of the theta_0 its interval targets, the minimiser of the ridge
        objective at this c (coverage is measured against it). Default: the c it was given; a
        method that picks its own regulariser returns that one, one that targets the unregularised
        theta returns 0."""
        return c

    def smallest_c(self, alloc: Allocation, n: int, loss) -> float | None:
        """The bound the regularisation c must exceed for this method to run (None: any c > 0)."""
        return None

    # --- releasing -----------------------------------------------------------------------------
    def coefficient_noise_law(self, alloc: Allocation, n: int, c: float, loss) -> NoiseLaw:
        """The law of the coefficients' noise; raises (e.g. RegularisationTooSmall) when the method
        cannot run with these settings, before any work."""
        raise NotImplementedError

    def check_settings(self, alloc: Allocation, n: int, c: float, loss) -> None:
        """Before any work: raise when the method cannot run with these settings, warn
        (UnderCoverageWarning) when it can but its intervals are likely to under-cover."""
        self.coefficient_noise_law(alloc, n, c, loss)

    def release(self, A, loss, c, alloc, alpha, n_samples, rng, closed_form=True) -> PrivateRelease:
        """One release on the margin rows A = y x (rows in the unit ball)."""
        raise NotImplementedError

    # --- bootstrap (Section 7.2) ---------------------------------------------------------------
    def replicate_coefficients(self, A, loss, c, alloc, weights, rngs, start, block) -> np.ndarray:
        """The private coefficients of bootstrap replicates with row multiplicities ``weights``
        (B, n), replicate b drawing its noise from ``rngs[b]`` after its weights."""
        raise NotImplementedError

    def replicate_interval(self, A, loss, theta, c, alloc, law, alpha, n_samples, rng, weights) -> np.ndarray:
        """The (d, 2) private interval of one replicate whose coefficients are ``theta``."""
        raise NotImplementedError

    # --- presentation --------------------------------------------------------------------------
    def color(self, privacy: str) -> str:
        return self.colors.get(privacy, "#333333")

    def describe(self, privacy: str, short: bool = False) -> str:
        """ "objective perturbation, pure DP" (or "obj, pure DP" with ``short``)."""
        return f"{self.short if short else self.label}, {NOTION_LABELS.get(privacy, privacy)}"

    def __repr__(self):
        return f"<method {self.name!r}: {self.label}>"
