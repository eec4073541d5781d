"""Section 7.7: curve fits of the interval length against n and the budget (Figures 17-19) -- the
computation and its checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from ...presentation.figures import curve_fit_plot, method_label
from ..curves import fit_length_vs_budget, fit_length_vs_n
from .context import Check, Context, ExperimentResult, adult, short
from .grids import grid_cells
from .settings import Settings


def compute_curve_fits(ctx: Context):
    """Section 7.7, Figures 17-19 (Adult, d = 5): length ~ c0/n + c1/sqrt(n) against c/sqrt(n);
    length ~ sqrt(c0/epsilon^2 + c1) (pure) or sqrt(c0/rho + c1) (zCDP) at n = 10,000."""
    s = ctx.s
    frames = [grid_cells(ctx, adult, s.fit_ns, "d", (s.fit_d,), "7.7 adult", "adult", seed_offset=7).assign(study="n")]
    if s.fit_eps:
        g = grid_cells(
            ctx, adult, (s.fit_n,), "epsilon", s.fit_eps, "7.7 adult", "adult", d_fixed=s.fit_d, seed_offset=7
        )
        frames.append(g.assign(study="epsilon"))
    return pd.concat(frames, ignore_index=True), {}, []


def _r2(y, fitted):
    y = np.asarray(y, dtype=float)
    return float(1.0 - np.sum((y - fitted) ** 2) / np.sum((y - y.mean()) ** 2))


def _fit_row(study: str, mechanism: str, privacy: str, fit, **more) -> dict:
    """One row of the fits table: the study, the method, the fitted formula, its R^2 and coefficients."""
    coefficients = {k: float(v) for k, v in fit.coefficients.items()}
    return dict(
        study=study, mechanism=mechanism, privacy=privacy, formula=fit.formula, r2=fit.r2, **coefficients, **more
    )


def report_curve_fits(result: ExperimentResult, s: Settings):
    frame = result.frame
    fit_rows = []
    for (mechanism, privacy), g in frame[frame["study"] == "n"].groupby(["mechanism", "privacy"], sort=False):
        g = g.dropna(subset=["length"]).sort_values("n")
        fits = fit_length_vs_n(g["n"], g["length"])
        two, one = fits["privacy"], fits["sampling only"]
        # beside the paper's two terms (fitted with c0, c1 >= 0), the law of independent noises,
        # length ~ sqrt(a/n^2 + b/n)
        n_, L_ = g["n"].to_numpy(float), g["length"].to_numpy(float)
        (q0, q1), _ = nnls(np.column_stack([1 / n_**2, 1 / n_]), L_**2)
        fit_rows.append(
            _fit_row(
                "n",
                mechanism,
                privacy,
                two,
                r2_sqrt_only=one.r2,
                c_sqrt_only=float(one.coefficients["c"]),
                a_quadrature=q0,
                b_quadrature=q1,
                r2_quadrature=_r2(L_, np.sqrt(q0 / n_**2 + q1 / n_)),
            )
        )
        result.figures[f"7.7-n-{mechanism}-{privacy}"] = curve_fit_plot(
            g["n"],
            g["length"],
            fits,
            x_title="n",
            title=f"Figures 17-18: mean length vs n, {method_label(mechanism, privacy)}; Adult, d = {s.fit_d}, "
            f"epsilon = 1 (rho = 0.5), k = {s.k:,}",
        )
        result.checks.append(
            Check(
                "7.7",
                f"c0/n + c1/sqrt(n) fits better than c/sqrt(n) ({short(mechanism, privacy)})",
                bool(two.r2 > one.r2 and two.r2 >= 0.98),
                f"R^2 {two.r2:.4f} (c0 = {two.coefficients['c0']:.4g}, c1 = {two.coefficients['c1']:.4g}) vs {one.r2:.4f}",
            )
        )
    for (mechanism, privacy), g in frame[frame["study"] == "epsilon"].groupby(["mechanism", "privacy"], sort=False):
        g = g.dropna(subset=["length"]).sort_values("epsilon")
        fit = fit_length_vs_budget(g["budget"], g["length"], privacy)
        fit_rows.append(_fit_row("budget", mechanism, privacy, fit))
        result.figures[f"7.7-budget-{mechanism}-{privacy}"] = curve_fit_plot(
            g["budget"],
            g["length"],
            {"budget": fit},
            x_title="epsilon" if privacy == "pure" else "rho",
            title=f"Figure 19: mean length vs budget, {method_label(mechanism, privacy)}; Adult, n = {s.fit_n:,}, "
            f"d = {s.fit_d}, k = {s.k:,}",
        )
        result.checks.append(
            Check(
                "7.7",
                f"{fit.formula} fits the length well ({short(mechanism, privacy)})",
                bool(fit.r2 >= 0.95),
                f"R^2 {fit.r2:.4f}, c0 = {fit.coefficients['c0']:.4g}, c1 = {fit.coefficients['c1']:.4g}",
                kind="paper",
            )
        )
    result.tables["fits"] = pd.DataFrame(fit_rows)
