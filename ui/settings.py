"""The app's settings: what the Explorer's results depend on, the widgets' options, and their
coercion from text (a shared address or a settings file). Pure: no Streamlit here.
"""

from __future__ import annotations

import json
import math

from dpci import methods as registry
from dpci.losses import LOSSES, get_loss, parameter_ranges
from dpci.notions import NOTIONS, notion
from dpci.parameters import Interval
from dpci.spec import ReleaseSpec
from ui.app_state import (
    DEFAULTS,
    FIELDS,
    SPEC_KEYS,
    AppState,
    budget_value,
    converted_budget,
    default_shares,
    fractions_of,
    shares_of,
    split_keys,
)

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
            reasons.append(f"{label} is not offered: it fits {models_said(method.losses)} only.")
        elif not set(method.notions) - set(refused):
            said = " and ".join(PRIVACY[n] for n in method.notions)
            reasons.append(f"{label} is not offered: it releases {said} only, which this data's budget cannot count.")
    return reasons


def models_said(losses) -> str:
    """The models of these losses in words: "logistic regression"."""
    names = models()
    return " and ".join(names.get(loss, loss).lower() for loss in losses)


C_VALUES = tuple(float(f"{m}e{e}") for e in range(-7, 0) for m in (1, 2, 5)) + (1.0,)
ALPHAS = (0.2, 0.1, 0.05, 0.01)  # the confidence levels 80%, 90%, 95% and 99%, in the slider's order
MC_SAMPLES = (1_000, 2_000, 5_000, 10_000, 20_000)
VI_REPLICATES = (500, 1_000, 2_000, 5_000, 10_000)
DELTAS = tuple(10.0**-k for k in range(3, 13))
# "auto": fresh OS randomness for real data (Adult, an upload), a fixed seed for the synthetic data
RANDOMNESS = ("auto", "fresh", "teaching")
# What an interval is for: theta, the coefficients without penalty (dpci.theta, or the bias bound of
# dpci.recommend with a stated B), the default; or theta_0(c), the paper's, of the model fitted with the penalty.
ESTIMANDS = {
    "unregularised": "θ: the coefficients without penalty",
    "regularised": "θ₀(c): the model fitted with its penalty",
}
# How the Explorer is laid out: everything, or large and uncluttered for a projector
VIEWS = {"standard": "Standard", "presentation": "Presentation (large, for a projector)"}
# How rows of real data are put in the unit ball (dpci.data.preprocessing, step 6): both act row by
# row with public constants (the same privacy); only one public divisor keeps odds ratios readable.
SCALINGS = {"global": "One public divisor (odds ratios)", "unit": "Each row to length 1 (the paper)"}


def label(s: AppState, key: str) -> str:
    """The label a page shows for a named key's value ("method" -> "Objective perturbation")."""
    value = s.value(key)
    return LABELS[key]().get(value, str(value))


# A split slider's range: the first step's share of the whole, then each step's share of the rest.
FIRST_SHARE, REST_SHARE = Interval(0.05, 0.99, step=0.01), Interval(0.05, 0.95, step=0.025)


def declared_range(name: str, loss: str, method: str) -> Interval | None:
    """The range of a dotted setting for this loss and method (None: it is not one of theirs): a loss
    parameter's, or a split slider's (a step's fraction of what the steps before it leave)."""
    kind, _, what = name.partition(".")
    if kind == "loss":
        return parameter_ranges(loss).get(what)
    steps = registry.get(method).steps
    if kind == "split" and what in steps[:-1]:
        return FIRST_SHARE if what == steps[0] else REST_SHARE
    return None


# Older addresses, settings files and records named the spec as the sidebar's controls did: the method
# "mechanism", the loss "model", the budget by its unit ("epsilon" or "rho"), alpha by the "level" 1 - alpha,
# m and the split as fractions (each step's fraction of what the steps before it leave, the last step's
# left out); older still, Huber's width "h" and the fractions "phi1" and "phi2_rest". They open through
# :func:`translated`.
OLD_NAMES = {"mechanism": "method", "model": "loss", "m": "n_samples", "h": "loss.h"}
OLD_KEYS = frozenset({*OLD_NAMES, "level", "phi1", "phi2_rest", *(n.unit for n in NOTIONS.values())})


def translated(raw) -> dict:
    """``raw`` in the serialisation's names (a key given in them wins): an older address, settings file or
    record's keys translated (:data:`OLD_KEYS`), its split fractions made shares."""
    raw = dict(raw)
    if not OLD_KEYS & raw.keys():
        return raw
    for old, new in OLD_NAMES.items():
        if old in raw:
            raw.setdefault(new, raw.pop(old))
    if "level" in raw:
        level = raw.pop("level")
        raw.setdefault("alpha", _or_text(lambda: round(1.0 - float(level), 12), level))
    _old_budget(raw)
    _old_split(raw)
    return raw


def _or_text(convert, text):
    """``convert()``, or the text as it was (unusable: :func:`settings_values` says it was ignored)."""
    try:
        return convert()
    except (TypeError, ValueError):
        return text


def _old_budget(raw: dict) -> None:
    """The budget of the notion asked, from its unit's key, else the other notion's converted to it."""
    asked = notion(name_of("privacy", raw.get("privacy", DEFAULTS["privacy"])) or DEFAULTS["privacy"])
    given = {n.unit: n for n in NOTIONS.values() if n.unit in raw}
    amounts = {unit: raw.pop(unit) for unit in given}
    if "budget" in raw or not amounts:
        return
    if asked.unit in amounts:
        raw["budget"] = amounts[asked.unit]
        return
    unit, text = next(iter(amounts.items()))
    raw["budget"] = _or_text(lambda: converted_budget(float(text), given[unit], asked), text)


def _old_split(raw: dict) -> None:
    """Each step's fraction of what the steps before it leave (``phi1``, ``phi2_rest`` or the dotted keys of
    all steps but the last) as the split's shares; unusable text is kept, to be said ignored."""
    method = name_of("method", raw.get("method", DEFAULTS["method"])) or DEFAULTS["method"]
    steps = registry.get(method).steps
    named = {"phi1": steps[0], "phi2_rest": steps[1] if len(steps) > 2 else None}
    fractions = {f"split.{named[k]}": raw.pop(k) for k in named if k in raw and named[k] is not None}
    fractions.update({k: raw.pop(k) for k in [f"split.{s}" for s in steps[:-1]] if k in raw})
    if not fractions:
        return
    default = dict(zip(steps, fractions_of(default_shares(steps))))
    loss = name_of("loss", raw.get("loss", DEFAULTS["loss"])) or DEFAULTS["loss"]
    try:
        chosen = [float(fractions.get(f"split.{s}", default[s])) for s in steps[:-1]]
        clipped = [declared_range(f"split.{s}", loss, method).clip(f) for s, f in zip(steps, chosen)]  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raw.update(fractions)
        return
    raw.update(split_keys(steps, shares_of(clipped)))


# The named settings: field -> its choices (name -> label), read at each call.
LABELS = {
    "dataset": lambda: DATASETS,
    "loss": models,
    "method": mechanisms,
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
    "seed": (0, 2**31 - 1),
    "theta_bound": (0.0, 1e6),
}
CHOICES = {
    "c": C_VALUES,
    "alpha": ALPHAS,
    "n_samples": MC_SAMPLES,
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


def _nearest(value, choices):
    return min(choices, key=lambda v: abs(math.log(v) - math.log(value)) if v > 0 and value > 0 else abs(v - value))


def settings_values(raw) -> tuple[dict, list[str]]:
    """The serialisation of an :class:`AppState` from text values (an address or a settings file, its
    old keys translated): unknown keys and unusable values are ignored, numbers clipped to their range
    and snapped to the widgets' options, the budget to its notion's; the loss's parameters and the split
    to their declared ranges. Returns the values and what was ignored."""
    values, ignored = {k: v for k, v in AppState().values().items() if "." not in k}, []
    for name in FIELDS:
        if name in raw:
            try:
                values[name] = _coerce(name, raw[name])
            except (TypeError, ValueError, OverflowError):
                ignored.append(name)
    for name in LABELS:
        values[name] = name_of(name, values[name]) or next(iter(LABELS[name]()))
    for name, choices in CHOICES.items():
        values[name] = _nearest(values[name], choices)
    asked = notion(values["privacy"])
    budget = values["budget"] if "budget" in raw and "budget" not in ignored else asked.default
    values["budget"] = budget_value(min(max(budget, asked.stops[0]), asked.stops[-1]))  # the number box's range
    for name in sorted(k for k in raw if k.startswith("loss.")):
        interval = declared_range(name, values["loss"], values["method"])
        try:
            value = float(raw[name])
            if interval is None or not math.isfinite(value):
                raise ValueError(name)
            values[name] = interval.clip(value)
        except (TypeError, ValueError):
            ignored.append(name)
    split, unusable = _split_values(raw, values["loss"], values["method"])
    return {**values, **split}, ignored + unusable


def _split_values(raw, loss: str, method: str) -> tuple[dict, list[str]]:
    """The split ``raw`` gives for this method's steps, as shares: scaled to sum to 1 (a step not given
    keeps its default share), each slider's fraction clipped to its range; the keys it could not use."""
    steps = registry.get(method).steps
    names = [f"split.{s}" for s in steps]
    other = sorted(k for k in raw if k.startswith("split.") and k not in names)
    if not set(names) & raw.keys():
        return {}, other
    try:
        shares = [float(raw.get(k, default)) for k, default in zip(names, default_shares(steps))]
        if not all(math.isfinite(x) and x > 0 for x in shares):
            raise ValueError(shares)
    except (TypeError, ValueError):
        return split_keys(steps, default_shares(steps)), [k for k in names if k in raw] + other
    fractions = fractions_of([x / sum(shares) for x in shares])
    clipped = [declared_range(k, loss, method).clip(f) for k, f in zip(names, fractions)]  # type: ignore[union-attr]
    return split_keys(steps, shares_of(clipped)), other


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


def settings_json(s: AppState) -> str:
    return json.dumps(s.values(), indent=2, ensure_ascii=False)


def settings_record(s: AppState) -> dict:
    """The state as a release's record keeps it, described once: the release specification
    (``release``: ``spec.to_dict()``) and the rest of the state (``app``: the data and the view's keys).
    :func:`settings_from_spec` reads it back."""
    app = {k: v for k, v in s.values().items() if k not in SPEC_KEYS and "." not in k}
    return dict(release=s.spec.to_dict(), app=app)


def settings_from_spec(spec: dict) -> AppState:
    """The state of a stored release, its specification exactly (no snapping to the widgets' options):
    the app's own (:func:`settings_record`; a record written before it keeps the flat ``app_settings``,
    its old keys and labels read through :func:`translated` and :func:`name_of`), or that of a release
    made on the command line (``python -m dpci release``: its release specification and data)."""
    if "app_settings" in spec:
        values = {k: v for k, v in translated(spec["app_settings"]).items() if k in FIELDS or "." in k}
        for name in LABELS:
            if name in values:
                values[name] = name_of(name, values[name]) or DEFAULTS[name]
        return AppState.from_values(values)
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
    made = dict(dataset="upload", d=int(data.get("d", 10)), scaling=data.get("scaling", "global"))
    randomness = dict(randomness="teaching", seed=release.seed) if release.seed is not None else {"randomness": "fresh"}
    kept = {k: v for k, v in spec.get("app", {}).items() if k in FIELDS and k not in SPEC_KEYS}
    return AppState.from_parts(release, {**made, **randomness, **kept})
