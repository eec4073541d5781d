"""The public reference the predictions are computed on, and the penalty's bias predicted on it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..data.standin import DEFAULT_CONSTANT_GUESS, DEFAULT_GUESS
from ..data.synthetic import make_synthetic_logistic
from ..losses import coerce_loss
from ..solver import ConvergenceError, minimise_erm

REFERENCE_ROWS = 2_000  # rows of the default reference (each with both labels, weighted)
PUBLIC_SEED = 20_261_126  # a fixed public seed: the predictions are deterministic and read no data


@dataclass(frozen=True, eq=False)
class Reference:
    """A public population the predictions are computed on: margin rows ``A`` with multiplicities
    ``weights`` (each row with both labels, weighted by its probability, for the default), its
    unpenalised coefficients ``theta`` and the smallest eigenvalue of its design's second moment
    E[x x'] (the curvature the predicted bias assumes)."""

    A: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)
    theta: np.ndarray
    design_min_eigenvalue: float
    description: str

    @property
    def d(self) -> int:
        return self.A.shape[1]

    def theta0(self, c: float, loss, start=None) -> np.ndarray:
        """theta_0(c) of the reference (exact minimiser of its penalised objective)."""
        return minimise_erm(self.A, loss, c, weights=self.weights, theta_init=start).theta


def reference(d: int, loss="logistic", *, guess=None, stand_in=None, theta_bound=None) -> Reference:
    """The public reference for d coefficients (the constant included).

    Default: ``REFERENCE_ROWS`` rows of the known-truth synthetic design (:func:`make_synthetic_logistic`:
    uniform in the ball, a constant appended, each row normalised) with the stand-in's public guess of
    the coefficients (:data:`dpci.data.standin.DEFAULT_GUESS`; ``guess`` replaces it, the constant's
    last), each row taken with both labels weighted by the logistic model's probabilities, so the
    reference is a population, not a sample. ``stand_in=(X, y)``: a public dataset instead (rows in the
    unit ball, labels +/-1 or 0/1), used as it is. Neither reads private data. With ``theta_bound`` (a
    stated bound on ||theta||) a default guess longer than it is scaled to that length.
    """
    loss = coerce_loss(loss)
    if stand_in is not None:
        return _stand_in_reference(stand_in, loss)
    d = _check_d(d)
    theta = np.append(np.resize(DEFAULT_GUESS, d - 1), DEFAULT_CONSTANT_GUESS) if guess is None else guess
    theta = np.asarray(theta, dtype=float)
    if theta_bound is not None and np.linalg.norm(theta) > theta_bound and guess is None:
        theta = theta * (positive("theta_bound", theta_bound) / np.linalg.norm(theta))
    if theta.shape != (d,):
        raise ValueError(f"guess must have d = {d} coefficients (the constant's last), got shape {theta.shape}.")
    return _default_reference(tuple(theta.tolist()), loss)


def _check_d(d) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ValueError(f"d (the number of coefficients, the constant included) must be an integer >= 2, got {d!r}.")
    return int(d)


@lru_cache(maxsize=32)
def _default_reference(theta: tuple, loss) -> Reference:
    guess = np.array(theta)
    X, _ = make_synthetic_logistic(REFERENCE_ROWS, guess, random_state=PUBLIC_SEED)
    p = 1.0 / (1.0 + np.exp(-(X @ guess)))
    A = np.asfortranarray(np.vstack([X, -X]))
    weights = np.concatenate([2.0 * p, 2.0 * (1.0 - p)])  # mean over the REFERENCE_ROWS rows of E_y
    if getattr(loss, "odds_ratios", False):  # the logistic model's negative log-likelihood: its labels' law
        theta0 = guess  # well specified: the population minimiser at c = 0 is the truth itself
    else:
        theta0 = minimise_erm(A, loss, 1e-9, weights=weights).theta
    return Reference(
        A,
        weights,
        theta0,
        design_min_eigenvalue(len(guess)),
        "the known-truth synthetic design with the stand-in's public guess",
    )


def design_min_eigenvalue(d: int) -> float:
    """lambda_min(E[x x']) of the synthetic design, exactly: x = (u, 1) / sqrt(1 + r^2) with u uniform
    in the unit ball of R^m (m = d - 1, r = ||u||, density m r^(m-1)). By symmetry E[x x'] is diagonal,
    with E[r^2 / (1 + r^2)] / m for each feature and E[1 / (1 + r^2)] for the constant."""
    from scipy.integrate import quad

    m = d - 1
    feature = quad(lambda r: m * r ** (m - 1) * r * r / (1 + r * r), 0.0, 1.0)[0] / m
    constant = quad(lambda r: m * r ** (m - 1) / (1 + r * r), 0.0, 1.0)[0]
    return min(feature, constant)


def _stand_in_reference(stand_in, loss) -> Reference:
    from ..solver import margin_rows
    from ..validation import check_signed_data

    X, y = stand_in
    X, signs = check_signed_data(X, y)
    A = margin_rows(X, signs)
    weights = np.ones(len(A))
    try:
        theta0 = minimise_erm(A, loss, 1e-9, weights=weights).theta
    except ConvergenceError:
        raise ValueError(
            "the stand-in is separable (its unpenalised coefficients are infinite): use more rows."
        ) from None
    eig = float(np.linalg.eigvalsh(X.T @ X / len(X))[0])
    return Reference(A, weights, theta0, eig, "the public stand-in passed")


# --- the shrinkage bias, predicted ------------------------------------------------------------------------------
def min_curvature(loss, radius: float) -> float:
    """min of f''(z) over |z| <= radius (every margin theta.x with ||theta|| <= radius, ||x|| <= 1)."""
    z = np.concatenate([np.linspace(-radius, radius, 2001), [k for k in loss.kinks if abs(k) <= radius]])
    return float(np.min(loss.second_derivative(z)))


def theta_bound_of(ref: Reference, theta_bound) -> float:
    return float(np.linalg.norm(ref.theta)) if theta_bound is None else positive("theta_bound", theta_bound)


def predicted_bias(c, loss, ref: Reference, theta_bound) -> float:
    """The bias bound b(c) = min(B, 2cB / (mu + 2c)) with mu from the reference design: a *prediction* for
    :func:`dpci.recommend_c`, not a proof about any data (the interval a user receives is widened by
    :func:`dpci.recommend.bias.bias_bound`, from its own release)."""
    B = theta_bound_of(ref, theta_bound)
    mu = min_curvature(loss, B) * ref.design_min_eigenvalue
    return min(B, 2.0 * c * B / (mu + 2.0 * c))


def positive(name, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not (0 < value < math.inf):
        raise ValueError(f"{name} must be a positive number, got {value!r}.")
    return float(value)
