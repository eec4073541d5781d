"""The two baselines of an accuracy-first search, with the same mechanisms as noise reduction
(per-coordinate Laplace under pure DP, Gaussian under zCDP) so that only the search differs.

* doubling (Ligett et al., Appendix B, DOUBLINGMETHOD): fresh, independent releases at b, 2b, 4b,
  ... (b the first grid step that can meet the target), each a complete Algorithm 5 release
  (coefficients, then the matrices at its own theta~), stopping at the first that meets the
  target; it pays the sum of every release made (basic composition, Proposition 4).
* fixed: one release at a budget chosen before looking at the data, the smallest grid step whose
  interval *predicted* on a public stand-in with the same n and d (:mod:`dpci.data.standin`)
  meets the target (the "theory" approach of Ligett et al., with a simulated theory).
"""

from __future__ import annotations

import math

import numpy as np

from ..accounting import PrivacySpend, StepSpend
from ..data.standin import PublicFacts, stand_in
from ..intervals import hessian_and_covariance
from ..solver import margin_rows, minimise_erm
from .noise_reduction import quantity_scale, unit_path
from .search import (
    IntervalMaker,
    PathStep,
    Problem,
    SearchResult,
    interval_widths,
    private_matrix,
    step_release,
)


def one_shot(problem: Problem, A, theta_hat, budget, maker, rng):
    """One fresh Algorithm 5 release at ``budget``: theta~ = theta^ + noise, then Algorithm 2's
    matrices at theta~ (reads the data), then the interval."""
    p, d = problem, problem.d
    noise = unit_path(p.privacy, [budget], d + 2 * d * d, rng)[0]  # one-shot: Lap(1/b) or N(0, 1/(2b))
    theta = theta_hat + p.coef_unit_scale() * noise[:d]
    hess, cov = hessian_and_covariance(A, p.loss, theta, p.c)
    # Algorithm 2 with the sensitivities of Lemmas 2-5, in L1 for the Laplace mechanism (quantity_scale)
    h_unit = quantity_scale(p.privacy, p.loss.hessian_sensitivity(p.n), p.split[1], d * d)
    s_unit = quantity_scale(p.privacy, p.loss.covariance_sensitivity(p.n, theta), p.split[2], d * d)
    hessian = private_matrix(hess, h_unit * noise[d : d + d * d], p.c)
    covariance = private_matrix(cov, s_unit * noise[d + d * d :], p.c)
    return step_release(p, maker, theta, hessian, covariance, budget, p.coef_scale(budget))


def summed_spend(spends) -> PrivacySpend:
    """Basic composition of releases, step by step (Proposition 4: epsilons add, rhos add)."""
    spends = list(spends)
    steps = []
    for parts in zip(*(s.steps for s in spends)):
        eps = None if any(s.epsilon is None for s in parts) else math.fsum(s.epsilon or 0.0 for s in parts)
        steps.append(StepSpend(parts[0].step, parts[0].share, eps, math.fsum(s.rho for s in parts)))
    return PrivacySpend(spends[0].privacy, spends[0].mechanism, tuple(steps))


def first_possible(problem: Problem, grid, target) -> int:
    """The first grid step whose coefficient noise alone leaves room for the target (public)."""
    fits = np.flatnonzero([problem.bound(b) <= target for b in grid])
    return int(fits[0]) if fits.size else len(grid) - 1


def doubling(problem: Problem, A, target, coefs, grid, rng, callback=None) -> SearchResult:
    p = problem
    theta_hat = minimise_erm(A, p.loss, p.c).theta
    start = float(grid[first_possible(p, grid, target)])
    budgets = [start * 2.0**k for k in range(64) if start * 2.0**k <= grid[-1] * (1 + 1e-12)]
    maker = IntervalMaker(p, rng)
    path, spends, met = [], [], False
    for budget in budgets:
        release = one_shot(p, A, theta_hat, budget, maker, rng)
        spends.append(release.allocation.spend)
        widths = interval_widths(release, coefs)
        path.append(PathStep(budget, True, widths, p.bound(budget)))
        if callback is not None:
            callback(path[-1])
        if np.all(widths <= target):
            met = True
            break
    return SearchResult(
        "doubling",
        p.privacy,
        target,
        coefs,
        release,
        met,
        budget,
        summed_spend(spends),
        tuple(path),
        releases=len(spends),
    )


def ex_ante_spend(problem: Problem, strategy: str, target, coefs, grid, standin_seed=0) -> PrivacySpend:
    """The most a search can spend, known before it starts (it reads public facts only): what the
    ledger admits before the search draws any noise.

    * noise reduction: the release at the last grid step. Every earlier step of the path is a
      post-processing of it (Koufogiannis et al. 2015 for Laplace; the Brownian construction of
      Whitehouse et al. 2022 for Gaussian noise), so the whole path is as private as that one release;
    * doubling: the sum of every release it may make (basic composition, Proposition 4);
    * fixed: its one release at the budget predicted on the public stand-in.
    """
    p = problem
    if strategy == "noise_reduction":
        return p.allocation(float(grid[-1])).spend
    if strategy == "doubling":
        start = float(grid[first_possible(p, grid, target)])
        budgets = [start * 2.0**k for k in range(64) if start * 2.0**k <= grid[-1] * (1 + 1e-12)]
        return summed_spend(p.allocation(b).spend for b in budgets)
    return p.allocation(predicted_budget(p, grid, coefs, target, standin_seed)[0]).spend


def predicted_widths(problem: Problem, grid, coefs, random_state=0) -> np.ndarray:
    """(K, len(coefs)) interval widths predicted at every grid budget on a public stand-in with the
    problem's n and d (its last column the constant): its exact Hessian and covariance (no matrix
    noise) and the coefficient noise of each budget. Reads no data."""
    p = problem
    facts = PublicFacts(p.n, tuple(f"x{j}" for j in range(max(p.d - 1, 1))), "public stand-in")
    X, y, _ = stand_in(facts, d=max(p.d - 1, 1), random_state=random_state)
    A = margin_rows(X[:, -p.d :], y)
    theta = minimise_erm(A, p.loss, p.c).theta
    hess, cov = hessian_and_covariance(A, p.loss, theta, p.c)
    maker = IntervalMaker(p, np.random.default_rng(random_state))
    out = []
    for b in grid:
        conf, _, _ = maker(theta, hess, cov, b, p.coef_scale(float(b)))
        out.append(conf[list(coefs), 1] - conf[list(coefs), 0])
    return np.array(out)


def predicted_budget(problem: Problem, grid, coefs, target, standin_seed=0) -> tuple[float, np.ndarray]:
    """The smallest grid budget whose width predicted on the public stand-in meets the target (the
    last if none), and the predicted widths (largest over ``coefs``) at every grid budget."""
    predicted = predicted_widths(problem, grid, coefs, standin_seed).max(axis=1)
    ok = np.flatnonzero(predicted <= target)
    return float(grid[int(ok[0]) if ok.size else len(grid) - 1]), predicted


def fixed(problem: Problem, A, target, coefs, grid, rng, callback=None, standin_seed=0) -> SearchResult:
    p = problem
    budget, predicted = predicted_budget(p, grid, coefs, target, standin_seed)
    theta_hat = minimise_erm(A, p.loss, p.c).theta
    release = one_shot(p, A, theta_hat, budget, IntervalMaker(p, rng), rng)
    widths = interval_widths(release, coefs)
    step = PathStep(budget, True, widths, p.bound(budget))
    if callback is not None:
        callback(step)
    return SearchResult(
        "fixed",
        p.privacy,
        target,
        coefs,
        release,
        bool(np.all(widths <= target)),
        budget,
        release.allocation.spend,
        (step,),
        extra={"predicted": predicted},
    )


__all__ = ["doubling", "ex_ante_spend", "fixed", "one_shot", "predicted_budget", "predicted_widths", "summed_spend"]
