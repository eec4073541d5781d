"""Accuracy-first search with noise reduction (docs/accuracy-first.md).

The data are read twice, before anything is released: the non-private fit theta^ and, at the
*anchor* step s, the Hessian (Eq. 4.2) and covariance (Eq. 4.3) at theta~_s. From then on only the
noise changes: step t >= s releases theta~_t = theta^ + N_theta(t) and the matrices M + N_M(t) of
Algorithm 2 at the same point theta~_s (a fixed query, so noise reduction applies), and Algorithm 5
turns them into an interval. The width check reads released quantities only (post-processing).

The anchor s is public: the first grid step whose coefficient noise alone leaves room for the
target (:func:`~dpci.accuracy_first.noise_reduction.noise_only_width`); earlier steps cannot meet
it whatever the data, so nothing is computed or released there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..accounting import Allocation, ApproxDP, PrivacySpend, zcdp_to_approx_dp
from ..intervals import (
    gaussian_factor,
    hessian_and_covariance,
    normal_interval,
    quantile_interval,
    sandwich_covariance,
)
from ..losses import Loss
from ..mechanisms import NoiseLaw, floor_eigenvalues
from ..methods import PrivateRelease, available, get
from ..methods.base import NotionName
from ..sensitivity import output_sensitivity
from ..solver import margin_rows, minimise_erm
from ..spec import check_spec
from ..validation import check_signed_data
from .noise_reduction import (
    brownian_expost_epsilon,
    budget_grid,
    coefficient_law,
    noise_only_width,
    quantity_scale,
    unit_path,
)

STRATEGIES = ("noise_reduction", "doubling", "fixed")


@dataclass(frozen=True)
class PathStep:
    """One grid step of a search: its budget, whether it was released and checked (``widths`` of
    the chosen coefficients then), and the noise-only lower bound on the width."""

    budget: float
    checked: bool
    widths: np.ndarray | None
    bound: float

    @property
    def width(self) -> float:
        return float(np.max(self.widths)) if self.widths is not None else math.nan


@dataclass(frozen=True)
class SearchResult:
    """What a search releases and what it cost.

    ``spend`` is the privacy the outcome realised, step by step: for noise reduction that of the last
    step reached (its ex-post loss; exact for pure DP, the nominal rho for zCDP, see
    :meth:`approx_dp`), for doubling the sum of every release made, for fixed the one release.
    ``charged`` is what the search was charged before it ran: the most it could spend
    (:func:`~dpci.accuracy_first.baselines.ex_ante_spend`). An ex-post loss does not compose by
    simply adding it to a running total (Rogers, Samorodnitsky, Wu & Ramdas 2023), so the ledger
    charges the ex-ante amount; the ex-post figure says what this outcome alone would have cost.
    """

    strategy: str
    privacy: str
    target: float
    coefficients: tuple[int, ...]
    release: PrivateRelease
    met: bool
    budget: float
    spend: PrivacySpend
    path: tuple[PathStep, ...]
    design_budget: float | None = None
    releases: int = 1
    extra: dict = field(default_factory=dict, repr=False)
    charged: PrivacySpend | None = None  # what the ledger admitted before the search ran (ex ante)

    @property
    def widths(self) -> np.ndarray:
        ci = self.release.conf_int[list(self.coefficients)]
        return ci[:, 1] - ci[:, 0]

    def approx_dp(self, delta: float = 1e-6) -> ApproxDP:
        """The ex-post (epsilon, delta) guarantee of the outcome. Pure DP: epsilon = the spend, delta = 0.
        zCDP noise reduction: Whitehouse et al.'s line-crossing bound at this delta
        (:func:`~dpci.accuracy_first.noise_reduction.brownian_expost_epsilon`); zCDP otherwise: the
        spend's rho through Proposition 2."""
        if self.privacy == "pure":
            return ApproxDP(float(self.spend.epsilon or 0.0), 0.0)
        if self.strategy == "noise_reduction" and self.design_budget is not None:
            return ApproxDP(brownian_expost_epsilon(self.spend.rho, self.design_budget, delta), delta)
        return ApproxDP(zcdp_to_approx_dp(self.spend.rho, delta), delta)

    def path_frame(self):
        """The path as a pandas DataFrame: budget, checked, width (max over the chosen), bound."""
        import pandas as pd

        return pd.DataFrame([dict(budget=p.budget, checked=p.checked, width=p.width, bound=p.bound) for p in self.path])


# --- checks ------------------------------------------------------------------------------------
def _positive(name, value, what) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a positive, finite {what}, got {value!r}.")
    return number


def searchable_methods() -> tuple[str, ...]:
    """The registered methods an accuracy-first search supports: those that declare their noise
    reducible (:attr:`dpci.methods.Method.noise_reducible`; output perturbation)."""
    return tuple(name for name in available() if get(name).noise_reducible)


def check_search(target, coefficients, d, max_budget, grid, method, strategy):
    """Validate the search's settings; returns (target, coefficient indices, grid)."""
    if method not in searchable_methods():
        said = " and ".join(get(m).label for m in searchable_methods())
        names = ", ".join(f"method={m!r}" for m in searchable_methods())
        raise ValueError(
            f"Accuracy-first searches support {said} only ({names}), got {method!r}: "
            "objective perturbation's noise enters through the minimiser of a data-dependent objective, "
            "not additively on a fixed query, so noise reduction's guarantee does not carry over "
            "(see Accuracy first in the documentation)."
        )
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}; got {strategy!r}.")
    target = _positive("target", target, "interval width")
    if coefficients is None:
        coefs = tuple(range(d))
    else:
        coefs = tuple(int(j) for j in np.atleast_1d(coefficients))
        if not coefs or any(not -d <= j < d for j in coefs):
            raise ValueError(f"coefficients must be indices of the {d} coefficients, got {coefficients!r}.")
        coefs = tuple(j % d for j in coefs)
    max_budget = _positive("max_budget", max_budget, "budget")
    grid = budget_grid(max_budget) if grid is None else np.asarray(grid, dtype=float).ravel()
    if grid.size == 0:
        raise ValueError("the budget grid is empty: give at least one budget.")
    if not (np.all(np.isfinite(grid)) and np.all(grid > 0) and np.all(np.diff(grid) > 0)):
        raise ValueError(f"the budget grid must be positive, finite and strictly increasing, got {grid!r}.")
    if max_budget < grid[0]:
        raise ValueError(
            f"max_budget = {max_budget:.4g} is below the grid's first step {grid[0]:.4g}: nothing could be released."
        )
    return target, coefs, grid[grid <= max_budget * (1 + 1e-12)]


# --- the pieces computed from the data ---------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    """Everything fixed before the first release: the data's size, the loss, the settings."""

    n: int
    d: int
    loss: Loss
    c: float
    privacy: NotionName
    split: tuple[float, float, float]
    alpha: float
    n_samples: int
    method: str  # a noise-reducible method (check_search)

    def allocation(self, budget: float) -> Allocation:
        return get(self.method).allocate(budget, self.split, self.privacy)

    def coef_scale(self, budget: float) -> float:
        """The coefficient noise's scale at ``budget``: unit path value times this (see quantity_scale)."""
        return self.coef_unit_scale() * self.unit_std(budget)

    def coef_unit_scale(self) -> float:
        # WKL Section 5.1: L2 sensitivity 1/(nc) of the minimiser of Eq. 5.1; L1 through sqrt(d).
        return quantity_scale(self.privacy, output_sensitivity(self.n, self.c), self.split[0], self.d)

    def unit_std(self, budget: float) -> float:
        """The scale of the unit path at ``budget``: Lap(1/b) (pure), B(1/(2b)) of sd 1/sqrt(2b) (zCDP)."""
        return 1.0 / budget if self.privacy == "pure" else 1.0 / math.sqrt(2.0 * budget)

    def bound(self, budget: float) -> float:
        return noise_only_width(self.privacy, self.coef_scale(budget), self.alpha)


def make_problem(X, y, spec):
    """Validate the data; the search's problem of a :class:`dpci.ReleaseSpec` (validated when made):
    (Problem, margin rows A)."""
    spec = check_spec(spec, "accuracy_first")
    X, y = check_signed_data(X, y)
    n, d = X.shape
    problem = Problem(n, d, spec.loss, spec.c, spec.privacy, tuple(spec.split), spec.alpha, spec.n_samples, spec.method)
    return problem, margin_rows(X, y)


class IntervalMaker:
    """Algorithm 5, lines 2-24, from released pieces only; the Monte Carlo draws (data-free) are
    drawn once and reused at every step, so the widths along a path differ only by the noise."""

    def __init__(self, problem: Problem, rng: np.random.Generator):
        self.p = problem
        self.rng = rng
        self._gauss: np.ndarray | None = None
        self._noise: np.ndarray | None = None

    def __call__(
        self, theta, hessian, covariance, budget, scale
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        p = self.p
        law = coefficient_law(p.privacy, scale)
        if p.privacy == "zcdp":  # Algorithm 5, lines 18-23: U = sigma^2 I + H~^-1 Sigma~ H~^-1 / n
            cov = scale**2 * np.eye(p.d) + sandwich_covariance(hessian, covariance, p.n)
            return normal_interval(theta, cov, p.alpha), None, cov
        if self._gauss is None:
            self._gauss = self.rng.standard_normal((p.n_samples, p.d))
            self._noise = law.sample(self.rng, p.d, p.n_samples) / scale  # unit Laplace draws
        factor = np.linalg.inv(hessian) @ gaussian_factor(covariance) / math.sqrt(p.n)
        # Algorithm 5, lines 7-11: Q = H~^-1 G / sqrt(n) - beta, beta from the coefficients' own law
        offsets = self._gauss @ factor.T - scale * self._noise
        return quantile_interval(theta, offsets, p.alpha), offsets, None


def private_matrix(matrix, noise, c):
    """Algorithm 2, lines 7-15: add the (reshaped) noise, symmetrise, floor the eigenvalues at 2c."""
    d = matrix.shape[0]
    noisy = matrix + noise.reshape(d, d)
    return floor_eigenvalues((noisy + noisy.T) / 2.0, c)


def step_release(problem, maker, theta, hessian, covariance, budget, scale) -> PrivateRelease:
    conf, offsets, cov = maker(theta, hessian, covariance, budget, scale)
    law: NoiseLaw = coefficient_law(problem.privacy, scale)
    alloc = problem.allocation(budget)
    return PrivateRelease(
        theta, hessian, covariance, conf, problem.alpha, problem.n, problem.c, alloc, law, offsets, cov
    )


def interval_widths(release: PrivateRelease, coefs) -> np.ndarray:
    ci = release.conf_int[list(coefs)]
    return ci[:, 1] - ci[:, 0]


def noise_reduction(problem: Problem, A, target, coefs, grid, rng, design_budget=None, callback=None):
    """The search itself (see the module docstring); returns a :class:`SearchResult`."""
    p = problem
    theta_hat = minimise_erm(A, p.loss, p.c).theta  # read 1: the non-private fit
    bounds = np.array([p.bound(b) for b in grid])
    fits = np.flatnonzero(bounds <= target)
    anchor = int(fits[0]) if fits.size else len(grid) - 1  # public: no earlier step can meet the target
    d = p.d
    path_noise = unit_path(p.privacy, grid, d + 2 * d * d, rng)  # one unit path per noised coordinate
    coef_unit = p.coef_unit_scale()
    theta_anchor = theta_hat + coef_unit * path_noise[anchor, :d]
    # read 2 (part of the anchor step's release): Eq. 4.2 and 4.3 at the released theta~_s
    hess, cov = hessian_and_covariance(A, p.loss, theta_anchor, p.c)
    del A  # nothing below reads the data
    # Algorithm 2's sensitivities (Lemmas 3/5 for the Hessian, 2/4 for the covariance at theta~_s)
    h_unit = quantity_scale(p.privacy, p.loss.hessian_sensitivity(p.n), p.split[1], d * d)
    s_unit = quantity_scale(p.privacy, p.loss.covariance_sensitivity(p.n, theta_anchor), p.split[2], d * d)
    maker = IntervalMaker(p, rng)
    path, release, met, last = [], None, False, anchor
    for t, budget in enumerate(grid):
        if t < anchor:
            path.append(PathStep(float(budget), False, None, float(bounds[t])))
            continue
        noise = path_noise[t]
        theta = theta_hat + coef_unit * noise[:d]
        hessian = private_matrix(hess, h_unit * noise[d : d + d * d], p.c)
        covariance = private_matrix(cov, s_unit * noise[d + d * d :], p.c)
        release = step_release(p, maker, theta, hessian, covariance, float(budget), p.coef_scale(float(budget)))
        last = t
        widths = interval_widths(release, coefs)
        path.append(PathStep(float(budget), True, widths, float(bounds[t])))
        if callback is not None:
            callback(path[-1])
        if np.all(widths <= target):
            met = True
            break
    assert release is not None
    spend = release.allocation.spend
    if p.privacy == "zcdp" and design_budget is None:  # public: the grid only
        design_budget = float(math.sqrt(grid[anchor] * grid[-1]))
    return SearchResult(
        "noise_reduction",
        p.privacy,
        target,
        coefs,
        release,
        met,
        float(grid[last]),
        spend,
        tuple(path),
        design_budget if p.privacy == "zcdp" else None,
    )
