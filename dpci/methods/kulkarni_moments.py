"""The moments Kulkarni et al.'s likelihood needs (:mod:`dpci.methods.kulkarni`), under the covariate
model x ~ N(m, S): F = E[x tanh(x'theta/2)] and W = E[x x' sech^2(x'theta/2)] (Sections 2.3, 3.3, with
Eq. 6's sign fixed, ERRATA.md).

Stein's lemma reduces both to one-dimensional expectations of g = tanh(u/2) and its first three
derivatives over u = x'theta ~ N(m'theta, theta'S theta), computed by quadrature: Gauss-Hermite for a
narrow u, composite Gauss-Legendre for a wide one (no Taylor expansion, which fails for |x'theta| > 1).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

GH_NODES = 48  # Gauss-Hermite nodes for sd(u) <= WIDE_SD; wider, composite Gauss-Legendre (tanh_moments)
WIDE_SD = 1.5


@lru_cache(maxsize=4)
def _hermite(k: int):
    nodes, weights = np.polynomial.hermite_e.hermegauss(k)
    return nodes, weights / math.sqrt(2.0 * math.pi)


def _derivatives(u):
    """g, g', g'', g''' at u for g = tanh(u/2), stacked on a new last axis."""
    tau = np.tanh(u / 2.0)
    sech2 = 1.0 - tau * tau
    return np.stack([tau, sech2 / 2.0, -tau * sech2 / 2.0, -sech2 * (1.0 - 3.0 * tau * tau) / 4.0], axis=-1)


def _hermite_moments(u, weights):
    """The weighted sums over the last axis of g and its first three derivatives at u (a row of nodes
    each), as :func:`_derivatives` gives them: one matrix-vector product each, without stacking the four
    (the posterior's hot loop)."""
    tau = np.tanh(u / 2.0)
    tau2 = tau * tau
    sech2 = 1.0 - tau2
    out = np.empty((len(u), 4))
    out[:, 0] = tau @ weights
    out[:, 1] = (sech2 @ weights) / 2.0
    tau *= sech2
    out[:, 2] = -(tau @ weights) / 2.0
    tau2 *= -3.0
    tau2 += 1.0
    tau2 *= sech2
    out[:, 3] = -(tau2 @ weights) / 4.0
    return out


@lru_cache(maxsize=1)
def _panels():
    """Composite Gauss-Legendre nodes on [-30, 30] (panels of width 3, a break at 0), their weights,
    and g - sign, g', g'', g''' there (these decay like exp(-|u|): below 1e-12 outside)."""
    x, w = np.polynomial.legendre.leggauss(8)
    left = np.arange(-30.0, 30.0, 3.0)
    grid = (left[:, None] + 1.5 * (x + 1.0)).ravel()
    derivs = _derivatives(grid)
    derivs[:, 0] -= np.sign(grid)
    return grid, np.tile(1.5 * w, len(left)), derivs


def tanh_moments(mu, var, k: int = GH_NODES) -> np.ndarray:
    """E[g^(j)(u)] for j = 0..3, g = tanh(u/2), u ~ N(mu, var) (arrays broadcast): shape (..., 4).

    g' = (1 - tau^2)/2, g'' = -tau (1 - tau^2)/2, g''' = -(1 - tau^2)(1 - 3 tau^2)/4, tau = g(u).
    For sd(u) <= WIDE_SD, Gauss-Hermite with ``k`` nodes. Wider, the derivatives (which decay like
    exp(-|u|)) are peaked on the scale of the Gaussian and Gauss-Hermite converges slowly; there the
    expectation is integrated in u by composite Gauss-Legendre on [-30, 30] (break at 0), with
    E[g] = P(u > 0) - P(u < 0) + E[g(u) - sign(u)] (a decaying integrand, smooth on each side of 0)."""
    mu, var = np.broadcast_arrays(np.asarray(mu, dtype=float), np.maximum(np.asarray(var, dtype=float), 0.0))
    out = np.empty(mu.shape + (4,))
    sd = np.sqrt(var)
    narrow = sd <= WIDE_SD
    nodes, weights = _hermite(k)
    if narrow.all():  # the usual case: no gather and scatter of the rows
        u = mu.reshape(-1, 1) + sd.reshape(-1, 1) * nodes
        return _hermite_moments(u, weights).reshape(out.shape)
    from scipy.special import ndtr

    out[narrow] = _hermite_moments(mu[narrow][:, None] + sd[narrow][:, None] * nodes, weights)
    m, s = mu[~narrow][:, None], sd[~narrow][:, None]
    grid, gw, derivs = _panels()
    wide = (gw * np.exp(-0.5 * ((grid - m) / s) ** 2) / (s * math.sqrt(2.0 * math.pi))) @ derivs
    wide[:, 0] += ndtr(m[:, 0] / s[:, 0]) - ndtr(-m[:, 0] / s[:, 0])
    out[~narrow] = wide
    return out


def model_moments(theta, m, S):
    """F = E[x tanh(x'theta/2)] and W = E[x x' sech^2(x'theta/2)] for x ~ N(m, S), batched over leading
    axes (broadcast). Stein's lemma with b = S theta (u = x'theta ~ N(m'theta, theta'b)):
    F = m E g + b E g';  W = 2 [E g' (S + m m') + E g'' (m b' + b m') + E g''' b b']."""
    b = (S @ theta[..., None])[..., 0]
    a = tanh_moments((m * theta).sum(-1), (b * theta).sum(-1))
    a0, a1, a2, a3 = (a[..., i, None] for i in range(4))
    F = a0 * m + a1 * b
    mb = m[..., :, None] * (a2 * b)[..., None, :]
    W = a1[..., None] * (S + m[..., :, None] * m[..., None, :])
    W += mb
    W += np.swapaxes(mb, -1, -2)
    W += (a3 * b)[..., :, None] * b[..., None, :]
    return F, 2.0 * W
