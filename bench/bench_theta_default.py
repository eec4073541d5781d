"""Coverage of theta and mean width of dpci's default interval, beside the paper's theta_0(c) interval read
as one for theta and the non-private Wald interval, on Awan and Wang's design and a well-conditioned one.

    python bench/bench_theta_default.py --reps 500            # the table of docs/theta.md
    python bench/bench_theta_default.py --reps 100 --quick    # Awan and Wang's eps = 1 cells only
    python bench/bench_theta_default.py --reps 100 --design adult-x   # Adult's rows with a known truth

A release that says it has no interval for theta (its interval is the whole line, and so covers) is
counted in the coverage and left out of the mean width; the table says how many there were.

dpci's default is the call a user makes, nothing tuned: ``PrivateLogisticRegression(privacy="pure",
budget=eps, classes=(-1, 1)).fit(X, y).conf_int()``, whose interval is for theta (dpci.theta) at the c
recommended for it from the public n, d and eps (``c`` left at None; ``--paper-c`` gives c = 0.001). Coverage is
of the true unpenalised coefficients; widths are on beta's scale for Awan and Wang's design (the rows are
divided by sqrt(2), so an interval for theta is sqrt(2) times one for beta). Awan and Wang's own numbers
(repro samples, pure eps, their Table; the width is beta1's mean width) are printed beside, as published.
"""

from __future__ import annotations

import argparse
import functools
import math
import time
import warnings

import numpy as np

import dpci
from dpci.data import AWAN_WANG_BETA, make_awan_wang, make_synthetic_logistic
from dpci.exceptions import RegularisationTooSmall

#: Awan and Wang's repro-samples intervals for beta1 at pure eps = 1 (coverage 0.97-0.996 in every cell).
PUBLISHED_REPRO_WIDTH = {(1_000, 1.0): 0.969, (2_000, 1.0): 0.615}
SYNTHETIC_THETA = np.array([1.0, -0.5, 0.5])  # make_synthetic_logistic's last coefficient is the constant's


#: Designs of ordinary data, each divided by one public bound (sqrt of its width): (features, truth on the
#: undivided columns, the constant's coefficient last). The interval was not tuned on any of them.
def _correlated(n, rng):
    u = rng.multivariate_normal(np.zeros(4), 0.5 + 0.5 * np.eye(4), n) / 2.5
    return np.clip(u, -1.0, 1.0)


ORDINARY = {
    "correlated": (_correlated, np.array([3.0, -2.0, 1.0, 0.0, -1.0])),
    "rare events": (lambda n, rng: rng.uniform(-1, 1, (n, 3)), np.array([1.0, -1.0, 0.5, -6.0])),
    "binary": (
        lambda n, rng: (rng.uniform(size=(n, 5)) < [0.5, 0.3, 0.2, 0.6, 0.1]).astype(float),
        np.array([2.0, -2.0, 3.0, 1.0, -1.0, -2.0]),
    ),
    "strong": (lambda n, rng: rng.uniform(-1, 1, (n, 2)), np.array([10.2, -6.8, 1.7])),
}


def designs(quick: bool):
    aw = [("awan-wang", n, eps) for eps in (0.3, 1.0, 3.0) for n in (500, 1_000, 2_000)]
    if quick:
        return [cell for cell in aw if cell[2] == 1.0 and cell[1] >= 1_000]
    adult = [("adult-x", 30_162, eps) for eps in (1.0, 3.0)]
    ordinary = [(name, n, eps) for name in ORDINARY for n in (5_000, 20_000) for eps in (1.0, 3.0)]
    return aw + [("synthetic d=3", n, eps) for n in (2_000, 8_000) for eps in (0.3, 1.0)] + adult + ordinary


@functools.cache
def adult_rows():
    """Adult's rows (d = 10, one public divisor) and a known moderate truth on them: the coefficients fitted
    to its real labels with the penalty c = 0.001 (largest 3.5), from which the labels are drawn anew."""
    from dpci.data import load_adult

    adult = load_adult(d=10, normalize="global")
    truth = dpci.nonprivate_confidence_intervals(adult.X, adult.y, dpci.LogisticLoss(), c=1e-3).theta
    return adult.X, truth


def draw(design, n, rng):
    """(X, y, theta on the rows, scale to report widths on)."""
    if design == "adult-x":
        X, truth = adult_rows()
        y = np.where(rng.uniform(size=len(X)) < 1.0 / (1.0 + np.exp(-X @ truth)), 1.0, -1.0)
        return X, y, truth, 1.0
    if design == "awan-wang":
        X, y = make_awan_wang(n, random_state=rng)
        return X, y, math.sqrt(2.0) * AWAN_WANG_BETA, math.sqrt(2.0)
    if design in ORDINARY:
        features, truth = ORDINARY[design]
        Z = np.column_stack([features(n, rng), np.ones(n)])
        y = np.where(rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-Z @ truth)), 1.0, -1.0)
        scale = math.sqrt(Z.shape[1])  # the public bound on ||z||: the rows are divided by it
        return Z / scale, y, truth * scale, 1.0
    X, y = make_synthetic_logistic(n, SYNTHETIC_THETA, random_state=rng)
    return X, y, SYNTHETIC_THETA, 1.0


PAPER_C = 1e-3  # the paper's c (Section 7), at which Awan and Wang read its interval as one for theta


def _fit(X, y, eps, c, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpci.PrivateLogisticRegression(privacy="pure", budget=eps, c=c, classes=(-1, 1), random_state=rng).fit(
            X, y
        )


def cell(design, n, eps, reps, seed, c=None):
    """Coverage per coefficient and mean width of the last coefficient, for each interval: dpci's default
    (at ``c``, None: the default), the paper's theta_0(c) interval at the paper's c, and Wald's."""
    rng = np.random.default_rng(seed)
    hits = {k: [] for k in ("dpci", "paper", "wald")}
    widths = {k: [] for k in hits}
    refused = invalid = 0
    start = time.perf_counter()
    for _ in range(reps):
        X, y, theta, scale = draw(design, n, rng)
        wald = dpci.nonprivate_confidence_intervals(X, y, dpci.LogisticLoss(), c=1e-9).conf_int
        try:
            model = _fit(X, y, eps, c, rng)
        except RegularisationTooSmall:
            refused += 1
            continue
        try:
            paper = model if model.c_ == PAPER_C else _fit(X, y, eps, PAPER_C, rng)
            paper_bounds = [("paper", paper.conf_int(estimand="regularised")[["lower", "upper"]].to_numpy())]
        except RegularisationTooSmall:  # the paper's c is below objective perturbation's bound here
            paper_bounds = []
        ours = model.conf_int()
        invalid += not ours.attrs["valid"]
        for key, bounds in [("dpci", ours[["lower", "upper"]].to_numpy()), *paper_bounds, ("wald", wald)]:
            hits[key].append((bounds[:, 0] <= theta) & (theta <= bounds[:, 1]))
            if np.all(np.isfinite(bounds)):  # a release that says "no interval" covers, and has no width
                widths[key].append((bounds[-1, 1] - bounds[-1, 0]) / scale)
    seconds = (time.perf_counter() - start) / reps
    out = {k: (np.mean(hits[k], axis=0), float(np.mean(widths[k])) if widths[k] else math.nan) for k in hits if hits[k]}
    return out, refused, invalid, seconds


def adult_cost(repeat: int = 7) -> dict:
    """Seconds for one release's interval for theta_0(c) (the release itself: fit, private matrices, Monte
    Carlo) and for its interval for theta (dpci.theta, post-processing), at Adult's size (n = 30,162, d = 11),
    measured in the same run; the best of ``repeat``. On Adult itself the release gives no interval for theta
    (its Hessian's weakest direction is floored) and the simulation is skipped, so the rows are a synthetic
    design of that size on which it is given (at eps = 10: the cost does not depend on the budget)."""
    from dpci.theta import theta_release

    X, y = make_synthetic_logistic(30_162, np.linspace(1.0, -1.0, 11), random_state=0)
    loss, out = dpci.LogisticLoss(), {}
    for method in ("objective", "output"):
        release_s, theta_s = [], []
        for _ in range(repeat):
            start = time.perf_counter()
            release = dpci.private_confidence_intervals(X, y, loss, mechanism=method, budget=10.0, c=1e-3)
            release_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            made = theta_release(release, loss, np.random.default_rng())
            assert made.valid, "the cost is of an interval that is given"
            theta_s.append(time.perf_counter() - start)
        out[method] = (min(release_s), min(theta_s))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cost", action="store_true", help="only the cost at Adult's size, against the release")
    parser.add_argument(
        "--design", help="only this design's cells (awan-wang, synthetic d=3, adult-x, or one of ORDINARY)"
    )
    parser.add_argument("--paper-c", action="store_true", help="dpci's interval at the paper's c = 0.001")
    args = parser.parse_args(argv)
    if args.cost:
        for method, (release, theta) in adult_cost().items():
            print(
                f"{method}: release (θ₀(c) interval) {release:.3f} s, interval for θ {theta:.3f} s ({theta / release:.1f}x)"
            )
        return
    se = math.sqrt(0.95 * 0.05 / args.reps)
    print(f"{args.reps} repetitions per cell; a coverage of 0.95 has Monte Carlo SE {se:.3f}\n")
    print(
        "| design | n | ε | dpci θ: coverage (worst) | width | × Wald | repro width (published) "
        "| paper θ₀(c) as θ: coverage (worst) | width | Wald coverage | Wald width |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k, (design, n, eps) in enumerate(designs(args.quick)):
        if args.design and design != args.design:
            continue
        out, _refused, invalid, seconds = cell(
            design, n, eps, args.reps, args.seed + k, PAPER_C if args.paper_c else None
        )
        if "dpci" not in out:
            print(
                f"| {design} | {n:,} | {eps:g} | refused: c = 0.001 below objective perturbation's bound | | | | | | | |"
            )
            continue
        (cov, width), (wcov, wwidth) = out["dpci"], out["wald"]
        pcov, pwidth = out.get("paper", (np.array([math.nan]), math.nan))
        repro = PUBLISHED_REPRO_WIDTH.get((n, eps)) if design == "awan-wang" else None
        note = ""
        if invalid:  # a release with no interval covers: say what the intervals given covered
            given = args.reps - _refused - invalid
            kept = (cov * (args.reps - _refused) - invalid) / given
            note = f"; {invalid} of {args.reps} said no interval"
            if given:
                note += f", the {given} given covered {kept.mean():.3f} ({kept.min():.3f})"
        print(
            f"| {design} | {n:,} | {eps:g} | {cov.mean():.3f} ({cov.min():.3f}{note}) | {width:.3f} | "
            f"{width / wwidth:.2f} | {'' if repro is None else f'{repro:.3f}'} | {pcov.mean():.3f} ({pcov.min():.3f}) "
            f"| {pwidth:.3f} | {wcov.mean():.3f} | {wwidth:.3f} |",
            flush=True,
        )
    print(f"\nseconds per repetition (fit, interval for θ, θ₀(c) and Wald) in the last cell: {seconds:.3f}")


if __name__ == "__main__":
    main()
