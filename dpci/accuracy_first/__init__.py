"""Accuracy first: the smallest budget whose private interval is as narrow as asked, paying only
for the last step reached (Ligett et al., *Accuracy First*; Whitehouse et al. 2022, *Brownian
Noise Reduction*). See docs/accuracy-first.md for the privacy argument and the simulations.

:func:`accuracy_first` walks a budget grid upward with *noise reduction* of every additively
noised quantity of output perturbation's interval (Algorithm 5 of WKL): the coefficients
(Algorithm 4) and the noise matrices of the Hessian and the covariance (Algorithm 2). It stops at
the first budget whose interval meets the target; the check reads only released quantities, so it
is post-processing, and the outcome's ex-post privacy loss is that of the last step reached.

* Pure DP: Laplace noise reduction, one independent coin per coordinate. WKL's spherical noise
  (Eq. 3.2) has no noise reduction, so these searches replace it by per-coordinate Laplace noise
  calibrated to the L1 sensitivity, sqrt(#entries) times WKL's L2 sensitivity.
* zCDP: Brownian noise reduction (the Gaussian mechanism's noise read off one Brownian path).

Output perturbation only: objective perturbation (Algorithm 1) adds its noise beta to the
*objective*, and theta~ is the minimiser of J_n(theta) + beta.theta/n, whose map from beta to
theta~ depends on the data. Noise reduction needs released values of the form f(D) + N_t with one
fixed f: then the earlier, noisier releases are a data-free randomisation of the last one. For
objective perturbation, theta~_{t-1} is not a function of theta~_t and fresh noise alone (it needs
the data's objective again), so the prefix is not shown to cost only the last step's epsilon, and
its guarantee (Theorem 1) also rests on the Jacobian of that data-dependent map.

Baselines with the same API: ``strategy="doubling"`` (fresh releases at b, 2b, 4b, ..., paying
the sum) and ``strategy="fixed"`` (one release at the budget a public stand-in predicts).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace

from ..accounting import PrivacySpend
from ..ledger.hooks import admit_release
from ..noise import check_random_state
from .baselines import doubling, ex_ante_spend, fixed, predicted_budget, predicted_widths
from .noise_reduction import (
    CoordinateLaplaceLaw,
    brownian_expost_epsilon,
    brownian_path,
    budget_grid,
    laplace_path,
)
from .search import (
    STRATEGIES,
    PathStep,
    SearchResult,
    check_search,
    make_problem,
    noise_reduction,
    searchable_methods,
)


def accuracy_first(
    X,
    y,
    spec,
    target: float = 0.1,
    coefficients=None,
    grid=None,
    random_state=None,
    *,
    strategy: str = "noise_reduction",
    design_budget: float | None = None,
    callback: Callable[[PathStep], None] | None = None,
) -> SearchResult:
    """The smallest grid budget whose private (1 - alpha) interval is no wider than ``target``.

    Parameters
    ----------
    X, y : array-like
        Rows with ||x_i|| <= 1 and labels -1/+1 (as :func:`dpci.private_confidence_intervals`).
    spec : ReleaseSpec
        The release searched for (:class:`dpci.ReleaseSpec`): its method (only "output", output
        perturbation, has noise reduction), notion (budgets are in epsilon or rho), budget (the most the
        search may spend: grid steps above it are dropped), split (of each step's budget), loss, c, alpha
        and m (Monte Carlo draws of Algorithm 5, pure DP). Its seed is used when ``random_state`` is None.
    target : float
        The largest interval width allowed for every chosen coefficient.
    coefficients : sequence of int or None
        Indices of the coefficients the target is for (None: all).
    grid : sequence of float or None
        Increasing budgets to walk (default :func:`budget_grid`: 20 geometric steps from
        the spec's budget/1000 to it).
    random_state : None, int or numpy.random.Generator
        The only source of randomness (None: the spec's seed; None there too for a real release).
    strategy : {"noise_reduction", "doubling", "fixed"}
        Noise reduction (the default) or one of the baselines.
    design_budget : float or None
        zCDP noise reduction only: the rho at which the ex-post bound is tightest
        (default: the budget a public stand-in predicts for the target, as the fixed baseline uses;
        it reads no data).
    callback : callable or None
        Called with every checked :class:`PathStep` (e.g. to draw the path as it grows).

    Returns
    -------
    SearchResult
        The release, whether the target was met, the ledger of what was spent (``spend``;
        ``approx_dp(delta)``), what it was charged before it ran (``charged``: the most it could
        spend, admitted by the active ledger) and the whole path.

    Raises
    ------
    ValueError
        A setting out of range (a target that is not positive, a method without noise reduction).
    dpci.BudgetExceeded
        The active ledger cannot pay the most the search can spend; nothing was drawn.

    Examples
    --------
    >>> from dpci import ReleaseSpec
    >>> from dpci.accuracy_first import accuracy_first
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(20_000, [1.0, -0.5], random_state=0)
    >>> spec = ReleaseSpec("output", budget=2.0, n_samples=2_000, seed=0)  # a public seed: teaching only
    >>> result = accuracy_first(X, y, spec, target=0.5)
    >>> bool(result.met), result.budget <= 2.0
    (True, True)
    """
    problem, A = make_problem(X, y, spec)
    target, coefs, grid = check_search(target, coefficients, problem.d, spec.budget, grid, spec.method, strategy)
    charged = ex_ante_spend(problem, strategy, target, coefs, grid)
    random_state = spec.seed if random_state is None else random_state
    record = dict(
        function="accuracy_first",
        strategy=strategy,
        loss=repr(problem.loss),
        privacy=problem.privacy,
        max_budget=float(grid[-1]),
        target=target,
        coefficients=list(coefs),
        split=list(problem.split),
        c=problem.c,
        alpha=problem.alpha,
    )
    # admitted at the most it can spend, before any noise is drawn (docs/privacy-ledger.md)
    admit_release(
        A, charged, record, random_state, f"accuracy-first search ({strategy.replace('_', ' ')}), at most {grid[-1]:g}"
    )
    rng = check_random_state(random_state)
    if strategy == "doubling":
        result = doubling(problem, A, target, coefs, grid, rng, callback)
    elif strategy == "fixed":
        result = fixed(problem, A, target, coefs, grid, rng, callback)
    else:
        if problem.privacy == "zcdp" and design_budget is None:
            design_budget = predicted_budget(problem, grid, coefs, target)[0]  # public: the stand-in only
        result = noise_reduction(problem, A, target, coefs, grid, rng, design_budget, callback)
    return replace(result, charged=charged)


def search_charge(*args, **kwargs) -> PrivacySpend:
    """What :func:`accuracy_first` with the same arguments would be charged before it runs (the most it
    can spend, :func:`~dpci.accuracy_first.baselines.ex_ante_spend`). Reads only public facts of the data
    (n, d) after the same checks; draws nothing and charges nothing."""
    a = inspect.signature(accuracy_first).bind(*args, **kwargs)
    a.apply_defaults()
    v = a.arguments
    spec = v["spec"]
    problem, _ = make_problem(v["X"], v["y"], spec)
    target, coefs, grid = check_search(
        v["target"], v["coefficients"], problem.d, spec.budget, v["grid"], spec.method, v["strategy"]
    )
    return ex_ante_spend(problem, v["strategy"], target, coefs, grid)


search_charge.__signature__ = inspect.signature(accuracy_first).replace(  # type: ignore[attr-defined]
    return_annotation="PrivacySpend"
)


__all__ = [
    "STRATEGIES",
    "CoordinateLaplaceLaw",
    "PathStep",
    "SearchResult",
    "accuracy_first",
    "brownian_expost_epsilon",
    "brownian_path",
    "budget_grid",
    "laplace_path",
    "predicted_budget",
    "predicted_widths",
    "search_charge",
    "searchable_methods",
]
