"""The curves of Section 7.7: how the mean interval length falls with n and with the budget."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CurveFit:
    """A fitted curve: coefficients, and how well it fits (R^2 on the lengths)."""

    formula: str
    coefficients: dict
    r2: float
    predict: Callable


def _r2(y, fitted):
    y = np.asarray(y, dtype=float)
    return 1.0 - np.sum((y - fitted) ** 2) / np.sum((y - y.mean()) ** 2)


def fit_length_vs_n(n, length) -> dict[str, CurveFit]:
    """Section 7.7: length ~ c0/n + c1/sqrt(n), against the privacy-free length ~ c/sqrt(n)."""
    n, length = np.asarray(n, dtype=float), np.asarray(length, dtype=float)
    design = np.column_stack([1 / n, 1 / np.sqrt(n)])
    (c0, c1), *_ = np.linalg.lstsq(design, length, rcond=None)
    (c,), *_ = np.linalg.lstsq(design[:, 1:], length, rcond=None)
    two = CurveFit(
        "c0/n + c1/sqrt(n)",
        dict(c0=c0, c1=c1),
        _r2(length, design @ [c0, c1]),
        lambda m: c0 / np.asarray(m, float) + c1 / np.sqrt(m),
    )
    one = CurveFit("c/sqrt(n)", dict(c=c), _r2(length, c / np.sqrt(n)), lambda m: c / np.sqrt(m))
    return {"privacy": two, "sampling only": one}


def fit_length_vs_budget(budget, length, privacy: str) -> CurveFit:
    """Section 7.7: length ~ sqrt(c0/epsilon^2 + c1) (pure DP) or sqrt(c0/rho + c1) (zCDP)."""
    from scipy.optimize import curve_fit

    budget, length = np.asarray(budget, dtype=float), np.asarray(length, dtype=float)
    power = 2.0 if privacy == "pure" else 1.0

    def model(b, c0, c1):
        return np.sqrt(c0 / b**power + c1)

    (c0, c1), _ = curve_fit(model, budget, length, p0=(1.0, 0.01), bounds=(0, np.inf))
    name = "sqrt(c0/epsilon^2 + c1)" if privacy == "pure" else "sqrt(c0/rho + c1)"
    return CurveFit(
        name, dict(c0=c0, c1=c1), _r2(length, model(budget, c0, c1)), lambda b: model(np.asarray(b, float), c0, c1)
    )
