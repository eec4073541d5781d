"""Intervals for the unregularised theta side by side on known-truth census-like data (docs/related-methods.md).

d = 5: four census-like features (age, schooling, weekly hours, sex: the columns Chadha et al.'s Adult script
uses), each scaled to [0, 1] by a public range and halved, so ||x|| <= 1, and a constant 1. Labels follow a
logistic model with the known THETA. Every method's 95% interval is checked against THETA and its width reported
in these units (x, 1). Methods, each on the same data sets and seeds:

* ``theirs (script)``: Chadha et al.'s method as their Adult script runs it: estimate theta^ + Gamma(d) 2 /
  (n eps_param) H^-1 u with the Hessian H computed without noise and norm bound 1 (the constant column left
  out of it); widths by their bag of little bootstraps and above-threshold search, the whole eps_cdf spent on
  every coefficient and the threshold's noise redrawn at every query (``mod_inv_sens``). Claimed: eps.
* ``theirs (composed)``: the same algorithm with eps_cdf / d per coefficient and the gradient bound sqrt 2
  (the constant's norm): basic composition over the coefficients. Its Hessian is still not private.
* ``chadha``: dpci's registered method (dpci/methods/chadha.py), every release charged: eps in total; its
  private widths aim a margin of ranks above the subsets' median (``target_rank``).
* ``objective`` / ``output``: the paper's methods at dpci.recommend_c's c for theta, their theta_0(c) interval
  widened by the proven bias bound (public bound B = THETA_BOUND on ||theta|| in dpci's scaling).

dpci's methods fit rows (x, 1) / sqrt 2 (the unit ball with the constant): their coefficients are sqrt 2 theta,
converted back. Their replicates per subset are cut to REPLICATES (their script: about n^0.5 b / log n).

    python bench/bench_theta_competitors.py --quick               # n = 1,000 and 4,000, eps = 8, 20 reps
    python bench/bench_theta_competitors.py --reps 200 --log /tmp/theta.log --out /tmp/theta.csv
    python bench/bench_theta_competitors.py --methods "objective, θ default" --theta-split 0.3 0.6 0.1 --theta-c 1e-5
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cell_table import run_cells
from dpci import LogisticLoss, ReleaseSpec, methods
from dpci.exceptions import ReferenceWarning
from dpci.methods.chadha import ChadhaBootstrap
from dpci.recommend import estimand_bias, recommend_c, theta_interval
from dpci.theta import theta_release

THETA = np.array([1.5, 3.0, 2.0, -0.8, -2.5])  # age, schooling, hours, sex, constant (units of x)
THETA_BOUND = 10.0  # B >= ||sqrt(2) THETA|| = 6.6, stated as public
ALPHA = 0.05
REPLICATES = 100
RIDGE = 1e-6  # their Newton's delta on the Hessian
LOSS = LogisticLoss()


def census_like(n: int, rng) -> np.ndarray:
    """(n, 4) features in [0, 1/2] each: age 17-95 (skewed), schooling 1-24 (peaked at 16-21), hours 1-99
    (peaked at 40), sex 0/1; scaled by their public ranges and halved, so ||x|| <= 1."""
    age = np.clip(17 + rng.gamma(3.0, 8.0, n), 17, 95)
    school = np.clip(np.round(rng.normal(18.5, 3.0, n)), 1, 24)
    hours = np.clip(np.round(rng.normal(40.0, 12.0, n)), 1, 99)
    sex = rng.integers(0, 2, n).astype(float)
    scaled = np.column_stack([(age - 17) / 78, (school - 1) / 23, (hours - 1) / 98, sex])
    return scaled / 2.0


def dataset(n: int, rng):
    """(Z, y): Z = (x, 1) with labels +-1 from the logistic model at THETA."""
    Z = np.column_stack([census_like(n, rng), np.ones(n)])
    y = np.where(rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-Z @ THETA)), 1.0, -1.0)
    return Z, y


# --- their method, as their script runs it -------------------------------------------------------------
def _hessians(A, theta, weights, n):
    """Each replicate's Hessian (1/n) sum w f''(a'theta) a a' (B, d, d)."""
    z = theta @ A.T
    p = 1.0 / (1.0 + np.exp(-z))
    return np.einsum("bi,ij,ik->bjk", weights * p * (1 - p), A, A) / n


def newton_batch(A, weights, ridge=RIDGE, iters=50, tol=1e-6):
    """Their logreg_est_intercept (Newton's method, a 1e-6 ridge on the step's Hessian; at most 50 steps, theirs 100), for
    every row of ``weights`` at once: the minimiser of (1/n) sum w log(1 + exp(-a'theta)), n = sum w."""
    B, d = len(weights), A.shape[1]
    n = weights.sum(axis=1, keepdims=True)
    theta = np.zeros((B, d))
    for _ in range(iters):
        z = theta @ A.T
        p = 1.0 / (1.0 + np.exp(-z))
        grad = -((weights * (1 - p)) @ A) / n
        H = np.einsum("bi,ij,ik->bjk", weights * p * (1 - p) / n, A, A) + ridge * np.eye(d)
        step = np.linalg.solve(H, grad[..., None])[..., 0]
        theta -= step
        if np.linalg.norm(step, axis=1).max() < tol:
            break
    return theta


def their_estimates(A, weights, eps, norm_bound, rng):
    """priv_intercept_logreg_inv_sens_est on replicates (rows with multiplicities ``weights``, total n each):
    the fit plus Gamma(d) 2 norm_bound / (n eps) H^-1 u, H without noise."""
    n = weights[0].sum()
    d = A.shape[1]
    fits = newton_batch(A, weights)
    H = _hessians(A, fits, weights, n) + 1e-7 * np.eye(d)  # their inv(hess + 1e-7 I)
    u = rng.standard_normal((len(weights), d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    radius = rng.gamma(d, 1.0, len(weights))[:, None]
    return fits + radius * 2 * norm_bound / (n * eps) * np.linalg.solve(H, u[..., None])[..., 0]


def their_widths(A, eps_param, eps_cdf, norm_bound, rng):
    """fast_abthresh_blb_sens_alldim with set_type "symm": half-widths per coefficient (units of theta)."""
    n, d = A.shape
    s = min(math.ceil(10 * math.log(n) / eps_cdf), n // (2 * d))  # at least 2 d rows a subset (ours)
    chunks = np.array_split(rng.permutation(n), s)
    stats = []
    for rows in chunks:
        Ai = A[rows]
        centre = newton_batch(Ai, np.ones((1, len(rows))))[0]
        w = rng.multinomial(n, np.full(len(rows), 1.0 / len(rows)), size=REPLICATES).astype(float)
        stats.append(np.abs(their_estimates(Ai, w, eps_param, norm_bound, rng) - centre))
    stats = np.array(stats)  # (s, R, d)
    half = np.empty(d)
    for j in range(d):
        grid = np.arange(1, 1 + int(150 * math.sqrt(n) / 10)) * 10 / n  # their 5 * 2 / sqrt(n) step, /sqrt(n)
        cover = np.sort((stats[:, :, j][:, :, None] <= grid).mean(axis=1), axis=0)  # (s, grid)
        half[j] = grid[-1]
        for g in range(len(grid)):  # above threshold, the threshold's noise redrawn each query (their code)
            idx = int(s / 2 + rng.laplace(0, 2 / eps_cdf) + rng.laplace(0, 4 / eps_cdf))
            value = 0.0 if idx < 1 else 1.0 if idx > s else cover[idx - 1, g]
            if value > 1 - ALPHA:
                half[j] = grid[g]
                break
    return half


def theirs(Z, y, eps, composed, rng):
    A = Z * y[:, None]
    n, d = A.shape
    eps_param, eps_cdf = eps / 2, eps / 2
    norm_bound = math.sqrt(2.0) if composed else 1.0
    if composed:
        eps_cdf /= d
    theta = their_estimates(A, np.ones((1, n)), eps_param, norm_bound, rng)[0]
    half = their_widths(A, eps_param, eps_cdf, norm_bound, rng)
    return np.column_stack([theta - half, theta + half])


# --- dpci -----------------------------------------------------------------------------------------------
def dpci_interval(kind, Z, y, eps, c, rng, split=None):
    X = Z / math.sqrt(2.0)
    method = kind.removesuffix(THETA_SUFFIX)
    split = split if kind.endswith(THETA_SUFFIX) else None  # --theta-split: the theta kinds' split only
    spec = ReleaseSpec(method, "pure", eps, split, c=c if c is not None else 1e-3, alpha=ALPHA, n_samples=2_000)
    release = spec.release(X, y, random_state=rng)
    if kind.endswith(THETA_SUFFIX):  # the default: the interval for theta from the release alone
        bounds = theta_release(release, LOSS, rng).conf_int
    elif method == "chadha":
        bounds = release.conf_int
    else:
        bias = estimand_bias(methods.get(method), "unregularised", release, LOSS, THETA_BOUND, ALPHA)
        bounds = theta_interval(release, bias, ALPHA)
    return bounds / math.sqrt(2.0)


def cell(n, eps, reps, seed, kinds, log, theta_split=None, theta_c=None):
    cs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReferenceWarning)  # the default reference, as a user's first call
        for m in ("objective", "output"):
            if m in kinds:
                rec = recommend_c(
                    n, 5, method=m, privacy="pure", budget=eps, estimand="unregularised", theta_bound=THETA_BOUND
                )
                cs[m] = rec.c
            if m + THETA_SUFFIX in kinds:
                cs[m + THETA_SUFFIX] = theta_c or recommend_c(n, 5, method=m, privacy="pure", budget=eps).c
    hits = {k: [] for k in kinds}
    widths = {k: [] for k in kinds}
    seconds = dict.fromkeys(kinds, 0.0)
    for r in range(reps):
        Z, y = dataset(n, np.random.default_rng([seed, n, r]))
        for k in kinds:
            rng = np.random.default_rng([seed, n, r, zlib.crc32(k.encode()) % 1000])  # str hash() is salted
            start = time.process_time()
            if k.startswith("theirs"):
                bounds = theirs(Z, y, eps, k == "theirs (composed)", rng)
            else:
                bounds = dpci_interval(k, Z, y, eps, cs.get(k), rng, theta_split)
            seconds[k] += time.process_time() - start
            hits[k].append((bounds[:, 0] <= THETA) & (bounds[:, 1] >= THETA))
            widths[k].append(bounds[:, 1] - bounds[:, 0])
        if log and (r + 1) % 10 == 0:
            print(f"n={n} eps={eps}: {r + 1}/{reps}", file=log, flush=True)
    rows = []
    for k in kinds:
        h = np.array(hits[k])
        rows.append(
            dict(
                n=n,
                epsilon=eps,
                method=k,
                c=cs.get(k),
                coverage=h.mean(),
                worst=h.mean(axis=0).min(),
                median_width=float(np.median(np.array(widths[k]))),
                cpu_s=seconds[k] / reps,
            )
        )
    return rows


THETA_SUFFIX = ", θ default"  # dpci's default interval for theta (dpci.theta) at recommend_c's c for it
KINDS = (
    "theirs (script)",
    "theirs (composed)",
    "chadha",
    "objective",
    "output",
    "objective" + THETA_SUFFIX,
    "output" + THETA_SUFFIX,
)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="n = 1,000 and 4,000 at eps = 8, 20 repetitions")
    p.add_argument("--reps", type=int, default=200, help="repetitions per cell (200: coverage SE about 0.015)")
    p.add_argument("--n", type=int, nargs="*", default=[1_000, 4_000, 8_000])
    p.add_argument("--eps", type=float, nargs="*", default=[1.0, 5.0, 8.0])
    p.add_argument("--methods", nargs="*", default=list(KINDS), choices=KINDS)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--log", type=Path, help="progress lines go here (default: stderr)")
    p.add_argument("--out", type=Path, help="write the table as CSV")
    p.add_argument("--theta-split", type=float, nargs=3, help="the θ default kinds' split (default: the method's)")
    p.add_argument("--theta-c", type=float, help="the θ default kinds' c (default: recommend_c's for θ)")
    a = p.parse_args(argv)
    methods.register(ChadhaBootstrap(), replace=True)  # opt-in: not registered by default
    if a.quick:
        a.n, a.eps, a.reps = [1_000, 4_000], [8.0], 20
    cells = [(n, eps) for n in a.n for eps in a.eps]
    run_cells(
        cells,
        lambda log, n, eps: cell(n, eps, a.reps, a.seed, a.methods, log, a.theta_split, a.theta_c),
        a.log,
        a.out,
        len(a.methods),
    )


if __name__ == "__main__":
    main()
