"""Margin losses f(z), z = y * theta.x, of Section 3.3 and their derivatives.

Each loss is vectorised over rows and carries every constant the privacy proofs use,
so nothing outside it asks which loss it is: |f'(z)| <= 1 and |f''(z)| <= t (Theorem 1,
Theorem 3), the L2 sensitivities of the Hessian and of the gradient covariance
(Lemmas 2-5, replace-one neighbours, rows in the unit ball, labels in {-1, +1}) and the
kinks where f'' jumps. The gradient of a row's loss is f'(z) y x and its Hessian
f''(z) x x^T (Section 6). A new loss is one class meeting :class:`Loss`, registered in
:data:`LOSSES`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, replace
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

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


def _work_array(z, overwrite):
    """``z`` itself when it may be overwritten and is a float array (double or single), else a
    double copy."""
    if overwrite and isinstance(z, np.ndarray) and z.dtype in (np.float64, np.float32):
        return z
    return np.array(z, dtype=float)


def _logistic_parts(z):
    """e = e^{-|z|} and 1 / (1 + e), the two arrays the logistic loss and its derivatives are made of."""
    e = np.abs(z)
    np.exp(np.negative(e, out=e), out=e)
    inv = np.add(e, 1.0)
    return e, np.divide(1.0, inv, out=inv)


def _logistic_slopes(z, e, inv):
    """(f'(z), f''(z)) from :func:`_logistic_parts` (``e`` is overwritten): f' = -e/(1 + e) where
    z >= 0 and -1/(1 + e) below (a select, not a second exponential), f'' = e/(1 + e)^2."""
    ratio = np.multiply(e, inv, out=e)
    d1 = np.where(z >= 0.0, ratio, inv)
    return np.negative(d1, out=d1), np.multiply(ratio, inv, out=ratio)


@dataclass(frozen=True)
class LogisticLoss:
    """f(z) = log(1 + exp(-z)); |f'| <= 1, |f''| <= t = 1/4 (Section 6).

    The loss of logistic regression (:class:`~dpci.PrivateLogisticRegression`). Its sensitivities:
    1/(2n) for the Hessian (Lemma 3), 2 S(||theta||)^2 / n for the gradient covariance (Lemma 2).

    Parameters
    ----------
    name : str
        Its key in :data:`LOSSES` (leave the default).

    Examples
    --------
    >>> import numpy as np
    >>> import dpci
    >>> loss = dpci.LogisticLoss()
    >>> loss.t, loss.hessian_sensitivity(n=1_000)
    (0.25, 0.0005)
    >>> loss.derivatives(np.array([0.0]))  # (f'(0), f''(0))
    (array([-0.5]), array([0.25]))
    """

    name: str = "logistic"

    @property
    def t(self) -> float:
        return 0.25

    @property
    def kinks(self) -> tuple[float, ...]:
        return ()

    def hessian_sensitivity(self, n: int) -> float:
        """Sensitivity of the Hessian of Eq. 4.2: 1/(2n) (Lemma 3)."""
        return 1.0 / (2.0 * n)

    def covariance_sensitivity(self, n: int, theta) -> float:
        """Sensitivity of the covariance of Eq. 4.3: 2 S(||theta||)^2 / n (Lemma 2), at the released
        theta, which is already private, so using it costs no budget (ERRATA)."""
        norm = float(np.linalg.norm(theta))
        return 2.0 / (1.0 + math.exp(-norm)) ** 2 / n

    def value(self, z):
        z = np.asarray(z, dtype=float)
        return np.log1p(np.exp(-np.abs(z))) + np.maximum(-z, 0.0)

    def derivatives(self, z):
        """Return (f'(z), f''(z)): f' = -S(-z), f'' = S(z) S(-z) (as :meth:`value_and_derivatives`, without f)."""
        z = np.asarray(z, dtype=float)
        return _logistic_slopes(z, *_logistic_parts(z))

    def value_and_derivatives(self, z):
        """Return (f, f', f''), stable for any z: with e = e^{-|z|}, f = log(1 + e) + max(-z, 0),
        f' = -S(-z) = -e/(1 + e) for z >= 0 and -1/(1 + e) below, f'' = S(z) S(-z) = e/(1 + e)^2.

        Written with one exponential and no branch per element (the hot path of every solve): f' is
        -e/(1 + e) where z >= 0 and -1/(1 + e) below (a select, not a second exponential).
        """
        z = np.asarray(z, dtype=float)
        e, inv = _logistic_parts(z)
        value = np.log1p(e)
        minus_z = np.negative(z)
        value += np.maximum(minus_z, 0.0, out=minus_z)
        return (value, *_logistic_slopes(z, e, inv))

    def first_derivative(self, z, overwrite=False, weights=None):
        """f'(z) = -1 / (1 + e^z), times ``weights`` if given.

        ``overwrite=True`` reuses a float array ``z`` (the hot path of batched fits).
        """
        out = _work_array(z, overwrite)
        with np.errstate(over="ignore"):  # e^z = inf gives f' = -0 exactly
            np.exp(out, out=out)
        out += 1.0
        np.divide(-1.0 if weights is None else weights, out, out=out)
        if weights is not None:
            np.negative(out, out=out)
        return out

    def weighted_derivatives(self, z, weights=None, second=False, out=None):
        """(w f'(z), w f''(z)) for a float array ``z`` (double or single precision), which is
        overwritten (it holds w f''); w f'' only with ``second`` (else None); w f' goes into
        ``out`` when given. Fewest passes over z: p = -(1 + e^z), w f' = w / p and
        w f'' = w / (1 + e^z) - w / (1 + e^z)^2 = -(w f' + w f' / p) (e^z = inf gives -0 and 0
        exactly; the difference has an absolute error ~1e-16 where f'' is tiny, far below the
        single precision the batched solver's Hessians are computed in)."""
        p = _work_array(z, True)
        with np.errstate(over="ignore"):
            np.exp(p, out=p)
        np.subtract(-1.0, p, out=p)
        d1 = np.divide(1.0 if weights is None else weights, p, out=out)
        if not second:
            return d1, None
        d2 = np.divide(d1, p, out=p)
        np.add(d2, d1, out=d2)
        return d1, np.negative(d2, out=d2)

    def second_derivative(self, z):
        """f''(z) = e^{-|z|} / (1 + e^{-|z|})^2."""
        e = np.abs(np.asarray(z, dtype=float))
        np.negative(e, out=e)
        np.exp(e, out=e)
        denom = 1.0 + e
        denom *= denom
        return np.divide(e, denom, out=e)


@dataclass(frozen=True)
class HuberLoss:
    """Huberized hinge loss of Chapelle (2007), Section 3.3, with width h > 0.

    f(z) = 0 for z > 1 + h, (1 + h - z)^2 / (4h) for |1 - z| <= h, 1 - z for
    z < 1 - h; |f'| <= 1 and |f''| <= t = 1/(2h) (Section 6).

    The loss of the private SVM (:class:`~dpci.PrivateHuberSVM`). Its sensitivities: 1/(n h) for the
    Hessian (Lemma 5), 2/n for the gradient covariance (Lemma 4).

    Parameters
    ----------
    h : float
        The width of the quadratic piece, > 0 (default 0.5, as in Chaudhuri et al. 2011); a small h
        is closer to the hinge loss but has a larger t, so objective perturbation needs a larger c.
    name : str
        Its key in :data:`LOSSES` (leave the default).

    Raises
    ------
    ValueError
        h not a positive finite number.

    Examples
    --------
    >>> import dpci
    >>> loss = dpci.HuberLoss(h=0.25)
    >>> loss.t, loss.kinks  # |f''| <= 1/(2h); f'' jumps at 1 -/+ h
    (2.0, (0.75, 1.25))
    >>> loss.hessian_sensitivity(n=1_000)
    0.004
    """

    h: float = 0.5
    name: str = "huber"
    ranges: ClassVar[dict[str, Interval]] = {"h": Interval(0.05, 2.0, step=0.05, label="Huber width h")}

    def __post_init__(self):
        if not (np.isfinite(self.h) and self.h > 0):
            raise ValueError(f"Huber width h must be a positive number, got h={self.h!r}.")

    @property
    def t(self) -> float:
        return 1.0 / (2.0 * self.h)

    @property
    def kinks(self) -> tuple[float, ...]:
        return (1.0 - self.h, 1.0 + self.h)

    def hessian_sensitivity(self, n: int) -> float:
        """Sensitivity of the Hessian of Eq. 4.2: 1/(nh) (Lemma 5), i.e. 2t/n."""
        return 1.0 / (n * self.h)

    def covariance_sensitivity(self, n: int, theta) -> float:
        """Sensitivity of the covariance of Eq. 4.3: 2/n (Lemma 4), whatever theta."""
        return 2.0 / n

    def _clipped(self, z):
        """u = clip(1 + h - z, 0, 2h), the quadratic piece's argument (outside it f is 0 or linear)."""
        u = np.subtract(1.0 + self.h, z)
        return np.minimum(np.maximum(u, 0.0, out=u), 2.0 * self.h, out=u)

    def value(self, z):
        """f(z): 0 above 1 + h, (1 + h - z)^2 / (4h) on the middle piece, 1 - z below 1 - h."""
        z = np.asarray(z, dtype=float)
        h = self.h
        u = self._clipped(z)
        linear = np.subtract(1.0 - h, z)
        np.maximum(linear, 0.0, out=linear)  # > 0 only on the linear piece z < 1 - h
        value = np.multiply(u, u, out=u)
        value /= 4.0 * h
        value += linear
        return value

    def derivatives(self, z):
        """Return (f'(z), f''(z)); f'' is taken as 1/(2h) on the closed middle piece |1 - z| <= h."""
        z = np.asarray(z, dtype=float)
        h = self.h
        u = self._clipped(z)
        d1 = np.negative(u, out=u)
        d1 /= 2.0 * h  # 0 above 1 + h, -1 below 1 - h, (z - 1 - h)/(2h) between
        d2 = np.abs(np.subtract(1.0, z))
        np.less_equal(d2, h, out=d2)  # 1.0 on the closed middle piece, else 0.0
        d2 *= 1.0 / (2.0 * h)
        return d1, d2

    def value_and_derivatives(self, z):
        """Return (f, f', f'')."""
        return (self.value(z), *self.derivatives(z))

    def first_derivative(self, z, overwrite=False, weights=None):
        """f'(z) = -clip(1 + h - z, 0, 2h) / (2h), times ``weights`` if given."""
        out = _work_array(z, overwrite)
        np.subtract(1.0 + self.h, out, out=out)
        np.clip(out, 0.0, 2.0 * self.h, out=out)
        out *= -1.0 / (2.0 * self.h)
        if weights is not None:
            out *= weights
        return out

    def weighted_derivatives(self, z, weights=None, second=False, out=None):
        """(w f'(z), w f''(z)) for a float array ``z`` (double or single precision), which is
        overwritten (it holds w f''); w f'' only with ``second`` (else None); w f' goes into
        ``out`` when given. No temporaries: u = 1 + h - z, f' = -clip(u, 0, 2h) / (2h) and
        f'' = 1/(2h) where |u - h| = |1 - z| <= h."""
        h, z = self.h, _work_array(z, True)
        u = np.subtract(1.0 + h, z, out=out)
        d2 = None
        if second:
            d2 = np.subtract(u, h, out=z)
            np.abs(d2, out=d2)
            np.less_equal(d2, h, out=d2)
            d2 *= 1.0 / (2.0 * h)
            if weights is not None:
                d2 *= weights
        np.clip(u, 0.0, 2.0 * h, out=u)
        u *= -1.0 / (2.0 * h)
        if weights is not None:
            u *= weights
        return u, d2

    def second_derivative(self, z):
        """f''(z) = 1/(2h) on the closed middle piece |1 - z| <= h, else 0."""
        return np.where(np.abs(1.0 - np.asarray(z, dtype=float)) <= self.h, 1.0 / (2.0 * self.h), 0.0)


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
