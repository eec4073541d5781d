"""Noise reduction: one noise path whose value at step t has the one-shot mechanism's law at the
budget b_t of that step, so that releasing the prefix up to step t costs only b_t.

* Pure DP -- Laplace noise reduction (Ligett et al., Algorithm 1, after Koufogiannis et al.):
  the last (least noisy) step is drawn first, L_K ~ Lap(1/b_K), then for t = K-1, ..., 1 each
  coordinate *independently* keeps L_{t+1} with probability (b_t/b_{t+1})^2 and otherwise adds a
  fresh Lap(1/b_t) (ERRATA: one coin shared by all coordinates makes the joint law non-Laplace).
  Each L_t is Lap(1/b_t) per coordinate (characteristic functions: p + (1-p)/(1+s^2/b_t^2) times
  1/(1+s^2/b_{t+1}^2) is 1/(1+s^2/b_t^2) for p = (b_t/b_{t+1})^2), and (L_1, ..., L_{t-1}) given
  L_t is drawn without the data, so the prefix up to t is b_t-DP (Ligett et al., Theorem 2.7).
* zCDP -- Brownian noise reduction (Whitehouse, Ramdas, Wu and Rogers 2022, the Brownian
  mechanism): the noise at step t is B(T_t) for one standard Brownian motion B and times
  T_1 > T_2 > ... > T_K, T_t = 1/(2 b_t). B(T_t) ~ N(0, T_t I) is the Gaussian mechanism's noise
  at rho = b_t per unit of sensitivity (Proposition 3 of WKL: sigma^2 = Delta^2/(2 rho)), and
  B(T_1), ..., B(T_{t-1}) given B(T_t) are drawn by independent increments, without the data.

A *unit* path is drawn once for every coordinate of every noised quantity; each quantity's noise
is its path times its own scale (:func:`quantity_scale`), which keeps both properties because
every quantity's budget is a fixed share of b_t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..mechanisms import NoiseLaw


def budget_grid(max_budget: float, steps: int = 20, ratio: float = 1000.0) -> np.ndarray:
    """The default grid: ``steps`` budgets spaced geometrically from max_budget/ratio to max_budget."""
    if steps < 1:
        raise ValueError(f"the budget grid needs at least one step, got steps = {steps!r}.")
    if not ratio >= 1.0:
        raise ValueError(f"ratio must be at least 1 (the grid goes from max_budget/ratio up), got {ratio!r}.")
    return np.geomspace(max_budget / ratio, max_budget, int(steps))


def laplace_path(grid, m: int, rng: np.random.Generator) -> np.ndarray:
    """(K, m) unit Laplace noise-reduction path: row t is Lap(1/b_t) in every coordinate.

    Ligett et al., Algorithm 1 with Delta = 1 and epsilon_t = b_t, an independent coin per
    coordinate (ERRATA); drawn from the last (least noisy) row back to the first.
    """
    b = np.asarray(grid, dtype=float)
    k = len(b)
    path = np.empty((k, m))
    path[-1] = rng.laplace(0.0, 1.0 / b[-1], m)
    for t in range(k - 2, -1, -1):
        keep = rng.random(m) < (b[t] / b[t + 1]) ** 2  # Algorithm 1: keep with probability (eps_t/eps_{t+1})^2
        path[t] = path[t + 1] + np.where(keep, 0.0, rng.laplace(0.0, 1.0 / b[t], m))
    return path


def brownian_times(grid) -> np.ndarray:
    """T_t = 1/(2 b_t): B(T_t) ~ N(0, T_t) is the Gaussian mechanism at rho = b_t for sensitivity 1
    (WKL Proposition 3: sigma^2 = Delta^2 / (2 rho))."""
    return 1.0 / (2.0 * np.asarray(grid, dtype=float))


def brownian_path(grid, m: int, rng: np.random.Generator) -> np.ndarray:
    """(K, m) unit Brownian noise-reduction path: row t is B(T_t), T_t = 1/(2 b_t) decreasing in t
    (Whitehouse et al. 2022): B(T_K) ~ N(0, T_K), then B(T_t) = B(T_{t+1}) + N(0, T_t - T_{t+1})."""
    times = brownian_times(grid)
    steps = np.diff(np.append(0.0, times[::-1]))  # T_K, T_{K-1} - T_K, ..., T_1 - T_2
    increments = rng.standard_normal((len(times), m)) * np.sqrt(steps)[:, None]
    return np.cumsum(increments, axis=0)[::-1]


def unit_path(privacy: str, grid, m: int, rng: np.random.Generator) -> np.ndarray:
    return laplace_path(grid, m, rng) if privacy == "pure" else brownian_path(grid, m, rng)


def quantity_scale(privacy: str, l2_sensitivity: float, share: float, entries: int) -> float:
    """The factor turning the unit path into one quantity's noise, whose budget is share * b_t.

    Pure DP: the Laplace mechanism needs the L1 sensitivity (Ligett et al., Section 2.2); from the
    L2 sensitivity S of WKL (Section 5.1 for the coefficients, Lemmas 2-5 for the matrices),
    ||v||_1 <= sqrt(entries) ||v||_2, so Lap(sqrt(entries) S / (share b_t)) per entry: a factor
    sqrt(d) for the coefficients, d for vec(M) of a d x d matrix (d^2 entries, Algorithm 2 line 2).
    zCDP: sigma^2 = S^2 / (2 share b_t) (Algorithm 4 line 6, Algorithm 2 line 5), i.e.
    (S / sqrt(share)) B(1/(2 b_t)).
    """
    if privacy == "pure":
        return math.sqrt(entries) * l2_sensitivity / share
    return l2_sensitivity / math.sqrt(share)


@dataclass(frozen=True)
class CoordinateLaplaceLaw(NoiseLaw):
    """Independent Lap(scale) in every coordinate (the Laplace mechanism with L1 sensitivity),
    replacing Eq. 3.2's spherical law in accuracy-first searches: noise reduction exists for it."""

    def sample(self, rng, d, size=None):
        shape = (d,) if size is None else (size, d)
        return rng.laplace(0.0, self.scale, shape)

    def coordinate_variance(self, d: int) -> float:
        return 2.0 * self.scale**2


def coefficient_law(privacy: str, scale: float) -> NoiseLaw:
    """The law of the coefficients' noise at one step: Lap(scale) per coordinate, or N(0, scale^2 I)."""
    if privacy == "pure":
        return CoordinateLaplaceLaw("laplace", scale)
    return NoiseLaw("gaussian", scale)


def noise_only_width(privacy: str, scale: float, alpha: float) -> float:
    """The width of the central (1 - alpha) interval of the coefficient noise alone: 2 b log(1/alpha)
    for Lap(b), 2 z_{alpha/2} sigma for N(0, sigma^2). Algorithm 5's interval adds an independent
    symmetric Gaussian term to this noise, so by Anderson's inequality its width is never smaller:
    a step whose noise alone is wider than the target cannot meet it (a public, data-free fact)."""
    if privacy == "pure":
        return 2.0 * scale * math.log(1.0 / alpha)
    from statistics import NormalDist

    return 2.0 * NormalDist().inv_cdf(1.0 - alpha / 2.0) * scale


def brownian_expost_epsilon(rho: float, design_rho: float, delta: float) -> float:
    """Ex-post epsilon at failure probability delta of the Brownian mechanism stopped where it has
    spent rho, with a linear boundary designed at ``design_rho`` (Whitehouse et al. 2022).

    For neighbours whose query differs by v with ||v||_2 <= Delta, the privacy loss after reducing
    the noise to B(T) is ||v||^2/(2T) + <v, B(T)>/T; in s = 1/T it is a Brownian motion W with
    drift, L(rho) = rho + W(2 rho) with rho = Delta^2 s / 2 (time inversion of B). The line-crossing
    bound P(exists u: W(u) >= a + k u / 2) = exp(-a k) holds at any stopping time, so with
    a k = log(1/delta): epsilon(rho) = rho + a + k rho, and a = sqrt(design_rho log(1/delta)),
    k = sqrt(log(1/delta)/design_rho) make epsilon(design_rho) = design_rho + 2 sqrt(design_rho
    log(1/delta)), Proposition 2's conversion of a fixed rho. Smaller ||v|| only lowers the loss.
    """
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}.")
    log_term = math.log(1.0 / delta)
    return rho + math.sqrt(design_rho * log_term) + rho * math.sqrt(log_term / design_rho)
