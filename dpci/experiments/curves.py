"""The curves of Section 7.7: how the mean interval length falls with n and with the budget.

Every coefficient is fitted non-negative: the paper reads c0/n as the cost of privacy and c1/sqrt(n)
as the sampling term (and c0/epsilon^2, c1 as the privacy and data variances), so a negative one has
no reading, and an unconstrained c0/n + c1/sqrt(n) with c1 < 0 draws a negative length past the data
(-10 at n = 20,000 for objective perturbation under zCDP). With c0, c1 >= 0 every fitted
length is >= 0 at every n or budget."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls


@dataclass(frozen=True)
class CurveFit:
    """A fitted curve: coefficients (all >= 0), and how well it fits (R^2 on the lengths)."""

    formula: str
    coefficients: dict
    r2: float
    predict: Callable


def _r2(y, fitted) -> float:
    """1 - SS_res / SS_tot on the lengths themselves (also for a curve fitted on their squares)."""
    y = np.asarray(y, dtype=float)
    return float(1.0 - np.sum((y - fitted) ** 2) / np.sum((y - y.mean()) ** 2))


def _observed(x, length):
    """The pairs with a finite x > 0 and a finite length (a sweep leaves NaN where c was too small)."""
    x, length = np.asarray(x, dtype=float), np.asarray(length, dtype=float)
    keep = np.isfinite(x) & (x > 0) & np.isfinite(length)
    if keep.sum() < 2:
        raise ValueError(f"a curve fit needs at least two measured lengths, got {int(keep.sum())}.")
    return x[keep], length[keep]


def fit_length_vs_n(n, length) -> dict[str, CurveFit]:
    """Section 7.7 (Figures 17-18): length ~ c0/n + c1/sqrt(n), against the privacy-free length ~ c/sqrt(n),
    by least squares with every coefficient >= 0 (non-negative least squares)."""
    n, length = _observed(n, length)
    design = np.column_stack([1 / n, 1 / np.sqrt(n)])
    (c0, c1), _ = nnls(design, length)
    (c,), _ = nnls(design[:, 1:], length)
    two = CurveFit(
        "c0/n + c1/sqrt(n)",
        dict(c0=c0, c1=c1),
        _r2(length, design @ [c0, c1]),
        lambda m: c0 / np.asarray(m, float) + c1 / np.sqrt(m),
    )
    one = CurveFit("c/sqrt(n)", dict(c=c), _r2(length, c / np.sqrt(n)), lambda m: c / np.sqrt(m))
    return {"privacy": two, "sampling only": one}


def fit_length_vs_budget(budget, length, privacy: str) -> CurveFit:
    """Section 7.7 (Figure 19): length ~ sqrt(c0/epsilon^2 + c1) (pure DP) or sqrt(c0/rho + c1) (zCDP), c0, c1 >= 0.

    Started from the non-negative least-squares fit of the squared lengths (linear in c0, c1), so a
    refinement on the lengths that does not converge still leaves a valid fit."""
    from scipy.optimize import curve_fit

    budget, length = _observed(budget, length)
    power = 2.0 if privacy == "pure" else 1.0

    def model(b, c0, c1):
        return np.sqrt(c0 / np.asarray(b, float) ** power + c1)

    start, _ = nnls(np.column_stack([1 / budget**power, np.ones_like(budget)]), length**2)
    try:
        (c0, c1), _ = curve_fit(model, budget, length, p0=np.maximum(start, 1e-12), bounds=(0, np.inf))
    except (RuntimeError, ValueError):  # no convergence: keep the fit of the squares
        c0, c1 = start
    if np.sum((length - model(budget, c0, c1)) ** 2) > np.sum((length - model(budget, *start)) ** 2):
        c0, c1 = start
    # a term that adds under 1e-9 of the smallest squared length anywhere in the range is 0 (the bounded
    # refinement stops at 1e-21 rather than at its bound)
    tiny = 1e-9 * float(np.min(length)) ** 2
    c0 = 0.0 if c0 / float(np.min(budget)) ** power < tiny else float(c0)
    c1 = 0.0 if c1 < tiny else float(c1)
    name = "sqrt(c0/epsilon^2 + c1)" if privacy == "pure" else "sqrt(c0/rho + c1)"
    return CurveFit(name, dict(c0=c0, c1=c1), _r2(length, model(budget, c0, c1)), lambda b: model(b, c0, c1))
