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

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Loss(Protocol):
    """What the solvers, the mechanisms and the intervals need of a margin loss."""

    name: str

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


@dataclass(frozen=True)
class LogisticLoss:
    """f(z) = log(1 + exp(-z)); |f'| <= 1, |f''| <= t = 1/4 (Section 6)."""

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
        """Return (f'(z), f''(z)): f' = -S(-z), f'' = S(z) S(-z)."""
        return self.value_and_derivatives(z)[1:]

    def value_and_derivatives(self, z):
        """Return (f, f', f'') from one exponential, stable for any z."""
        z = np.asarray(z, dtype=float)
        e = np.exp(-np.abs(z))
        inv = 1.0 / (1.0 + e)
        value = np.log1p(e) + np.maximum(-z, 0.0)
        s_minus = np.where(z >= 0.0, e * inv, inv)  # S(-z)
        return value, -s_minus, e * inv * inv  # S(z) S(-z) = e^{-|z|} / (1 + e^{-|z|})^2

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
    """

    h: float = 0.5
    name: str = "huber"

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

    def value(self, z):
        return self.value_and_derivatives(z)[0]

    def derivatives(self, z):
        """Return (f'(z), f''(z)); f'' is taken as 1/(2h) on the closed middle piece."""
        return self.value_and_derivatives(z)[1:]

    def value_and_derivatives(self, z):
        """Return (f, f', f'')."""
        z = np.asarray(z, dtype=float)
        h = self.h
        # u = clip(1 + h - z, 0, 2h) is the quadratic piece's argument; outside it f is 0 or linear.
        u = np.clip(1.0 + h - z, 0.0, 2.0 * h)
        linear = np.maximum(1.0 - h - z, 0.0)  # > 0 only on the linear piece z < 1 - h
        value = u * u / (4.0 * h) + linear
        d1 = -u / (2.0 * h)  # 0 above 1 + h, -1 below 1 - h, (z - 1 - h)/(2h) between
        d2 = np.where(np.abs(1.0 - z) <= h, 1.0 / (2.0 * h), 0.0)
        return value, d1, d2

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


LOSSES = {"logistic": LogisticLoss, "huber": HuberLoss}  # name -> class; a new loss adds itself here


def get_loss(name: str, h: float | None = None) -> Loss:
    """Return the loss called ``name`` (a key of :data:`LOSSES`); ``h`` is the Huber width."""
    if name not in LOSSES:
        raise ValueError(f"Unknown loss {name!r}; use one of {', '.join(map(repr, LOSSES))}.")
    return LOSSES[name](0.5 if h is None else h) if name == "huber" else LOSSES[name]()
