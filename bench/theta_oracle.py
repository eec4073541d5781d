"""A floor under every interval for theta built on objective perturbation's estimate (docs/related-methods.md).

On the design of ``bench_theta_competitors.py`` (d = 5, census-like rows, known THETA), an oracle knows the
population Hessian H, so its interval is exact: theta~ - theta = H^-1 (G / sqrt(n) + beta / n) with
G ~ N(0, H) (a well-specified model: Sigma = H) and beta Algorithm 1's noise at epsilon' = epsilon1 / 2
(spherical Laplace, ||beta|| ~ Gamma(d, 2 / epsilon'): the share `chadha` keeps). Its 95% width per
coefficient is the 2.5% to 97.5% range of that offset, found from DRAWS draws. A private method pays more:
it must also estimate the width, privately, from the data. The ridge's bias is left out (it only adds).
Share 1 is also the law of the competitor's estimate at its true privacy ("theirs (composed)": their
epsilon_param = epsilon / 2 and gradient bound sqrt 2 give the same noise), so an interval of theirs
narrower than the share-1 width cannot cover at its level.

    python bench/theta_oracle.py            # every cell, shares 1 and 1/2 of epsilon on the estimate
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_theta_competitors import THETA, dataset  # the comparison's own design

POPULATION_ROWS = 400_000  # the population Hessian from this many rows (its smallest eigenvalue to ~1%)
DRAWS = 200_000  # Monte Carlo draws per cell: a 2.5% quantile to about 1% of the width


def population_hessian(rng) -> np.ndarray:
    """H of the unit-ball rows (x, 1) / sqrt 2 at the coefficients sqrt 2 THETA (dpci's scaling)."""
    Z, _ = dataset(POPULATION_ROWS, rng)
    A = Z / np.sqrt(2.0)
    p = 1.0 / (1.0 + np.exp(-A @ (np.sqrt(2.0) * THETA)))
    return (A * (p * (1.0 - p))[:, None]).T @ A / len(A)


def oracle_widths(h_inv, n: int, eps1: float, rng) -> np.ndarray:
    """Each coefficient's exact 95% width (units of x, as the comparison reports them)."""
    d = len(h_inv)
    eps_prime = eps1 / 2.0
    radius = rng.gamma(d, 2.0 / eps_prime, DRAWS)
    directions = rng.standard_normal((DRAWS, d))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    privacy = (radius[:, None] * directions) @ h_inv.T / n
    sampling = rng.standard_normal((DRAWS, d)) @ np.linalg.cholesky(h_inv / n).T
    lo, hi = np.quantile((privacy + sampling) / np.sqrt(2.0), [0.025, 0.975], axis=0)
    return hi - lo


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="*", default=[1_000, 4_000, 8_000])
    p.add_argument("--eps", type=float, nargs="*", default=[1.0, 5.0, 8.0])
    p.add_argument("--shares", type=float, nargs="*", default=[1.0, 0.5], help="shares of epsilon on the estimate")
    args = p.parse_args(argv)
    rng = np.random.default_rng(2024)
    hessian = population_hessian(rng)
    h_inv = np.linalg.inv(hessian)
    eigenvalues = ", ".join(f"{v:.2e}" for v in np.linalg.eigvalsh(hessian))
    print(f"population Hessian eigenvalues: {eigenvalues}")
    print(f"{'n':>6}{'eps':>5}{'share':>7}  {'median width':>12}  widths per coefficient")
    for n in args.n:
        for eps in args.eps:
            for share in args.shares:
                w = oracle_widths(h_inv, n, share * eps, rng)
                print(f"{n:6d}{eps:5g}{share:7.2f}  {np.median(w):12.2f}  {np.array2string(w, precision=2)}")


if __name__ == "__main__":
    main()
