"""The settings of a private release, defined once, and the keyword API built from them.

:class:`IntervalSettings` is what decides a private interval (the method, the privacy notion and
budget, the split, c and the level); :class:`ReleaseSettings` adds how one release draws it (the
Monte Carlo size and the randomness). Their fields carry the defaults the paper uses.

The public functions keep their keyword API (``mechanism="objective", privacy="pure", ...``) without
writing it out again: they are written to take one settings object, and :func:`spread` offers its
fields to callers as parameters, in field order and with the fields' defaults, positionally or by
keyword (``inspect.signature`` and ``help`` show them).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

R = TypeVar("R")


@dataclass(frozen=True)
class IntervalSettings:
    """What decides a private interval: the method (``mechanism``, a registered name), the privacy
    notion and budget, the split (phi1, phi2, phi3) of the budget (None: the paper's Table 2), the
    regularisation coefficient c of Eq. 3.1 and alpha (1 - the confidence level)."""

    mechanism: str = "objective"
    privacy: str = "pure"
    budget: float = 1.0
    split: Any = None
    c: float = 1e-3
    alpha: float = 0.05


@dataclass(frozen=True)
class ReleaseSettings(IntervalSettings):
    """:class:`IntervalSettings` and how one release draws its interval: the Monte Carlo samples m of
    Algorithms 3 and 5 and the source of randomness."""

    n_samples: int = 10_000
    random_state: Any = None


RELEASE_DEFAULTS = ReleaseSettings()


def field_values(settings) -> dict[str, Any]:
    """The fields of a settings dataclass by name (shallow: a random Generator stays the same object)."""
    return {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}


def spread(settings_type: type, name: str = "settings") -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Decorator: the function's parameter ``name`` takes one ``settings_type`` (a dataclass whose fields
    all have defaults); its callers pass that dataclass's fields instead, where ``name`` stands."""
    fields = [f.name for f in dataclasses.fields(settings_type)]
    defaults = field_values(settings_type())

    def decorate(function: Callable[..., R]) -> Callable[..., R]:
        inner = inspect.signature(function)
        params: list[inspect.Parameter] = []
        for param in inner.parameters.values():
            if param.name == name:
                params += [inspect.Parameter(f, param.kind, default=defaults[f]) for f in fields]
            else:
                params.append(param)
        outer = inner.replace(parameters=params)

        @functools.wraps(function)
        def with_fields(*args, **kwargs):
            arguments = outer.bind(*args, **kwargs)
            arguments.apply_defaults()
            values = dict(arguments.arguments)
            values[name] = settings_type(**{f: values.pop(f) for f in fields})
            return function(**values)

        with_fields.__signature__ = outer  # type: ignore[attr-defined]
        return with_fields

    return decorate
