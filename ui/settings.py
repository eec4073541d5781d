"""The app's settings: what the Explorer's results depend on, the widgets' options, and their
coercion from text (a shared address or a settings file). Pure: no Streamlit here.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

from dpci import methods as registry
from dpci.accounting import Split
from dpci.losses import get_loss

DATASETS = ("Adult (UCI census)", "Synthetic (known truth)", "Uploaded CSV")
MODELS = {"Logistic regression": "logistic", "Huberized SVM": "huber"}


def mechanisms() -> dict[str, str]:
    """The method choices, label -> registered name: every method of dpci.methods, read at each call
    (a method registered after the app started is offered too)."""
    return {m.label[:1].upper() + m.label[1:]: m.name for m in map(registry.get, registry.available())}


PRIVACY = {"Pure ε-DP": "pure", "ρ-zCDP": "zcdp"}
EPSILONS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
RHOS = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0)
C_VALUES = tuple(float(f"{m}e{e}") for e in range(-7, 0) for m in (1, 2, 5)) + (1.0,)
LEVELS = (0.8, 0.9, 0.95, 0.99)
MC_SAMPLES = (1_000, 2_000, 5_000, 10_000, 20_000)
VI_REPLICATES = (500, 1_000, 2_000, 5_000, 10_000)
DELTAS = tuple(10.0**-k for k in range(3, 13))
# "auto": fresh OS randomness for real data (Adult, an upload), a fixed seed for the synthetic data
RANDOMNESS = ("auto", "fresh", "teaching")
# How rows of real data are put in the unit ball (dpci.data.preprocessing, step 6): both act row by
# row with public constants (the same privacy); only one public divisor keeps odds ratios readable.
SCALINGS = {"global": "One public divisor (odds ratios)", "unit": "Each row to length 1 (the paper)"}


@dataclass(frozen=True)
class Settings:
    """Everything the Explorer's results depend on (also what a shared URL stores)."""

    dataset: str = DATASETS[0]
    d: int = 10
    n: int = 0  # 0: all rows
    model: str = "Logistic regression"
    h: float = 0.5
    mechanism: str = "Objective perturbation"
    privacy: str = "Pure ε-DP"
    epsilon: float = 1.0
    rho: float = 0.5
    phi1: float = 0.65
    phi2_rest: float = 0.5
    c: float = 1e-3
    level: float = 0.95
    m: int = 10_000
    vi_replicates: int = 10_000
    seed: int = 0
    delta: float = 1e-6
    randomness: str = "auto"
    scaling: str = "global"

    @property
    def teaching(self) -> bool:
        """Teaching mode: a fixed, public seed (not a private release). By default only for the
        synthetic data; real data get fresh OS randomness."""
        if self.randomness == "auto":
            return self.dataset == DATASETS[1]
        return self.randomness == "teaching"

    @property
    def mech(self):
        return mechanisms()[self.mechanism]

    @property
    def priv(self):
        return PRIVACY[self.privacy]

    @property
    def loss(self):
        return get_loss(MODELS[self.model], self.h)

    @property
    def budget(self):
        return self.epsilon if self.priv == "pure" else self.rho

    @property
    def split(self) -> Split:
        return Split.from_rest(self.phi1, self.phi2_rest)

    @property
    def alpha(self):
        return 1.0 - self.level


FIELDS = {f: type(getattr(Settings(), f)) for f in Settings.__dataclass_fields__}


# Numeric settings with a range (the sliders' ends; values from an address are clipped into it).
RANGES = {
    "d": (1, 20),
    "n": (0, 10**9),
    "h": (0.05, 2.0),
    "phi1": (0.05, 0.99),
    "phi2_rest": (0.05, 0.95),
    "seed": (0, 2**31 - 1),
}
CHOICES = {
    "epsilon": EPSILONS,
    "rho": RHOS,
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


def _nearest(value, choices):
    return min(choices, key=lambda v: abs(math.log(v) - math.log(value)) if v > 0 and value > 0 else abs(v - value))


def settings_values(raw) -> tuple[dict, list[str]]:
    """Settings from text values (an address or a settings file): unknown names and unusable values
    are ignored, numbers clipped to their range and snapped to the widgets' options. Returns the
    values and what was ignored."""
    values, ignored = asdict(Settings()), []
    for name in values:
        if name in raw:
            try:
                values[name] = _coerce(name, raw[name])
            except (TypeError, ValueError, OverflowError):
                ignored.append(name)
    for name, choices in CHOICES.items():
        values[name] = _nearest(values[name], choices)
    for name, choices in (
        ("dataset", DATASETS),
        ("model", MODELS),
        ("mechanism", mechanisms()),
        ("privacy", PRIVACY),
        ("randomness", RANDOMNESS),
        ("scaling", SCALINGS),
    ):
        if values[name] not in choices:
            values[name] = next(iter(choices))
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
            same = given == used if FIELDS[name] is str else float(given) == float(used)
        except (TypeError, ValueError):
            same = False
        if not same:
            changed.append(f"{name} = {given} → {used}")
    return changed


def _fmt_c(v):
    return f"{v:.0e}".replace("e-0", "e-")


def settings_json(s: Settings) -> str:
    return json.dumps(asdict(s), indent=2, ensure_ascii=False)


def settings_from_spec(spec: dict) -> Settings:
    """The settings of a stored release, exactly (no snapping to the widgets' options): the app's own
    (``app_settings``), or those of a release made on the command line (``python -m dpci release``)."""
    known = set(FIELDS)
    if "app_settings" in spec:
        return Settings(**{k: v for k, v in spec["app_settings"].items() if k in known})
    labels = {v: k for k, v in mechanisms().items()}
    split = spec.get("split") or [0.65, 0.175, 0.175]
    pure = spec.get("privacy") == "pure"
    return Settings(
        dataset=DATASETS[2],
        d=int(spec.get("d", 10)),
        model={v: k for k, v in MODELS.items()}.get(spec.get("loss", "logistic"), "Logistic regression"),
        h=float(spec.get("h", 0.5)),
        mechanism=labels.get(spec.get("method", "objective"), next(iter(labels.values()))),
        privacy={v: k for k, v in PRIVACY.items()}[spec.get("privacy", "pure")],
        epsilon=float(spec["budget"]) if pure else Settings.epsilon,
        rho=Settings.rho if pure else float(spec["budget"]),
        phi1=float(split[0]),
        phi2_rest=float(split[1]) / (float(split[1]) + float(split[2])),
        c=float(spec.get("c", 1e-3)),
        level=float(spec.get("level", 0.95)),
        m=int(spec.get("m", 10_000)),
        seed=int(spec["seed"]) if spec.get("seed") is not None else 0,
        randomness="teaching" if spec.get("seed") is not None else "fresh",
        scaling=spec.get("scaling", "global"),
    )
