"""What a method is: the one object that owns a way of releasing private coefficients and
their confidence intervals -- its name and label, the privacy notions it supports, its
privacy map (what each step spends of a budget, as OpenDP's measurements carry theirs),
how it releases, how its bootstrap replicates are simulated, and its colour in figures.

Nothing outside a method asks which method it is: accounting, release, the bootstrap,
the sweeps, teaching, figures, the command line and the app all read these objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

import numpy as np

from ..accounting import STEP_NAMES, Allocation, PrivacySpend, Split, check_budget, check_choice, step_spends
from ..intervals import check_alpha, normal_interval, quantile_interval
from ..mechanisms import NoiseLaw

NotionName = Literal["pure", "zcdp"]  # a notion's name; the notion itself is dpci.notions.Notion
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
    #: What the method found, from the release alone, that its interval's coverage rests on (each also
    #: warned as an UnderCoverageWarning when the release was made); a page shows them beside it.
    caveats: tuple[str, ...] = field(default=(), repr=False)
    #: The estimand the interval is for: None, the method's own (theta_0(c) for a method with a c).
    estimand: ClassVar[str | None] = None

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
    notions: ClassVar[tuple[NotionName, ...]] = ("pure", "zcdp")
    colors: ClassVar[dict[str, str]] = {}  # notion -> colour in figures
    #: The steps the budget is split into, in order (each spends one share of it; Proposition 4
    #: composes them), and how each is said on a page ("phi2: share for the Hessian").
    steps: ClassVar[tuple[str, ...]] = STEP_NAMES
    step_labels: ClassVar[dict[str, str]] = {
        "coefficients": "the coefficients",
        "hessian": "the Hessian",
        "covariance": "the gradient covariance",
    }
    splits: ClassVar[dict[str, tuple[float, ...]]] = {}  # notion -> default shares, one per step
    description: ClassVar[str] = ""
    how_it_trains: ClassVar[str] = ""  # completes "<Label> ...", for teaching pages
    #: False for a baseline whose interval leaves the privacy noise out (it under-covers by design).
    accounts_for_privacy_noise: ClassVar[bool] = True
    #: The most bootstrap replicates an interactive page should ask for (None: no limit); a method
    #: whose replicate is slow (a posterior per replicate) sets it so a classroom never waits on it.
    max_replicates: ClassVar[int | None] = None
    #: Which steps are pure-DP mechanisms whatever the notion (their zCDP cost is epsilon^2/2).
    pure_steps: ClassVar[tuple[bool, ...]] = (False, False, False)
    #: False for a method with no regulariser c at all (its interval is for the unregularised theta).
    uses_c: ClassVar[bool] = True
    #: True for a method whose release holds a private Hessian of Eq. 4.2 with the public noise law of
    #: :meth:`hessian_noise` (the proven bias bound of an interval for theta is computed from it).
    releases_hessian: ClassVar[bool] = False
    #: True for a method whose interval for theta is, by default, its release corrected for the penalty
    #: (:mod:`dpci.theta`: the estimate and the mechanism's law simulated from the private Hessian).
    corrects_penalty: ClassVar[bool] = False
    #: The losses (models) the method can fit, by name; None: every registered loss.
    losses: ClassVar[tuple[str, ...] | None] = None
    #: True for a method whose coefficients are the trained minimiser plus noise at Algorithm 4's
    #: sensitivity 1/(nc) (a fixed query), so an accuracy-first search can lower that noise by noise
    #: reduction (dpci.accuracy_first); objective perturbation's enters through a data-dependent
    #: objective, where that guarantee fails.
    noise_reducible: ClassVar[bool] = False

    # --- privacy map ---------------------------------------------------------------------------
    def default_split(self, privacy: NotionName) -> Split:
        return Split(*self.splits[self.check_notion(privacy)])

    def step_label(self, step: str) -> str:
        """How a page says what a step's share pays for ("the Hessian")."""
        return self.step_labels.get(step, step.replace("_", " "))

    def measure(self, spec) -> Measurement:
        """The measurement a release specification (:class:`dpci.ReleaseSpec`) makes with this
        method: its privacy map (the allocation and what it spends, which the ledger charges), its
        identity (``spec.key``) and the function that runs it. Raises before any work when the
        settings are invalid (a notion the method lacks, a split of the wrong length)."""
        return Measurement(spec, self, self.allocate(spec.budget, spec.split, spec.privacy))

    def fits(self, loss_name: str) -> bool:
        """Whether the method can fit the model of this loss (:attr:`losses`)."""
        return self.losses is None or loss_name in self.losses

    def check_notion(self, privacy) -> NotionName:
        return check_choice(f"privacy (for method {self.name!r})", privacy, self.notions)

    def allocate(self, budget, split, privacy: str) -> Allocation:
        """The budget split into the three steps and what each spends (Proposition 4 composes them)."""
        privacy = self.check_notion(privacy)
        total = check_budget(budget, privacy)
        shares = self.default_split(privacy) if split is None else Split.coerce(split, len(self.steps))
        phi = tuple(share * total for share in shares)
        steps = step_spends(shares, phi, privacy, self.pure_steps, self.steps)
        coef_epsilon = steps[0].epsilon
        return Allocation(
            privacy, self.name, total, tuple(shares), phi, coef_epsilon, PrivacySpend(privacy, self.name, steps)
        )

    def advice(self, measurement: Measurement, n: int) -> Advice | None:
        """A caution a page shows beside valid settings (``measurement`` on n rows) whose intervals are
        likely to under-cover (the warnings of :meth:`check_settings`), with the smallest c that follows it
        when there is one; None when there is nothing to say. Method-specific advice lives in the method,
        not in the app."""
        from ..exceptions import UnderCoverageWarning, collect_warnings

        with collect_warnings() as caught:  # this thread's only: a job's warnings in another stay with it
            self.check_settings(measurement, n)
        said = [str(w) for w in caught if isinstance(w, UnderCoverageWarning)]
        return Advice(" ".join(said)) if said else None

    #: What to try when no c is large enough for this method (said after RegularisationTooSmall's bound).
    remedy: ClassVar[str] = "give the coefficients more budget (a larger total or φ1) or use more rows"

    def variability_key(self, measurement: Measurement) -> tuple:
        """What this method's bootstrap replicates depend on of the measurement's allocation (a cache key):
        every step's budget by default; a method whose replicates use only some steps says which."""
        alloc = measurement.allocation
        return (alloc.privacy, tuple(round(p, 12) for p in alloc.phi))

    def estimand_c(self, measurement: Measurement, n: int, d: int) -> float:
        """The regularisation of the theta_0 the interval of ``measurement`` on n rows and d coefficients
        targets, the minimiser of the ridge objective at this c (coverage is measured against it).
        Default: the measurement's c; a method that picks its own regulariser returns that one, one that
        targets the unregularised theta returns 0."""
        return measurement.c

    def own_c(self, measurement: Measurement, n: int, d: int) -> float | None:
        """The c this method trains at on n rows and d coefficients whatever the measurement's c (None:
        the measurement's c)."""
        return None

    def offset_law(self, measurement: Measurement, hessian, covariance, n: int) -> OffsetLaw:
        """To first order, per coefficient, the law of theta~ - theta_0(c) of ``measurement`` (at its c) on
        n rows when the Hessian (Eq. 4.2) and gradient covariance (Eq. 4.3) are these;
        :func:`dpci.recommend.recommend_c` predicts widths and coverage from it, at the population's
        matrices and at the private ones of :meth:`interval_matrices`."""
        raise NotImplementedError(f"{self.label} has no model of its interval's width (offset_law).")

    def interval_law(self, law: OffsetLaw) -> OffsetLaw:
        """The law the interval's draws follow when its matrices give ``law`` (itself, unless the interval
        leaves some noise out)."""
        return law

    def interval_matrices(self, measurement: Measurement, hessian, covariance, theta, n: int, rng, draws: int):
        """``draws`` of the private matrices the interval of ``measurement`` would use, stacked (draws, d, d)
        each, for the population matrices given (a method that releases none returns these, repeated)."""
        return np.repeat(hessian[None], draws, axis=0), np.repeat(covariance[None], draws, axis=0)

    def hessian_noise(self, measurement: Measurement, n: int) -> NoiseLaw:
        """The law of the noise on vec of the released Hessian (Algorithm 2) of ``measurement`` on n rows,
        for a method that ``releases_hessian``."""
        raise NotImplementedError(f"{self.label} releases no private Hessian.")

    def smallest_c(self, measurement: Measurement, n: int) -> float | None:
        """The bound the regularisation c must exceed for ``measurement`` (at any c) to run on n rows
        (None: any c > 0)."""
        return None

    # --- releasing -----------------------------------------------------------------------------
    def coefficient_noise_law(self, measurement: Measurement, n: int) -> NoiseLaw:
        """The law of the coefficients' noise of ``measurement`` (at its allocation, loss and c) on n rows;
        raises (e.g. RegularisationTooSmall) when the method cannot run with these settings, before any work."""
        raise NotImplementedError

    def check_settings(self, measurement: Measurement, n: int) -> None:
        """Before any work: raise when the method cannot run ``measurement`` on n rows, warn
        (UnderCoverageWarning) when it can but its intervals are likely to under-cover."""
        self.coefficient_noise_law(measurement, n)

    def release(self, measurement: Measurement, A, rng, closed_form=True) -> PrivateRelease:
        """One release of ``measurement`` (its spec's loss, c, alpha and m, at its allocation) on the
        margin rows A = y x (rows in the unit ball), drawing its noise from ``rng``."""
        raise NotImplementedError

    # --- bootstrap (Section 7.2) ---------------------------------------------------------------
    def replicate_coefficients(self, measurement: Measurement, A, weights, rngs, start, block) -> np.ndarray:
        """The private coefficients of ``measurement`` on bootstrap replicates with row multiplicities
        ``weights`` (B, n), replicate b drawing its noise from ``rngs[b]`` after its weights; ``start``
        (a :class:`dpci.batch.BatchStart`) and ``block`` are the batched solver's."""
        raise NotImplementedError

    def replicate_interval(self, measurement: Measurement, A, theta, law, rng, weights) -> np.ndarray:
        """The (d, 2) private interval of ``measurement`` on one replicate (row multiplicities ``weights``)
        whose coefficients are ``theta``, drawn with the coefficients' noise ``law``."""
        raise NotImplementedError

    # --- presentation --------------------------------------------------------------------------
    def color(self, privacy: str) -> str:
        return self.colors.get(privacy, "#333333")

    def describe(self, privacy: str, short: bool = False) -> str:
        """ "objective perturbation, pure DP" (or "obj, pure DP" with ``short``)."""
        return f"{self.short if short else self.label}, {NOTION_LABELS.get(privacy, privacy)}"

    def __repr__(self):
        return f"<method {self.name!r}: {self.label}>"


@dataclass(frozen=True)
class OffsetLaw:
    """The law of each coordinate of theta~ - theta_0 (or of an interval's Monte Carlo draws): a Gaussian
    part with standard deviations ``sampling_sd`` plus ``noise_weight`` times one coordinate of a draw of
    ``noise`` (for a spherical law, coordinate j of M beta is ||M_j|| beta_1). None: no privacy noise.
    The arrays may carry a leading axis (one row per draw of the matrices the law was computed from)."""

    sampling_sd: np.ndarray
    noise_weight: np.ndarray
    noise: NoiseLaw | None

    @property
    def noise_variance(self) -> np.ndarray:
        d = self.sampling_sd.shape[-1]
        return (
            np.zeros_like(self.sampling_sd)
            if self.noise is None
            else self.noise_weight**2 * self.noise.coordinate_variance(d)
        )

    @property
    def sd(self) -> np.ndarray:
        return np.sqrt(self.sampling_sd**2 + self.noise_variance)

    @property
    def noise_share(self) -> np.ndarray:
        """The privacy noise's share of each coordinate's variance (0: all sampling noise)."""
        total = self.sd**2
        return np.divide(self.noise_variance, total, out=np.zeros_like(total), where=total > 0)


@dataclass(frozen=True)
class Advice:
    """A method's caution about valid settings: what to say, and the smallest c that follows it (None:
    no c helps, or c is not the issue)."""

    message: str
    suggested_c: float | None = None


@dataclass(frozen=True)
class Measurement:
    """A release specification measured by its method: what it spends (``spend``, the ledger's
    charge), its identity (``key``, one for the ledger and every cache) and how it runs (:meth:`run`,
    on margin rows the ledger has admitted). Made by :meth:`Method.measure`."""

    spec: Any  # a dpci.ReleaseSpec (it imports this module, so not named here)
    method: Method
    allocation: Allocation

    @property
    def loss(self):
        """The spec's loss, with its parameters."""
        return self.spec.loss

    @property
    def c(self) -> float:
        """The spec's regularisation coefficient of Eq. 3.1."""
        return self.spec.c

    @property
    def alpha(self) -> float:
        """The spec's alpha (1 - the confidence level)."""
        return self.spec.alpha

    @property
    def n_samples(self) -> int:
        """The spec's Monte Carlo samples m of Algorithms 3 and 5."""
        return self.spec.n_samples

    def at_c(self, c: float) -> Measurement:
        """The same measurement at another c (a method that trains at its own c runs there; its privacy
        map does not depend on c)."""
        return replace(self, spec=replace(self.spec, c=c))

    @property
    def spend(self) -> PrivacySpend:
        return self.allocation.spend

    @property
    def key(self) -> str:
        return self.spec.key

    def check(self, n: int) -> NoiseLaw:
        """Raise before any charge or work when the method cannot run on n rows with these settings
        (e.g. RegularisationTooSmall); returns the coefficients' noise law."""
        return self.method.coefficient_noise_law(self, n)

    def run(self, A, rng, closed_form: bool = True) -> PrivateRelease:
        """The release on margin rows A = y x, drawing its noise from ``rng`` (only after the ledger
        admitted it: :func:`dpci.release.release_spec` does both)."""
        return self.method.release(self, A, rng, closed_form=closed_form)
