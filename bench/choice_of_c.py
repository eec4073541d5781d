"""The choice of c, measured (docs/choosing-c.md): coverage and width by simulation on
known-truth data at the c that :func:`dpci.recommend_c` recommends for each estimand, beside c = 1e-3
(the paper's default) and Wu et al.'s data-independent c.

Each repetition draws a fresh sample of n rows from a logistic model with known coefficients (the
synthetic design of :mod:`dpci.data.synthetic`), releases every method's interval at each c and checks
it against the estimand it claims: theta_0(c) (exact, :func:`dpci.data.population_theta0`) for the
regularised interval, and theta = theta_0(0) for the unregularised one (the regularised interval
widened by the release's own proven :func:`dpci.bias_bound`, with B = ceil(||theta||) stated as a true
public bound unless the setting states another). Releases run without a ledger (simulated data, public
seeds).

    python bench/choice_of_c.py                       # 200 repetitions a cell, docs/figures/choosing-c-table.md
    python bench/choice_of_c.py --reps 20 --settings small --out /tmp/t.md
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dpci
from dpci import methods
from dpci.data.synthetic import make_synthetic_logistic, population_theta0
from dpci.losses import coerce_loss
from dpci.methods.wu import wu_c, wu_epsilon
from dpci.recommend import recommend_c
from dpci.solver import margin_rows
from dpci.spec import ReleaseSpec

PAPER_C = 1e-3
N_SAMPLES = 2_000  # Monte Carlo draws per interval (the paper uses 10,000; coverage is the same to MC error)


@dataclass(frozen=True)
class Setting:
    name: str
    n: int
    theta: tuple  # the truth, the constant's last (d = len(theta))
    epsilon: float  # pure DP budget
    rho: float  # zCDP budget
    loss: str = "logistic"
    theta_bound: float | None = None  # the stated public bound on ||theta|| (None: ceil(||theta||), a true one)


GUESS6 = (1.5, -1.0, 0.5, -0.3, 0.8, 0.3)
SETTINGS = {
    "n5000": Setting("n = 5,000, d = 6", 5_000, GUESS6, 0.3, 0.05),
    "huber": Setting("n = 1,000, d = 3, Huber h = 0.5", 1_000, (1.5, -1.0, 0.3), 1.0, 0.05, "huber"),
    "small": Setting("n = 300, d = 3, other truth", 300, (0.8, -0.4, 0.2), 2.0, 2.0, theta_bound=1.0),
    "adult": Setting(
        "Adult's shape: n = 30,162, d = 11",
        30_162,
        (1.5, -1.0, 0.5, -0.3, 0.8, 0.2, -0.6, 1.0, -1.2, 0.4, 0.3),
        1.0,
        0.5,
    ),
}


def runs(measurement, n, c) -> bool:
    """Whether the measurement's method can run at c (objective perturbation needs c above its bound)."""
    try:
        measurement.method.coefficient_noise_law(measurement.at_c(c), n)
    except dpci.RegularisationTooSmall:
        return False
    return True


def cell(setting: Setting, method: str, notion: str, reps: int, seed: int) -> dict:
    """One (setting, method, notion): the releases at every c, and their coverage and widths."""
    loss = coerce_loss(setting.loss)
    theta = np.array(setting.theta)
    n, d = setting.n, len(theta)
    budget = setting.epsilon if notion == "pure" else setting.rho
    m = methods.get(method)
    if loss.name != "logistic" and method == "kulkarni":
        return {}
    measurement = ReleaseSpec(method, notion, budget, loss=loss, n_samples=N_SAMPLES).measure()
    alloc = measurement.allocation
    wu = wu_c(n, d, wu_epsilon(alloc))
    B = setting.theta_bound or math.ceil(np.linalg.norm(theta))
    facts = dict(method=method, privacy=notion, budget=budget, loss=loss, theta_bound=B)
    recs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if m.uses_c:
            for estimand in dpci.recommend.ESTIMANDS:
                recs[estimand] = recommend_c(n, d, estimand=estimand, **facts)
    own = m.own_c(measurement, n, d)
    cs = sorted({PAPER_C, wu, *(r.c for r in recs.values())}) if own is None else [own]
    if not m.uses_c:
        cs = [PAPER_C]  # not used
    cs = [c for c in cs if runs(measurement, n, c)]
    theta_free = theta if loss.name == "logistic" else population_theta0(theta, 1e-7, loss=loss)
    truth = {c: population_theta0(theta, c, loss=loss) for c in cs} if m.uses_c else {}
    rng = np.random.default_rng(seed)
    hits = {(c, e): [] for c in cs for e in dpci.recommend.ESTIMANDS}
    widths = {(c, e): [] for c in cs for e in dpci.recommend.ESTIMANDS}
    start = time.perf_counter()
    for _ in range(reps):
        X, y = make_synthetic_logistic(n, theta, random_state=rng)
        A = margin_rows(X, np.where(y > 0, 1.0, -1.0))
        for c in cs:
            spec = ReleaseSpec(method=method, privacy=notion, budget=budget, loss=loss, c=c, n_samples=N_SAMPLES)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                release = spec.measure().run(A, rng)
            conf = release.conf_int
            for estimand in dpci.recommend.ESTIMANDS:
                if not m.uses_c:  # its interval is for theta already
                    lo, hi, target = conf[:, 0], conf[:, 1], theta_free
                elif estimand == "regularised":
                    lo, hi, target = conf[:, 0], conf[:, 1], truth[c]
                else:
                    bias = dpci.bias_bound(release, B, loss, method=m)  # proven from this release's Hessian
                    free = dpci.recommend.theta_interval(release, bias)
                    lo, hi, target = free[:, 0], free[:, 1], theta_free
                hits[(c, estimand)].append(float(np.mean((lo <= target) & (target <= hi))))
                widths[(c, estimand)].append(hi - lo)
    out = dict(setting=setting.name, method=method, notion=notion, budget=budget, seconds=time.perf_counter() - start)
    for estimand in dpci.recommend.ESTIMANDS:
        rec = recs.get(estimand)
        c_rec = own if own is not None else (rec.c if rec else None)
        row = {}
        for label, c in (
            ("rec", c_rec),
            ("paper", PAPER_C if own is None else None),
            ("wu", wu if own is None else None),
        ):
            if not m.uses_c:
                c = PAPER_C if label == "rec" else None
            if c is None or (c, estimand) not in hits:
                row[label] = None if c is None else dict(c=c, invalid=True)
                continue
            h = np.array(hits[(c, estimand)])
            row[label] = dict(
                c=c,
                coverage=float(h.mean()),
                se=float(h.std(ddof=1) / math.sqrt(len(h))) if len(h) > 1 else math.nan,
                median_width=float(np.median(np.concatenate(widths[(c, estimand)]))),
            )
        if rec is not None:
            row["predicted"] = dict(width=rec.width, coverage=rec.coverage, bias=rec.bias, useful=rec.useful)
        out[estimand] = row
    return out


def run(settings, reps, seed, workers):
    jobs = [
        (SETTINGS[s], name, notion)
        for s in settings
        for name, notion in methods.pairs()
        if not (name == "kulkarni" and SETTINGS[s].loss != "logistic")
    ]
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(cell, st, name, notion, reps, seed + i) for i, (st, name, notion) in enumerate(jobs)]
        return [f.result() for f in futures]


def fmt_c(c):
    return "–" if c is None else f"{c:.2g}"


def cell_text(result) -> str:
    """A comparison cell: median width (coverage), or why there is none."""
    if not result:
        return "–"
    if result.get("invalid"):
        return "c too small to run"
    return f"{result['median_width']:.3g} ({result['coverage']:.2f})"


def markdown(results, reps) -> str:
    lines = [
        "# The choice of c, measured",
        "",
        "Written by `python bench/choice_of_c.py` (docs/choosing-c.md explains the columns and the method).",
        "",
        f"{reps} repetitions a cell; coverage pooled over the coefficients, ± one standard error over repetitions; "
        "widths are medians over repetitions and coefficients. *pred.* is recommend_c's prediction (mean "
        "expected width). ✓: coverage ≥ 0.95 − 2 SE.",
        "",
        "| setting | method | estimand | recommended c | coverage at it | median width (pred.) | width at c = 10⁻³ | "
        "c of Wu | width at Wu's c |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        if not r:
            continue
        for estimand in dpci.recommend.ESTIMANDS:
            row = r[estimand]
            rec, paper, wu, pred = row.get("rec"), row.get("paper"), row.get("wu"), row.get("predicted")
            paper_text = cell_text(paper)
            wu_text = cell_text(wu)
            ok = "✓" if rec and rec["coverage"] >= 0.95 - 2 * rec["se"] else "✗"
            budget = ("ε = " if r["notion"] == "pure" else "ρ = ") + f"{r['budget']:g}"
            c_text = fmt_c(rec["c"]) if rec and methods.get(r["method"]).uses_c else "no c"
            if not methods.get(r["method"]).uses_c and estimand == "regularised":
                continue  # its interval is for theta: one row, the unregularised
            lines.append(
                f"| {r['setting']}, {budget} | {methods.describe(r['method'], r['notion'], short=True)} | {estimand} | "
                f"{c_text} | {rec['coverage']:.3f} ± {rec['se']:.3f} {ok} | "
                f"{rec['median_width']:.3g}" + (f" ({pred['width']:.3g})" if pred else "") + " | " + paper_text + " | "
                f"{fmt_c(wu['c']) if wu else '–'} | " + wu_text + " |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--settings", nargs="*", default=list(SETTINGS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("docs/figures/choosing-c-table.md"))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = run(args.settings, args.reps, args.seed, args.workers)
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1, default=float))
    text = markdown(results, args.reps)
    args.out.write_text(text)
    print(text)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
