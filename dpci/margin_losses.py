"""The two margin losses of Section 3.3, logistic and the Huberized hinge, as classes meeting
:class:`~dpci.losses.Loss` (registered in :data:`~dpci.losses.LOSSES`).

Each is vectorised over rows and carries its constants: the bound t on |f''| (Theorem 1,
Theorem 3), the L2 sensitivities of the Hessian and of the gradient covariance (Lemmas 2-5) and
the kinks where f'' jumps. Import them from :mod:`dpci.losses` (or ``dpci``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .parameters import Interval


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
        Its key in :data:`~dpci.losses.LOSSES` (leave the default).

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
    def odds_ratios(self) -> bool:
        """True: a coefficient is the log odds ratio per unit of its feature (pages state odds ratios)."""
        return True

    @property
    def curvature_drift(self) -> float:
        """a with |f'''| <= a f'': f''' = f'' (1 - 2 S(z)), so a = 1 (the loss is self-concordant in Bach's
        generalised sense). It bounds how far the Hessian moves along the penalty's shift (:mod:`dpci.theta`)."""
        return 1.0

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
        Its key in :data:`~dpci.losses.LOSSES` (leave the default).

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
    def odds_ratios(self) -> bool:
        """False: a margin loss without a probability model, so its coefficients have no odds reading."""
        return False

    @property
    def curvature_drift(self) -> None:
        """None: f'' jumps at the kinks, so no a bounds |f'''| by a f''; without a penalty the minimiser need
        not be unique (separable data, or f'' = 0 off the band), so the interval stays for theta_0(c)."""
        return None

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
