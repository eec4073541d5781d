"""The width of the interval for theta from the release alone (:mod:`dpci.theta`), predicted on the public
reference: the release the reference's population would make is drawn, and dpci.theta's own interval is
computed from each draw, so the prediction and the interval a user gets are one computation.

What varies between releases, and moves the width most, is the private Hessian: Algorithm 2's noise can
bring its smallest eigenvalue close to 4c, where the correction is steep, or below it, where the release
gives no interval for theta. The released coefficients vary too, and the correction's shift and allowance
grow with them (a shift too large gives no interval). So HESSIAN_DRAWS releases are drawn at one public
seed, each a released Hessian and released coefficients (sampling noise and the mechanism's, as dpci.theta
simulates them) with the Hessian read at those coefficients, as the release reads it; each interval's width
is computed, and the prediction is their mean over the draws that give an interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..intervals import gaussian_factor
from ..mechanisms import priv_spd_mat
from ..methods import PrivateRelease
from ..theta import theta_release
from .reference import PUBLIC_SEED

HESSIAN_DRAWS = 8  # released Hessians per prediction
THETA_DRAWS = 400  # dpci.theta's simulation per drawn release (the width's Monte Carlo error is ~2%)
MOSTLY_GIVEN = 0.75  # a c counts only where at least this share of releases gives an interval for theta


@dataclass(frozen=True)
class ThetaWidths:
    """``widths``: mean width per coefficient over the drawn releases that give an interval (inf if too few
    do); ``allowance``: the mean of their largest correction allowance; ``given``: the share of releases that give one."""

    widths: np.ndarray
    allowance: float
    given: float


def theta_widths(measurement, loss, hessian_at, theta_c, at_theta_c, n: int, alpha: float) -> ThetaWidths:
    """dpci.theta's interval predicted on the reference for the release ``measurement`` describes (its c is
    the one predicted). ``hessian_at(theta)``: the reference population's (Hessian with 2cI, as Algorithm 2
    releases it, and gradient covariance) at theta, read at each draw's coefficients as a release reads them;
    ``at_theta_c``: the same at theta_c, already computed by the caller."""
    method, alloc, c = measurement.method, measurement.allocation, measurement.spec.c
    rng = np.random.default_rng(PUBLIC_SEED)
    hessian, covariance = at_theta_c
    noise = method.coefficient_noise_law(measurement, n)
    d = theta_c.size
    sampling = np.linalg.inv(hessian) @ gaussian_factor(covariance) / math.sqrt(n)
    coefficients = theta_c + rng.standard_normal((HESSIAN_DRAWS, d)) @ sampling.T
    coefficients += noise.sample(rng, d, HESSIAN_DRAWS) @ method.noise_transform(hessian, n).T
    widths, allowances = [], []
    for theta in coefficients:
        at_theta, covariance = hessian_at(theta)
        released = priv_spd_mat(at_theta, loss.hessian_sensitivity(n), alloc.phi[1], c, alloc.privacy, rng)
        release = PrivateRelease(theta, released, covariance, np.empty((0, 2)), alpha, n, c, alloc, noise)
        made = theta_release(release, loss, rng, THETA_DRAWS)
        if made.valid and made.allowance is not None:
            widths.append(np.diff(made.conf_int, axis=1)[:, 0])
            allowances.append(float(np.max(made.allowance)))
    given = len(widths) / HESSIAN_DRAWS
    if given < MOSTLY_GIVEN:
        return ThetaWidths(np.full(theta_c.shape, math.inf), math.inf, given)
    return ThetaWidths(np.mean(widths, axis=0), float(np.mean(allowances)), given)
