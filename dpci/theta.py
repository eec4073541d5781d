"""The interval for theta, the coefficients without penalty, from a release alone (docs/theta.md).

Every interval of the paper is for theta_0(c), the minimiser of the penalised population objective. The
penalty moves it: the population first-order conditions grad L(theta_0(c)) + 2c theta_0(c) = 0 and
grad L(theta) = 0 give theta - theta_0(c) = 2c Hbar^-1 theta_0(c), with Hbar the unpenalised Hessian
averaged along the segment between them. The released private Hessian H~ holds H_L + 2cI at theta~
(Eq. 4.2), so the one-step estimate of theta is

    theta^ = theta~ + 2c (H~ - 2cI)^-1 theta~,

post-processing of the release. Its law (sampling noise, the mechanism's noise on theta~, and the noise
on H~ that the correction itself reads) is simulated from the release: a parametric bootstrap of the
whole mechanism, with the released (theta~, H~, Sigma~) standing in for the population's. Each of m
draws makes the pieces the mechanism would release,

    theta~* = theta~ + H~^-1 G / sqrt(n) + M beta   (G ~ N(0, Sigma~); M beta: Eq. 4.1's or Eq. 5.2's noise),
    H~*     = PrivSPDMat(H~)                         (Algorithm 2's noise and eigenvalue floor),

and corrects them as above; the interval is theta^ minus the alpha/2 and 1 - alpha/2 points of
theta^* - theta^ (the basic bootstrap).

The one-step correction reads the unpenalised Hessian H0 at theta_0(c), not along the segment to theta.
:func:`error_bound` bounds the error this leaves in each coefficient, for a loss with |f'''| <= a f''
(``loss.curvature_drift``; a = 1 for the logistic loss) and rows in the unit ball. With the shift
delta = theta - theta_0(c) and s = ||delta||,

    |theta_j - (theta_0(c) + 2c H0^-1 theta_0(c))_j| <= g(a s) sqrt(delta' H0 delta [H0^-1]_jj),

with g(x) = (e^x - 1) / x - 1 (about x / 2 for a small x).

The allowance added to both ends is that bound, read at the estimated shift theta^ - theta~ and
H0 = H~ - 2cI, or (e^(a s) - 1) s where that is larger (:func:`_allowance`): a c that shrinks the
coefficients a lot pays for it in width, not in coverage.

Where the released Hessian has an eigenvalue at or below 4c the penalty is at least as strong as the
curvature it corrects (a Hessian swamped by its noise, or separable data): the release then gives no
interval for theta (:attr:`ThetaRelease.valid` is False, ``conf_int`` is unbounded), and says why.

No data are read and no privacy is spent: everything here is post-processing of the release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from .intervals import check_alpha, check_count, gaussian_factor, quantile_interval
from .mechanisms import matrix_noise_law
from .methods import PrivateRelease
from .methods import get as get_method

#: Monte Carlo draws of the simulated mechanism when the caller gives none.
DEFAULT_DRAWS = 4_000


@dataclass(frozen=True)
class ThetaRelease(PrivateRelease):
    """A release's interval for theta (module docstring). ``theta`` is the corrected estimate theta^ and
    ``offsets`` are draws of theta - theta^ (the simulated root, negated), so SE, z and p
    (:mod:`dpci.inference`) follow it as they follow any release; ``allowance`` widens both ends for the
    correction's error; ``shift`` is theta^ - theta~. ``valid`` is False, with ``caveats`` saying why,
    when the release gives no interval for theta (``conf_int`` is then (-inf, inf), ``offsets`` None)."""

    estimand: ClassVar[str] = "unregularised"
    allowance: np.ndarray | None = field(default=None, repr=False)
    shift: np.ndarray | None = field(default=None, repr=False)
    valid: bool = True

    def interval(self, alpha=None) -> np.ndarray:
        alpha = self.alpha if alpha is None else check_alpha(alpha)
        if not self.valid:
            return np.column_stack([np.full_like(self.theta, -np.inf), np.full_like(self.theta, np.inf)])
        assert self.offsets is not None and self.allowance is not None
        return quantile_interval(self.theta, self.offsets, alpha) + np.column_stack([-self.allowance, self.allowance])


def correct(theta, hessian, c: float) -> np.ndarray:
    """theta + 2c (H - 2cI)^-1 theta, with H's eigenvalues floored at 4c (a floored direction is at most
    doubled). ``theta`` (..., d) and ``hessian`` (..., d, d) may be stacks."""
    return _correct_in(np.linalg.eigh(hessian), theta, c)


def _correct_in(eigen, theta, c: float) -> np.ndarray:
    """:func:`correct` from H's eigen-decomposition (w, v)."""
    w, v = eigen
    w = np.maximum(w, 4.0 * c)
    coords = np.einsum("...ji,...j->...i", v, theta) * w / (w - 2.0 * c)
    return np.einsum("...ij,...j->...i", v, coords)


def offers_theta(method, loss) -> bool:
    """Whether :func:`theta_release` gives ``method``'s releases on ``loss`` an interval for theta: a method
    that declares it (``corrects_penalty``: the paper's two) and a loss whose curvature drift is declared."""
    return bool(method.corrects_penalty and getattr(loss, "curvature_drift", None) is not None)


def theta_release(release: PrivateRelease, loss, rng, n_samples: int | None = None) -> ThetaRelease:
    """The interval for theta of ``release`` (module docstring), post-processing with ``rng``'s draws.

    Parameters
    ----------
    release : PrivateRelease
        A release of a method with a c that releases a private Hessian (the paper's two).
    loss : Loss
        The release's loss; it must declare ``curvature_drift`` (the logistic loss does).
    rng : numpy.random.Generator
        The simulation's randomness (draws of public laws at released values: no privacy is spent).
    n_samples : int, optional
        The simulation's draws m (default :data:`DEFAULT_DRAWS`).

    Returns
    -------
    ThetaRelease

    Raises
    ------
    ValueError
        A method or loss :func:`offers_theta` refuses, saying why.
    """
    method = get_method(release.allocation.mechanism)
    if not offers_theta(method, loss):
        raise ValueError(
            f"{method.label} with the {loss.name} loss has no interval for theta from its release alone: it needs "
            "a method with a c that releases a private Hessian, and a loss whose curvature drift is bounded "
            "(the logistic loss). Use estimand='regularised', or state theta_bound."
        )
    m = DEFAULT_DRAWS if n_samples is None else check_count("n_samples", n_samples, 100)
    theta, hessian, c = release.theta, release.hessian, release.c
    assert hessian is not None  # offers_theta: the method releases one
    centre = correct(theta, hessian, c)
    shift = centre - theta
    s = float(np.linalg.norm(shift))
    reason = _no_interval(float(np.linalg.eigvalsh(hessian)[0]), c, loss.curvature_drift * s)
    allowance = (
        np.full_like(theta, math.inf) if reason else _allowance(shift, hessian - 2.0 * c * np.eye(theta.size), loss)
    )
    valid = reason is None
    root = _simulated_corrections(release, method, loss, m, rng) - centre if valid else None  # nothing to give
    caveats = tuple(release.caveats) + ((reason,) if reason else ())
    made = ThetaRelease(
        centre,
        hessian,
        release.covariance,
        release.conf_int,
        release.alpha,
        release.n,
        c,
        release.allocation,
        release.coef_noise,
        offsets=None if root is None else -root,
        caveats=caveats,
        allowance=allowance,
        shift=shift,
        valid=valid,
    )
    return replace(made, conf_int=made.interval())


def error_bound(shift, unpenalised_hessian, drift: float) -> np.ndarray:
    """Each coefficient's bound on the one-step correction's error (module docstring).

    With H0 the unpenalised Hessian at theta_0(c) and Hbar its average along the segment to theta,
    Hbar delta = 2c theta_0(c) = H0 delta0 (delta0 the one-step shift), so delta - delta0 = H0^-1 (H0 - Hbar)
    delta and, with w = H0^-1 e_j, e_j'(delta - delta0) = (1/n) sum_i (f''_i - fbar''_i) (x_i'w) (x_i'delta).
    fbar''_i averages f'' over the margin's move t x_i'delta, t in [0, 1], and |x_i'delta| <= s, so
    |fbar''_i - f''_i| <= f''_i int_0^1 (e^(a t s) - 1) dt = g(a s) f''_i. Cauchy-Schwarz with the weights f''_i
    then gives g(a s) sqrt(delta' H0 delta) sqrt(w' H0 w), where w' H0 w = [H0^-1]_jj.
    """
    h0 = np.asarray(unpenalised_hessian, dtype=float)
    x = drift * float(np.linalg.norm(shift))
    g = math.expm1(x) / x - 1.0 if x > 1e-8 else x / 2.0
    spread = max(float(shift @ h0 @ shift), 0.0)
    return g * np.sqrt(spread * np.diag(np.linalg.inv(h0)))


def _allowance(shift, unpenalised_hessian, loss) -> np.ndarray:
    """What both ends are widened by: the proven :func:`error_bound`, and at least (e^(a s) - 1) s. The
    margin above the bound absorbs what the simulated law leaves out: it reads the curvature at theta~,
    which the mechanism's noise moves away from theta_0(c) (at eps = 0.3, n = 1,000 on Awan and Wang's
    design the bound alone covered beta1 0.92, the margin 0.94; docs/theta.md)."""
    a, s = loss.curvature_drift, float(np.linalg.norm(shift))
    return np.maximum(error_bound(shift, unpenalised_hessian, a), math.expm1(a * s) * s)


MAX_DRIFT = 5.0  # a*s beyond which e^(a s) - 1 is over 147: no interval


def _no_interval(smallest: float, c: float, drift: float) -> str | None:
    """Why the release gives no interval for theta (None: it gives one): a released curvature at or below 4c,
    or a correction so large that its own allowance swamps it."""
    if smallest <= 4.0 * c:
        return (
            f"No interval for θ: the private Hessian has a direction whose curvature ({smallest:.2g}) is at most "
            f"4c = {4 * c:.3g}, so the penalty is as strong as what it would be corrected by: the data say too "
            "little along it at this budget (the Hessian's noise swamped it, or the classes are separable). More "
            "budget for the Hessian (φ2), more rows or fewer coefficients give one; the interval for θ₀(c), "
            "the coefficients with the penalty, is still valid."
        )
    if drift > MAX_DRIFT:
        return (
            f"No interval for θ: undoing the penalty moves the estimate so far (a·‖shift‖ = {drift:.3g}) that the "
            "correction's own error bound is unbounded in practice. A smaller c, more rows or more budget give "
            "one; the interval for θ₀(c), the coefficients with the penalty, is still valid."
        )
    return None


def _simulated_corrections(release, method, loss, m, rng) -> np.ndarray:
    """m draws of the corrected estimate of the release made again from its released pieces (module
    docstring): the coefficients as Algorithm 3 (Eq. 4.1) or Algorithm 5 (Eq. 5.2) model them, the Hessian
    through Algorithm 2 with its phi2 and the loss's sensitivity (Lemmas 3 and 5)."""
    theta, hessian, covariance, n, c = release.theta, release.hessian, release.covariance, release.n, release.c
    d = theta.size
    h_inv = np.linalg.inv(hessian)
    draws = rng.standard_normal((m, d)) @ (h_inv @ gaussian_factor(covariance) / math.sqrt(n)).T
    noise_matrix = method.noise_transform(hessian, n)  # H~^-1 / n (objective) or I (output)
    draws += release.coef_noise.sample(rng, d, m) @ noise_matrix.T
    draws += theta
    alloc = release.allocation
    law = matrix_noise_law(loss.hessian_sensitivity(n), alloc.phi[1], alloc.privacy)
    eta = law.sample(rng, d * d, m).reshape(m, d, d)
    return _correct_noisy(draws, hessian + (eta + np.swapaxes(eta, 1, 2)) / 2.0, c)


def _correct_noisy(theta, noisy, c: float) -> np.ndarray:
    """:func:`correct` of each draw at Algorithm 2's output from ``noisy`` (lines 10-15: eigenvalues floored at
    2c; the correction's own floor, 4c, is above it). Where every eigenvalue exceeds 4c neither floor acts and
    a solve is exact (a Cholesky factor of H - 4cI proves it); only the other draws are decomposed."""
    d = theta.shape[-1]
    shifted = noisy - 2.0 * c * np.eye(d)
    try:
        np.linalg.cholesky(shifted - 2.0 * c * np.eye(d))
        floored = np.zeros(len(theta), dtype=bool)
    except np.linalg.LinAlgError:
        floored = np.linalg.eigvalsh(noisy)[:, 0] <= 4.0 * c
    out = np.empty_like(theta)
    keep = ~floored
    out[keep] = theta[keep] + 2.0 * c * np.linalg.solve(shifted[keep], theta[keep][..., None])[..., 0]
    if floored.any():
        w, v = np.linalg.eigh(noisy[floored])
        out[floored] = _correct_in((np.maximum(w, 2.0 * c), v), theta[floored], c)
    return out
