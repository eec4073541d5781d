"""Margin losses f(z), z = y * theta.x, of Section 3.3 and their derivatives.

Each loss is vectorised over rows and carries every constant the privacy proofs use,
so nothing outside it asks which loss it is: |f'(z)| <= 1 and |f''(z)| <= t (Theorem 1,
Theorem 3), the L2 sensitivities of the Hessian and of the gradient covariance
(Lemmas 2-5, replace-one neighbours, rows in the unit ball, labels in {-1, +1}) and the
kinks where f'' jumps. The gradient of a row's loss is f'(z) y x and its Hessian
f''(z) x x^T (Section 6). A new loss is one class meeting :class:`Loss`, registered in
:data:`LOSSES`. This module holds what a loss is and the registry; the two losses of
Section 3.3 are in :mod:`dpci.margin_losses` and are imported from here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Protocol, runtime_checkable

from .margin_losses import HuberLoss, LogisticLoss
from .parameters import Interval, around


@runtime_checkable
class Loss(Protocol):
    """What the solvers, the mechanisms and the intervals need of a margin loss."""

    @property
    def name(self) -> str: ...  # the name it is registered under

    @property
    def t(self) -> float: ...  # bound on |f''| (Theorem 1)

    @property
    def kinks(self) -> tuple[float, ...]: ...  # margins z where f'' jumps (empty for a smooth loss)

    def value(self, z): ...

    def derivatives(self, z): ...

    def value_and_derivatives(self, z): ...

    def first_derivative(self, z, overwrite=False, weights=None): ...

    def second_derivative(self, z): ...

    def weighted_derivatives(self, z, weights=None, second=False, out=None): ...

    def hessian_sensitivity(self, n: int) -> float: ...

    def covariance_sensitivity(self, n: int, theta) -> float: ...

    # Optional: ``curvature_drift``, a with |f'''| <= a f'' (None or absent: none). A loss that declares it
    # gets intervals for theta, the coefficients without penalty, by default (dpci.theta), and has a unique
    # unpenalised minimiser wherever the classes overlap. Optional: ``odds_ratios``, True when a coefficient is
    # a log odds ratio (absent: False).


LOSSES: dict[str, type] = {"logistic": LogisticLoss, "huber": HuberLoss}  # name -> class (:func:`register_loss`)


def register_loss(cls: type, replace: bool = False) -> type:
    """Add a loss class under its ``name`` (usable as a class decorator). The class is a frozen
    dataclass meeting :class:`Loss` whose fields other than ``name`` are its parameters, each with a
    default (``HuberLoss.h``); :func:`get_loss` passes them by name, and the release specification,
    the command line (``--loss-param``) and the app read them from :func:`loss_parameters`.

    Parameters
    ----------
    cls : type
        The loss class: a frozen dataclass meeting :class:`Loss`, constructible with no argument.
    replace : bool
        Replace a loss already registered under the same name (else that is an error).

    Returns
    -------
    type
        ``cls`` itself, so that ``@register_loss`` decorates a class.

    Raises
    ------
    TypeError
        ``cls`` is not a dataclass.
    ValueError
        Another loss has that name and ``replace`` is False.

    See Also
    --------
    unregister_loss : remove it again.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> import dpci
    >>> @dpci.register_loss
    ... @dataclass(frozen=True)
    ... class WideHuberLoss(dpci.HuberLoss):  # a new loss with a parameter and its default
    ...     h: float = 2.0
    ...     name: str = "wide_huber"
    >>> dpci.get_loss("wide_huber", h=3.0)
    WideHuberLoss(h=3.0, name='wide_huber')
    >>> dpci.losses.unregister_loss("wide_huber")
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"a loss is a frozen dataclass (its fields are its parameters); got {cls!r}.")
    name = getattr(cls(), "name")  # noqa: B009 - a dataclass type mypy cannot see the field of
    if name in LOSSES and not replace and LOSSES[name] is not cls:
        raise ValueError(f"a loss named {name!r} is already registered (pass replace=True).")
    LOSSES[name] = cls
    return cls


def unregister_loss(name: str) -> None:
    """Remove a loss added with :func:`register_loss` (dpci's own stay)."""
    if name in ("logistic", "huber"):
        raise ValueError(f"{name!r} is one of dpci's own losses and stays registered.")
    LOSSES.pop(name, None)


def loss_parameters(name_or_loss) -> dict[str, float]:
    """The parameters a loss declares and their defaults (a name, a class or an instance):
    ``loss_parameters("huber") == {"h": 0.5}``, ``loss_parameters("logistic") == {}``."""
    cls = _loss_class(name_or_loss) if isinstance(name_or_loss, str) else name_or_loss
    if not dataclasses.is_dataclass(cls):
        return {}  # a loss that is not a dataclass declares no parameters
    return {
        f.name: f.default
        for f in dataclasses.fields(cls)
        if f.init and f.name != "name" and f.default is not dataclasses.MISSING
    }


def parameter_ranges(name_or_loss) -> dict[str, Interval]:
    """Each parameter of a loss (a name, a class or an instance) with its range: the class's declared
    ``ranges`` (a class attribute of :class:`~dpci.parameters.Interval`), else a tenth to ten times
    its default; labelled by its name when the declaration gives no label.

    >>> parameter_ranges("huber")["h"]
    Interval(low=0.05, high=2.0, step=0.05, label='Huber width h')
    """
    cls = _loss_class(name_or_loss) if isinstance(name_or_loss, str) else name_or_loss
    declared = getattr(cls, "ranges", {})
    ranges = {name: declared.get(name) or around(default) for name, default in loss_parameters(cls).items()}
    return {k: replace(r, label=r.label or f"Loss parameter {k}") for k, r in ranges.items()}


def loss_params(loss) -> dict[str, float]:
    """The parameter values of a loss instance (``{"h": 0.3}`` for ``HuberLoss(0.3)``)."""
    return {name: getattr(loss, name) for name in loss_parameters(loss)}


def loss_to_dict(loss) -> dict:
    """A loss as data: ``{"name": "huber", "h": 0.3}`` (:func:`get_loss` ``(**d)`` makes it again)."""
    return {"name": loss.name, **loss_params(loss)}


def loss_call(loss) -> str:
    """The Python call that makes ``loss``: ``get_loss('huber', h=0.3)``."""
    args = "".join(f", {k}={v!r}" for k, v in loss_params(loss).items())
    return f"get_loss({loss.name!r}{args})"


def _loss_class(name: str) -> type:
    if name not in LOSSES:
        raise ValueError(f"Unknown loss {name!r}; use one of {', '.join(map(repr, LOSSES))}.")
    return LOSSES[name]


def get_loss(name: str, *args, **params) -> Loss:
    """The loss called ``name`` (a key of :data:`LOSSES`) with its declared parameters.

    Parameters are passed by name (``get_loss("huber", h=0.3)``) or in their declared order
    (``get_loss("huber", 0.3)``); a parameter given as None is not given (its default); a parameter
    the loss does not declare is a ValueError that lists those it does.

    Parameters
    ----------
    name : str
        A registered loss: "logistic", "huber", or one added with :func:`register_loss`.
    *args : float
        The loss's parameters in their declared order (:func:`loss_parameters`).
    **params : float or None
        The loss's parameters by name; None means not given.

    Returns
    -------
    Loss
        The loss, with its parameters as floats.

    Raises
    ------
    ValueError
        An unknown name, more positional parameters than the loss declares, a parameter given twice
        or one the loss does not declare.

    Examples
    --------
    >>> get_loss("huber", h=0.3)
    HuberLoss(h=0.3, name='huber')
    >>> get_loss("logistic")
    LogisticLoss(name='logistic')
    """
    cls = _loss_class(name)
    declared = loss_parameters(cls)
    if len(args) > len(declared):
        raise ValueError(
            f"loss {name!r} takes {len(declared)} parameter(s) ({', '.join(declared) or 'none'}), got {len(args)}."
        )
    values = dict(zip(declared, args))
    for key, value in params.items():
        if key in values:
            raise ValueError(f"loss {name!r}: parameter {key!r} given twice.")
        values[key] = value
    values = {k: v for k, v in values.items() if v is not None}  # None: not given
    unknown = sorted(set(values) - set(declared))
    if unknown:
        raise ValueError(
            f"loss {name!r} has no parameter {', '.join(map(repr, unknown))}; "
            f"its parameters: {', '.join(declared) or 'none'}."
        )
    return cls(**{k: float(v) for k, v in values.items()})


def loss_from_text(name: str, pairs=(), **given) -> Loss:
    """A loss from a command line: its name and ``NAME=VALUE`` pairs (``--loss-param h=0.3``);
    ``given`` holds shorthands (``--h``) that a pair overrides. A ValueError says what is wrong."""
    declared = loss_parameters(_loss_class(name))
    for key, value in given.items():
        if value is not None and key not in declared:
            raise ValueError(
                f"--{key} is a parameter of other losses; loss {name!r} has "
                + (f"the parameter(s) {', '.join(declared)} (--loss-param NAME=VALUE)." if declared else "none.")
            )
    params = {k: v for k, v in given.items() if v is not None}
    for pair in pairs or ():
        key, sep, value = str(pair).partition("=")
        if not sep:
            raise ValueError(f"--loss-param takes NAME=VALUE (e.g. h=0.3), got {pair!r}.")
        try:
            params[key.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--loss-param {key.strip()}: {value!r} is not a number.") from None
    return get_loss(name, **params)


def coerce_loss(loss, **params) -> Loss:
    """``loss`` itself when it is a loss object (then no ``params``), else :func:`get_loss` of the name."""
    if isinstance(loss, str):
        return get_loss(loss, **params)
    if not isinstance(loss, Loss):
        raise TypeError(f"loss must be a dpci loss (dpci.losses.Loss) or a registered name, got {loss!r}.")
    if any(v is not None for v in params.values()):
        raise ValueError(f"parameters {sorted(params)} go with a loss name, not with the loss object {loss!r}.")
    return loss
