"""The app's state, ``AppState(spec, data, view)``, and its serialisation: one flat dict of dotted keys
that the session's store, the address and a settings file hold. Its spec keys are the library's field
names (``method``, ``privacy``, ``budget``, ``split.<step>`` shares, ``loss`` and ``loss.<p>``, ``c``,
``alpha``, ``n_samples``), so a stored release's record (``ReleaseSpec.to_dict()``) names the spec the same
way. Older addresses and files open through :func:`ui.settings.translated`. Pure: no Streamlit here.

* ``spec``: the :class:`~dpci.spec.ReleaseSpec`, everything the release depends on (method, notion and
  ONE budget, the split by step, the loss with its parameters, c, alpha, m, the randomness);
* ``data``: the data choice (dataset, d, n, scaling) and how its noise is drawn (randomness, seed);
* ``view``: what only changes how a release is shown (estimand, bound B, delta, layout, replicates).

Caches and stored releases are keyed by the spec (and the data), never by the view.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from dpci import methods as registry
from dpci.losses import get_loss, loss_parameters, loss_params
from dpci.notions import NOTIONS, Notion, notion
from dpci.recommend import theta_refusal
from dpci.spec import ReleaseSpec
from dpci.theta import offers_theta

__all__ = ["AppState", "DataChoice", "View", "declared_defaults", "fractions_of", "shares_of", "split_keys"]


@dataclass(frozen=True)
class DataChoice:
    """The data a release is of, and how its noise is drawn."""

    dataset: str = "adult"  # a key of ui.settings.DATASETS
    d: int = 10
    n: int = 0  # 0: all rows
    scaling: str = "global"  # a key of ui.settings.SCALINGS
    # "auto": fresh OS randomness for real data (Adult, an upload), the public seed for the synthetic data
    randomness: str = "auto"
    seed: int = 0  # the public seed of teaching mode (the spec's seed then; None otherwise)

    @property
    def teaching(self) -> bool:
        """Teaching mode: a fixed, public seed (not a private release)."""
        if self.randomness == "auto":
            return self.dataset == "synthetic"
        return self.randomness == "teaching"


@dataclass(frozen=True)
class View:
    """How a release is shown: none of these change its noise, so no cache is keyed by them."""

    estimand: str = "unregularised"  # a key of ui.settings.ESTIMANDS (post-processing)
    theta_bound: float = 0.0  # B, a public bound on ||theta|| the user states (0: none stated)
    delta: float = 1e-6  # the delta of a zCDP release's (epsilon, delta) equivalent, for display
    vi_replicates: int = 10_000  # the variability interval's bootstrap replicates
    layout: str = "standard"  # a key of ui.settings.VIEWS: "presentation" enlarges the Explorer


# The serialisation's plain keys (the dotted ones are declared by the loss and the method). The spec's are
# the library's own field names (dpci.spec.ReleaseSpec.to_dict): the address, a settings file and a stored
# release's record name a spec one way. The loss's name is under "loss", its parameters under "loss.<p>";
# the split is one share of the whole per step, "split.<step>".
SPEC_KEYS = frozenset({"method", "privacy", "budget", "loss", "c", "alpha", "n_samples"})
DATA_KEYS = tuple(DataChoice.__dataclass_fields__)
VIEW_KEYS = {**{f: f for f in View.__dataclass_fields__ if f != "layout"}, "view": "layout"}
_SPEC = ReleaseSpec()
DEFAULTS: dict = {
    "method": _SPEC.method,
    "privacy": _SPEC.privacy,
    "budget": _SPEC.budget,
    "loss": _SPEC.loss.name,
    "c": _SPEC.c,
    "alpha": _SPEC.alpha,
    "n_samples": _SPEC.n_samples,
    **asdict(DataChoice()),
    **{key: getattr(View(), name) for key, name in VIEW_KEYS.items()},
}
FIELDS = {k: type(v) for k, v in DEFAULTS.items()}  # each plain key's type (the coercion of text, ui.settings)

# The sliders' default fractions: the first step's share, then each later step but the last takes half of
# what is left, the last two equal halves: round shares that sum to 1 (0.65 / 0.175 / 0.175).
FIRST_DEFAULT = 0.65
SHARE_DIGITS = 12  # shares are kept to 12 decimals, so a round split is written as itself (0.175)


def declared_defaults(loss: str, method: str) -> dict[str, float]:
    """The dotted keys a loss and a method declare, with their defaults: each loss parameter
    (``loss.h``), and each step's share of the budget (``split.hessian``)."""
    steps = registry.get(method).steps
    return {**{f"loss.{p}": v for p, v in loss_parameters(loss).items()}, **split_keys(steps, default_shares(steps))}


def default_shares(steps) -> tuple[float, ...]:
    """The sliders' default split of these steps (:data:`FIRST_DEFAULT`, then halves)."""
    return shares_of([FIRST_DEFAULT, *[0.5] * (len(steps) - 2)])


def _split(declared: dict, steps) -> tuple[float, ...]:
    """The shares ``declared`` holds for these steps; the defaults where they do not make one split (a
    store that held another method's steps, or an address that gave only some)."""
    shares = tuple(float(declared.get(f"split.{s}", math.nan)) for s in steps)
    if not (all(x > 0 for x in shares) and abs(sum(shares) - 1.0) <= 1e-9):
        return default_shares(steps)
    return shares


def split_keys(steps, shares) -> dict[str, float]:
    """The split as the serialisation holds it: ``split.<step>`` -> its share."""
    return {f"split.{s}": float(share) for s, share in zip(steps, shares)}


def shares_of(fractions) -> tuple[float, ...]:
    """The shares of the steps from each one's fraction of what the steps before it leave (stick
    breaking: the last step takes the remainder), so they sum to 1 (to 12 decimals)."""
    shares, rest = [], 1.0
    for fraction in fractions:
        shares.append(rest * fraction)
        rest *= 1.0 - fraction
    return tuple(round(share, SHARE_DIGITS) for share in (*shares, rest))


def fractions_of(shares) -> tuple[float, ...]:
    """The inverse of :func:`shares_of`: each step's share of what is left, but the last's (to 12
    decimals, so a round fraction is written as itself)."""
    fractions, rest = [], 1.0
    for share in list(shares)[:-1]:
        fractions.append(round(share / rest, 12))
        rest -= share
    return tuple(fractions)


# The budget sliders' stops are each notion's (dpci.notions); the number box beside them takes any
# budget, kept to two significant digits (BUDGET_DIGITS).
BUDGET_DIGITS = 2


def budget_value(value: float) -> float:
    """A budget as the app keeps it: a slider's stop as it is (1.25), any other value to two significant
    digits (the number box's)."""
    value = float(value)
    if any(math.isclose(value, stop, rel_tol=1e-9) for n in NOTIONS.values() for stop in n.stops):
        return value
    return float(f"{value:.{BUDGET_DIGITS}g}")


def converted_budget(amount: float, source: Notion, target: Notion) -> float:
    """A budget in another notion for the same pure epsilon (Proposition 1: rho = epsilon^2 / 2), as the
    app keeps budgets: the budget a switch of notion keeps, and an old address's budget in the other unit."""
    return budget_value(target.from_pure_epsilon(source.pure_epsilon(amount)))


@dataclass(frozen=True)
class AppState:
    """The app's state: the release specification, the data choice and the view."""

    spec: ReleaseSpec = field(default_factory=ReleaseSpec)
    data: DataChoice = field(default_factory=DataChoice)
    view: View = field(default_factory=View)

    @classmethod
    def from_values(cls, values: dict) -> AppState:
        """The state of its serialisation (the session's store, an address or a file already coerced:
        ui.settings.settings_values). A budget, loss parameter or split not held takes its default (the
        budget's is its notion's)."""
        v = {**DEFAULTS, "budget": notion(values.get("privacy", DEFAULTS["privacy"])).default, **values}
        steps = registry.get(v["method"]).steps
        declared = {**declared_defaults(v["loss"], v["method"]), **{k: x for k, x in v.items() if "." in k}}
        data = DataChoice(**{k: v[k] for k in DATA_KEYS})
        spec = ReleaseSpec(
            v["method"],
            v["privacy"],
            float(v["budget"]),
            _split(declared, steps),
            get_loss(v["loss"], **{p: float(declared[f"loss.{p}"]) for p in loss_parameters(v["loss"])}),
            v["c"],
            v["alpha"],
            v["n_samples"],
            data.seed if data.teaching else None,
        )
        return cls.from_parts(spec, v)

    @classmethod
    def from_parts(cls, spec: ReleaseSpec, values: dict) -> AppState:
        """The state of a release specification, exactly, with the data and view keys of ``values``
        (the others their defaults): a stored release reopened."""
        v = {**DEFAULTS, **values}
        data = DataChoice(**{k: v[k] for k in DATA_KEYS})
        return cls(spec, data, View(**{name: v[key] for key, name in VIEW_KEYS.items()}))

    @classmethod
    def of(cls, **values) -> AppState:
        """The state of some keys of its serialisation, the others their defaults; a ValueError names a key
        that is not one of them."""
        unknown = sorted(k for k in values if k not in FIELDS and "." not in k)
        if unknown:
            raise ValueError(f"not a setting of the app: {', '.join(unknown)} (its keys: {', '.join(FIELDS)}).")
        return cls.from_values(values)

    def values(self) -> dict:
        """The serialisation: the spec's keys in the library's order (its dotted split and loss parameters
        beside them), then the data's and the view's."""
        spec = self.spec
        return {
            "method": spec.method,
            "privacy": spec.privacy,
            "budget": spec.budget,
            **split_keys(spec.steps, spec.split),
            "loss": spec.loss.name,
            **{f"loss.{p}": float(x) for p, x in loss_params(spec.loss).items()},
            "c": spec.c,
            "alpha": spec.alpha,
            "n_samples": spec.n_samples,
            **asdict(self.data),
            **{key: getattr(self.view, name) for key, name in VIEW_KEYS.items()},
        }

    def value(self, key: str):
        """One key of the serialisation."""
        return self.values()[key]

    def changed(self, **values) -> AppState:
        """A copy with some keys of the serialisation changed."""
        return AppState.from_values({**self.values(), **values})

    @property
    def notion(self) -> Notion:
        """The privacy notion as a value (symbol, unit, stops, conversions: dpci.notions)."""
        return notion(self.spec.privacy)

    @property
    def level(self) -> float:
        """The confidence level of the intervals, 1 - the spec's alpha."""
        return round(1.0 - self.spec.alpha, 12)

    @property
    def teaching(self) -> bool:
        """Teaching mode: the release uses a public seed (not private)."""
        return self.data.teaching

    @property
    def fractions(self) -> tuple[float, ...]:
        """Each step's share of what the steps before it leave (the sidebar's sliders), but the last."""
        return fractions_of(self.spec.split)

    @property
    def theta_from_release(self) -> bool:
        """Theta asked with no public bound B stated, of a method and loss whose release gives an interval for
        theta alone (dpci.theta: the estimate corrected for the penalty, its law simulated from the release)."""
        method = registry.get(self.spec.method)
        return (
            self.view.estimand == "unregularised"
            and method.uses_c
            and not self.view.theta_bound > 0
            and offers_theta(method, self.spec.loss)
        )

    @property
    def theta_refusal(self) -> str | None:
        """Why the intervals are not for theta though theta was asked (None: not asked, or offered): from the
        release alone (dpci.theta) for the paper's methods on the logistic loss, else it needs a stated public
        bound B on ||theta|| (dpci.recommend.theta_refusal)."""
        method = registry.get(self.spec.method)
        if self.view.estimand != "unregularised" or not method.uses_c or self.theta_from_release:
            return None
        if not self.view.theta_bound > 0:
            why = (
                f"{method.label} releases nothing that undoes the penalty"
                if getattr(self.spec.loss, "curvature_drift", None) is not None
                else "this model's loss is flat off a band, so without a penalty its minimiser need not be unique"
            )
            return (
                f"The intervals are for θ₀(c): {why}. For θ, state a public bound B on ‖θ‖ (from knowledge of "
                "the field, never from these data) under *Intervals for*."
            )
        return theta_refusal(method, self.view.theta_bound)

    @property
    def shown_estimand(self) -> str:
        """The estimand the intervals shown are for: theta when asked and offered, or for a method without c."""
        if not registry.get(self.spec.method).uses_c:
            return "unregularised"
        asked = self.view.estimand == "unregularised" and self.theta_refusal is None
        return "unregularised" if asked else "regularised"
