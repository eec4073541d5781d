"""The app's settings: what the Explorer's results depend on, the widgets' options, and their
coercion from text (a shared address or a settings file). Pure: no Streamlit here.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace

from dpci import methods as registry
from dpci.accounting import Split
from dpci.losses import LOSSES, get_loss, loss_parameters, loss_params, parameter_ranges
from dpci.notions import NOTIONS, Notion, notion
from dpci.parameters import Interval
from dpci.recommend import theta_refusal
from dpci.spec import ReleaseSpec

# The app stores names (in the session, the address, settings files and the ledger's records); labels
# are made only when drawing, from these maps (name -> label). An old address or file that holds a
# label is read as the name it labels (:func:`settings_values`).
DATASETS = {"adult": "Adult (UCI census)", "synthetic": "Synthetic (known truth)", "upload": "Uploaded CSV"}
MODEL_LABELS = {"logistic": "Logistic regression", "huber": "Huberized SVM"}


def models() -> dict[str, str]:
    """The model choices, loss name -> label: every registered loss (dpci.losses.LOSSES), read at each
    call (a loss registered after the app started is offered too, labelled by its name)."""
    return {name: MODEL_LABELS.get(name, name.replace("_", " ").capitalize()) for name in LOSSES}


def mechanisms() -> dict[str, str]:
    """The method choices, registered name -> label: every method of dpci.methods, read at each call
    (a method registered after the app started is offered too)."""
    return {m.name: m.label[:1].upper() + m.label[1:] for m in map(registry.get, registry.available())}


PRIVACY = {name: n.label for name, n in NOTIONS.items()}


def offered_methods(model: str, refused=()) -> dict[str, str]:
    """The methods that run with this model and with a notion the dataset's budget admits
    (``refused``: notions it cannot pay for), name -> label."""
    return {
        name: label
        for name, label in mechanisms().items()
        if registry.get(name).fits(model) and set(registry.get(name).notions) - set(refused)
    }


def methods_left_out(model: str, refused=()) -> list[str]:
    """Why each method not offered is left out, in sentences."""
    reasons = []
    for name, label in mechanisms().items():
        method = registry.get(name)
        if not method.fits(model):
            reasons.append(f"{label} is not offered: it fits {_models_said(method.losses)} only.")
        elif not set(method.notions) - set(refused):
            said = " and ".join(PRIVACY[n] for n in method.notions)
            reasons.append(f"{label} is not offered: it releases {said} only, which this data's budget cannot count.")
    return reasons


def _models_said(losses) -> str:
    """The models of these losses in words: "logistic regression"."""
    names = models()
    return " and ".join(names.get(loss, loss).lower() for loss in losses)


# The budget sliders' stops are each notion's (dpci.notions); the number box beside them takes any
# budget, kept to two significant digits (BUDGET_DIGITS).
BUDGET_DIGITS = 2
C_VALUES = tuple(float(f"{m}e{e}") for e in range(-7, 0) for m in (1, 2, 5)) + (1.0,)
LEVELS = (0.8, 0.9, 0.95, 0.99)
MC_SAMPLES = (1_000, 2_000, 5_000, 10_000, 20_000)
VI_REPLICATES = (500, 1_000, 2_000, 5_000, 10_000)
DELTAS = tuple(10.0**-k for k in range(3, 13))
# "auto": fresh OS randomness for real data (Adult, an upload), a fixed seed for the synthetic data
RANDOMNESS = ("auto", "fresh", "teaching")
# What an interval is for (dpci.recommend): theta_0(c), the paper's; or theta, with the penalty's bias bound added.
ESTIMANDS = {
    "regularised": "θ₀(c): the fitted model's, with its penalty",
    "unregularised": "θ: without penalty (bias included)",
}
# How the Explorer is laid out: everything, or large and uncluttered for a projector
VIEWS = {"standard": "Standard", "presentation": "Presentation (large, for a projector)"}
# How rows of real data are put in the unit ball (dpci.data.preprocessing, step 6): both act row by
# row with public constants (the same privacy); only one public divisor keeps odds ratios readable.
SCALINGS = {"global": "One public divisor (odds ratios)", "unit": "Each row to length 1 (the paper)"}


@dataclass(frozen=True)
class Settings:
    """Everything the Explorer's results depend on (also what a shared URL stores)."""

    dataset: str = "adult"  # a key of DATASETS
    d: int = 10
    n: int = 0  # 0: all rows
    model: str = "logistic"  # a registered loss
    mechanism: str = "objective"  # a registered method
    privacy: str = "pure"  # a notion: pure or zcdp
    epsilon: float = 1.0
    rho: float = 0.5
    c: float = 1e-3
    estimand: str = "regularised"  # a key of ESTIMANDS (post-processing: the release is the same)
    theta_bound: float = 0.0  # B, a public bound on ||theta|| the user states (0: none stated, no interval for theta)
    level: float = 0.95
    m: int = 10_000
    vi_replicates: int = 10_000
    seed: int = 0
    delta: float = 1e-6
    randomness: str = "auto"
    scaling: str = "global"
    view: str = "standard"  # a key of VIEWS: "presentation" enlarges the Explorer for a projector
    # The declared settings, by dotted key, sorted: "loss.h" (a loss parameter, its range declared on the
    # loss class) and "split.hessian" (a step's share of what the steps before it leave; the last step
    # takes the remainder). A loss or a step the store holds no value for takes its default.
    params: tuple[tuple[str, float], ...] = ()

    @classmethod
    def from_values(cls, values: dict) -> Settings:
        """The settings of a flat dict of values (the session's store): fields by name, the rest dotted."""
        plain = {k: v for k, v in values.items() if k in FIELDS}
        return cls(**plain, params=tuple(sorted((k, float(v)) for k, v in values.items() if "." in k)))

    def values(self) -> dict:
        """The settings as a flat dict, dotted keys included (the address, a settings file, the store)."""
        values = {k: v for k, v in asdict(self).items() if k != "params"}
        return {**values, **dict(self.params)}

    def value(self, name: str):
        """A setting by its key (a field's name or a dotted key; a dotted key not held: its default)."""
        if "." not in name:
            return getattr(self, name)
        return dict(self.params).get(name, declared_defaults(self.model, self.mechanism).get(name))

    @property
    def fractions(self) -> tuple[float, ...]:
        """Each step's share of what the steps before it leave (the sidebar's sliders), but the last."""
        steps = registry.get(self.mechanism).steps
        return tuple(self.value(f"split.{step}") for step in steps[:-1])

    @property
    def teaching(self) -> bool:
        """Teaching mode: a fixed, public seed (not a private release). By default only for the
        synthetic data; real data get fresh OS randomness."""
        if self.randomness == "auto":
            return self.dataset == "synthetic"
        return self.randomness == "teaching"

    @property
    def mech(self) -> str:
        """The registered method's name (an alias of ``mechanism``)."""
        return self.mechanism

    @property
    def priv(self) -> str:
        """The privacy notion (an alias of ``privacy``)."""
        return self.privacy

    @property
    def loss(self):
        """The chosen loss with the parameters set (each in its declared range)."""
        return get_loss(self.model, **{p: self.value(f"loss.{p}") for p in loss_parameters(self.model)})

    @property
    def notion(self) -> Notion:
        """The privacy notion as a value (symbol, unit, stops, conversions: dpci.notions)."""
        return notion(self.privacy)

    @property
    def budget(self) -> float:
        """The total budget, in the notion's unit (the field of that name: epsilon or rho)."""
        return getattr(self, self.notion.unit)

    @property
    def split(self) -> Split:
        """The shares of the method's steps, from the sliders' fractions (stick-breaking: step i gets its
        fraction of what steps 1..i-1 leave; the last step the remainder), so they always sum to 1."""
        shares, rest = [], 1.0
        for fraction in self.fractions:
            shares.append(rest * fraction)
            rest *= 1.0 - fraction
        return Split(*shares, rest)

    @property
    def phi1(self) -> float:
        return self.split[0]

    @property
    def phi2_rest(self) -> float:
        """The second step's share of what the first leaves (0.5 for a method with fewer steps)."""
        return self.fractions[1] if len(self.fractions) > 1 else 0.5

    @property
    def alpha(self) -> float:
        """1 - the level, as the decimal it is (0.05, not 1 - 0.95 = 0.050000000000000044): the spec's
        alpha and key are then the library's for the same settings."""
        return round(1.0 - self.level, 12)

    @property
    def theta_refusal(self) -> str | None:
        """Why the intervals are not for theta though theta was asked (None: not asked, or offered): an
        interval for theta needs a stated public bound B on ||theta|| (dpci.recommend.theta_refusal)."""
        method = registry.get(self.mechanism)
        if self.estimand != "unregularised" or not method.uses_c:
            return None
        if not self.theta_bound > 0:
            return (
                "Intervals for θ need a bound B on ‖θ‖ that you state as public (from knowledge of the field, "
                "never from these data): enter it under *Intervals for*. Without it the intervals are for θ₀(c)."
            )
        return theta_refusal(method, self.theta_bound)

    @property
    def shown_estimand(self) -> str:
        """The estimand the intervals shown are for: theta when asked and offered, or for a method without c."""
        if not registry.get(self.mechanism).uses_c:
            return "unregularised"
        return "unregularised" if self.estimand == "unregularised" and self.theta_refusal is None else "regularised"

    def spec(self) -> ReleaseSpec:
        """The release these settings describe (the seed only in teaching mode: a public seed)."""
        seed = self.seed if self.teaching else None
        return ReleaseSpec(
            self.mechanism, self.privacy, self.budget, self.split, self.loss, self.c, self.alpha, self.m, seed
        )

    def label(self, name: str) -> str:
        """The label a page shows for a named setting's value ("mechanism" -> "Objective perturbation")."""
        value = getattr(self, name)
        return LABELS[name]().get(value, str(value))


FIELDS = {f: type(getattr(Settings(), f)) for f in Settings.__dataclass_fields__ if f != "params"}

# A split slider's range: the first step's share of the whole, then each step's share of the rest.
FIRST_SHARE, REST_SHARE = Interval(0.05, 0.99, step=0.01), Interval(0.05, 0.95, step=0.025)
FIRST_DEFAULT = 0.65  # the first step's default share; the others split the rest evenly


def declared_defaults(model: str, mechanism: str) -> dict[str, float]:
    """The dotted settings a loss and a method declare, with their defaults: each loss parameter, and
    each step's fraction but the last (the first 0.65, the others an even part of what is left)."""
    steps = registry.get(mechanism).steps
    split = {
        f"split.{s}": FIRST_DEFAULT if i == 0 else round(1.0 / (len(steps) - i), 3) for i, s in enumerate(steps[:-1])
    }
    return {**{f"loss.{p}": v for p, v in loss_parameters(model).items()}, **split}


def declared_range(name: str, model: str, mechanism: str) -> Interval | None:
    """The range of a dotted setting for this model and method (None: it is not one of theirs)."""
    kind, _, what = name.partition(".")
    if kind == "loss":
        return parameter_ranges(model).get(what)
    steps = registry.get(mechanism).steps
    if kind == "split" and what in steps[:-1]:
        return FIRST_SHARE if what == steps[0] else REST_SHARE
    return None


# Old addresses and settings files named the split and Huber's width by field; they open through this
# table (old key -> its dotted key, given the method's steps).
OLD_KEYS = {
    "h": lambda steps: "loss.h",
    "phi1": lambda steps: f"split.{steps[0]}",
    "phi2_rest": lambda steps: f"split.{steps[1]}" if len(steps) > 2 else None,
}


def translated(raw) -> dict:
    """``raw`` with its old keys under their dotted names (a dotted key given too wins)."""
    raw = dict(raw)
    method = name_of("mechanism", raw.get("mechanism", Settings.mechanism)) or Settings.mechanism
    steps = registry.get(method).steps
    for old, new in OLD_KEYS.items():
        if old in raw:
            value, key = raw.pop(old), new(steps)
            if key is not None:
                raw.setdefault(key, value)
    return raw


# The named settings: field -> its choices (name -> label), read at each call.
LABELS = {
    "dataset": lambda: DATASETS,
    "model": models,
    "mechanism": mechanisms,
    "privacy": lambda: PRIVACY,
    "randomness": lambda: {r: r for r in RANDOMNESS},
    "scaling": lambda: SCALINGS,
    "estimand": lambda: ESTIMANDS,
    "view": lambda: VIEWS,
}


def name_of(field: str, value) -> str | None:
    """The name a named setting's value stands for: the name itself, or the name an older address or
    settings file gave by its label ("Pure ε-DP" -> "pure"); None when it is neither."""
    choices = LABELS[field]()
    value = str(value)
    if value in choices:
        return value
    by_label = {label.casefold(): name for name, label in choices.items()}
    return by_label.get(value.casefold())


# Numeric settings with a range (the sliders' ends; values from an address are clipped into it).
RANGES = {
    "d": (1, 20),
    "n": (0, 10**9),
    **{n.unit: (n.stops[0], n.stops[-1]) for n in NOTIONS.values()},
    "seed": (0, 2**31 - 1),
    "theta_bound": (0.0, 1e6),
}
CHOICES = {
    "c": C_VALUES,
    "level": LEVELS,
    "m": MC_SAMPLES,
    "vi_replicates": VI_REPLICATES,
    "delta": DELTAS,
}


def _coerce(name, raw):
    """A setting's value from text (an address or a settings file); ValueError if unusable."""
    kind = FIELDS[name]
    if kind is str:
        return str(raw)
    value = float(raw)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number")
    if name in RANGES:
        low, high = RANGES[name]
        value = min(max(value, low), high)
    return kind(value)


def budget_value(value: float) -> float:
    """A budget as the app keeps it: a slider's stop as it is (1.25), any other value to two significant
    digits (the number box's)."""
    value = float(value)
    if any(math.isclose(value, stop, rel_tol=1e-9) for n in NOTIONS.values() for stop in n.stops):
        return value
    return float(f"{value:.{BUDGET_DIGITS}g}")


def _nearest(value, choices):
    return min(choices, key=lambda v: abs(math.log(v) - math.log(value)) if v > 0 and value > 0 else abs(v - value))


def settings_values(raw) -> tuple[dict, list[str]]:
    """Settings from text values (an address or a settings file, its old keys translated): unknown
    names and unusable values are ignored, numbers clipped to their range and snapped to the widgets'
    options; the dotted ones of the chosen loss and method to their declared ranges. Returns the values
    and what was ignored."""
    values, ignored = Settings().values(), []
    for name in values:
        if name in raw:
            try:
                values[name] = _coerce(name, raw[name])
            except (TypeError, ValueError, OverflowError):
                ignored.append(name)
    for name, choices in CHOICES.items():
        values[name] = _nearest(values[name], choices)
    for name in (n.unit for n in NOTIONS.values()):  # any budget in range, to two significant digits (the number box's)
        values[name] = budget_value(values[name])
    for name in LABELS:
        values[name] = name_of(name, values[name]) or next(iter(LABELS[name]()))
    for name in sorted(k for k in raw if "." in k):
        interval = declared_range(name, values["model"], values["mechanism"])
        try:
            value = float(raw[name])
            if interval is None or not math.isfinite(value):
                raise ValueError(name)
            values[name] = interval.clip(value)
        except (TypeError, ValueError):
            ignored.append(name)
    return values, ignored


def changed_settings(raw, values) -> list[str]:
    """The settings ``raw`` gives that could not be used as given (unusable, clipped to the range,
    snapped to the nearest option, or not a choice), as "name = given → used"."""
    changed = []
    for name, used in values.items():
        if name not in raw:
            continue
        given = str(raw[name])
        try:
            if name in LABELS:
                same = name_of(name, given) == used  # an old link's label is the same choice
            else:
                same = given == used if FIELDS.get(name) is str else float(given) == float(used)
        except (TypeError, ValueError):
            same = False
        if not same:
            changed.append(f"{name} = {given} → {used}")
    return changed


def fmt_c(v) -> str:
    """c as the sidebar shows it: 1e-3, 5e-4."""
    return f"{v:.0e}".replace("e-0", "e-")


def settings_json(s: Settings) -> str:
    return json.dumps(s.values(), indent=2, ensure_ascii=False)


# The settings a release specification holds; a release's record keeps the others (the data and the
# view) beside it, under ``app`` (:func:`settings_record`).
SPEC_FIELDS = {"model", "mechanism", "privacy", "c", "level", "m", *(n.unit for n in NOTIONS.values())}


def settings_record(s: Settings) -> dict:
    """The settings as a release's record keeps them, described once: the release specification
    (``release``: ``spec.to_dict()``) and what else the app needs to reopen them (``app``: the data and
    the view). :func:`settings_from_spec` reads it back."""
    app = {k: v for k, v in s.values().items() if k not in SPEC_FIELDS and "." not in k}
    return dict(release=s.spec().to_dict(), app=app)


def settings_from_spec(spec: dict) -> Settings:
    """The settings of a stored release, exactly (no snapping to the widgets' options): the app's own
    (:func:`settings_record`; a record written before it keeps ``app_settings``, its labels read as their
    names), or those of a release made on the command line (``python -m dpci release``: its release
    specification and data)."""
    known = set(FIELDS)
    if "app" in spec:
        app = {k: v for k, v in spec["app"].items() if k in known and k not in SPEC_FIELDS}
        return replace(settings_from_spec({"release": spec["release"]}), **app)
    if "app_settings" in spec:
        values = {k: v for k, v in translated(spec["app_settings"]).items() if k in known or "." in k}
        for name in LABELS:
            if name in values:
                values[name] = name_of(name, values[name]) or getattr(Settings, name)
        return Settings.from_values(values)
    if "release" in spec:
        release, data = ReleaseSpec.from_dict(spec["release"]), spec.get("data", {})
    else:  # a record written before release specifications (dpci 0.x): its fields were flat
        release = ReleaseSpec(
            spec.get("method", "objective"),
            spec.get("privacy", "pure"),
            spec.get("budget", 1.0),
            spec.get("split"),
            get_loss(spec.get("loss", "logistic"), **({"h": spec["h"]} if spec.get("loss") == "huber" else {})),
            spec.get("c", 1e-3),
            1.0 - float(spec.get("level", 0.95)),
            spec.get("m", 10_000),
            spec.get("seed"),
        )
        data = spec
    fractions, rest = {}, 1.0
    for step, share in list(release.steps.items())[:-1]:  # each share as its part of what is left
        fractions[f"split.{step}"] = share / rest
        rest -= share
    losses = {f"loss.{p}": float(v) for p, v in loss_params(release.loss).items()}
    return Settings(
        dataset="upload",
        d=int(data.get("d", 10)),
        model=release.loss.name,
        mechanism=release.method,
        privacy=release.privacy,
        **{notion(release.privacy).unit: release.budget},
        c=release.c,
        level=round(1.0 - release.alpha, 12),
        m=release.n_samples,
        seed=release.seed if release.seed is not None else 0,
        randomness="teaching" if release.seed is not None else "fresh",
        scaling=data.get("scaling", "global"),
        params=tuple(sorted({**losses, **fractions}.items())),
    )
