"""Sweeps that answer the questions of Section 7, as tidy DataFrames.

* :func:`iter_split_sweep` -- the phi1 share (Figures 1-4) or the phi2 share of the
  remainder (Figures 5-8); :func:`recommend_split` picks the shortest intervals whose
  coverage is at least 1 - alpha.
* :func:`iter_grid_sweep` -- coverage and length over n x d or n x budget (Figures 9-12).
* :func:`iter_interval_vs_variability` -- private intervals against variability intervals
  over n, d or the budget (Figures 14-16).
* :func:`iter_sample_size_match` -- the private n whose intervals are as short as the
  non-private ones at n' (Figure 13, Section 7.5).
* :func:`fit_length_vs_n`, :func:`fit_length_vs_budget` -- the curves of Section 7.7.

Every sweep is a generator of :class:`SweepProgress` (partial results while a setting
runs, at least once per chunk of replicates) and returns, as its last ``frame``, one
row per setting and coordinate, plus a row ``feature == "(all)"`` per setting with the
coverage and length averaged over coordinates (Section 7.2) and their standard errors.
Pure DP and zCDP are compared at rho = epsilon^2 / 2 (Section 7.2).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..accounting import default_split
from .bootstrap import iter_coverage, iter_variability
from ..intervals import check_alpha
from ..release import nonprivate_confidence_intervals

METHODS = (("objective", "pure"), ("output", "pure"), ("objective", "zcdp"), ("output", "zcdp"))
ALL = "(all)"


def budget_for(privacy: str, epsilon: float) -> float:
    """The budget compared with epsilon-DP: epsilon itself, or rho = epsilon^2 / 2 (Section 7.2)."""
    return float(epsilon) if privacy == "pure" else float(epsilon) ** 2 / 2.0


def subsample(X, y, n: int, seed: int = 0):
    """The first n rows after a fixed random permutation (Section 7.1)."""
    if n > len(X):
        raise ValueError(f"asked for n = {n} rows but the dataset has {len(X)}.")
    idx = np.random.default_rng(seed).permutation(len(X))[:n]
    return X[idx], y[idx]


@dataclass(frozen=True)
class SweepProgress:
    """State of a sweep: finished settings' rows plus the one under way."""

    settings_done: int
    settings_total: int
    frame: pd.DataFrame
    current: dict | None
    replicates_done: int
    replicates_total: int
    elapsed: float

    @property
    def finished(self) -> bool:
        return self.settings_done >= self.settings_total


def _coverage_rows(progress, setting: dict, names) -> pd.DataFrame:
    frame = progress.to_frame(names)
    cov, cov_se = progress.overall_coverage
    length, length_se = progress.overall_length
    overall = dict(feature=ALL, theta0=np.nan, coverage=cov, coverage_se=cov_se, length=length,
                   length_se=length_se, replicates=progress.done)
    frame = pd.concat([frame, pd.DataFrame([overall])], ignore_index=True)
    return frame.assign(**setting)[list(setting) + list(frame.columns)]


def _variability_rows(progress, setting: dict, names) -> pd.DataFrame:
    frame = progress.to_frame(names)
    overall = dict(feature=ALL, theta0=np.nan, vi_lower=np.nan, vi_upper=np.nan,
                   vi_length=frame["vi_length"].mean(), replicates=progress.done)
    frame = pd.concat([frame, pd.DataFrame([overall])], ignore_index=True)
    return frame.assign(**setting)[list(setting) + list(frame.columns)]


def _run(settings: list[dict], runner: Callable[[dict], Iterator[tuple[pd.DataFrame, int, int]]]):
    """Drive the settings one after another, yielding progress after every chunk."""
    start, done_frames = time.perf_counter(), []
    for i, setting in enumerate(settings):
        partial = None
        for partial, rep_done, rep_total in runner(setting):
            frame = pd.concat(done_frames + [partial], ignore_index=True)
            yield SweepProgress(i, len(settings), frame, setting, rep_done, rep_total, time.perf_counter() - start)
        done_frames.append(partial)
    frame = pd.concat(done_frames, ignore_index=True) if done_frames else pd.DataFrame()
    yield SweepProgress(len(settings), len(settings), frame, None, 0, 0, time.perf_counter() - start)


def _coverage_runner(X, y, loss, names, common):
    def run(setting):
        kw = {k: setting[k] for k in ("mechanism", "privacy", "budget")}
        split = setting.get("split")
        for p in iter_coverage(X, y, loss, split=split, **kw, **common):
            yield _coverage_rows(p, _public(setting), names), p.done, p.total

    return run


def _public(setting: dict) -> dict:
    """Setting columns for the DataFrame (the split becomes three share columns)."""
    out = {k: v for k, v in setting.items() if k != "split"}
    if "split" in setting:
        phi1, phi2, phi3 = setting["split"]
        out.update(phi1=phi1, phi2=phi2, phi3=phi3, phi2_share=phi2 / (phi2 + phi3))  # phi2's share of the rest
    return out


def _common(c, alpha, n_samples, n_replicates, random_state, n_jobs):
    return dict(c=c, alpha=check_alpha(alpha), n_samples=n_samples, n_replicates=n_replicates,
                random_state=random_state, n_jobs=n_jobs)


def iter_split_sweep(
    X, y, loss, mechanism="objective", privacy="pure", budget=1.0, vary="phi1", shares=None, phi1=None,
    feature_names=None, c=1e-3, alpha=0.05, n_samples=10_000, n_replicates=1_000, random_state=0, n_jobs=1,
):
    """Coverage and length as the split changes (Section 7.3).

    ``vary="phi1"``: phi1 takes each share and phi2 = phi3 split the rest equally (Section 7.3.1).
    ``vary="phi2"``: phi1 is fixed (``phi1`` or Table 2) and phi2 takes each share of the rest
    (Section 7.3.2).
    """
    if vary == "phi1":
        shares = shares or ((0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.8, 0.9) if privacy == "pure"
                            else (0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98))
        splits = [(s, (1 - s) / 2, (1 - s) / 2) for s in shares]
    elif vary == "phi2":
        shares = shares or (0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875)
        first = phi1 if phi1 is not None else default_split(mechanism, privacy)[0]
        splits = [(first, (1 - first) * s, (1 - first) * (1 - s)) for s in shares]
    else:
        raise ValueError(f"vary must be 'phi1' or 'phi2', got {vary!r}.")
    settings = [dict(sweep=f"split-{vary}", mechanism=mechanism, privacy=privacy, budget=budget, n=len(X),
                     d=X.shape[1] - 1, split=sp) for sp in splits]
    common = _common(c, alpha, n_samples, n_replicates, random_state, n_jobs)
    yield from _run(settings, _coverage_runner(X, y, loss, feature_names, common))


def recommend_split(frame: pd.DataFrame, alpha: float = 0.05) -> pd.Series:
    """The split with the shortest mean length among those with overall coverage >= 1 - alpha.

    Returns the "(all)" row of that setting, with ``meets_coverage`` False when no split
    reaches 1 - alpha (then the one with the highest coverage is returned).
    """
    rows = frame[frame["feature"] == ALL]
    ok = rows[rows["coverage"] >= 1 - alpha]
    best = ok.loc[ok["length"].idxmin()] if len(ok) else rows.loc[rows["coverage"].idxmax()]
    return pd.concat([best, pd.Series({"meets_coverage": bool(len(ok))})])


def iter_grid_sweep(
    load: Callable[[int], tuple], loss, ns: Iterable[int], ds: Iterable[int] | None = None,
    epsilons: Iterable[float] | None = None, d: int = 10, epsilon: float = 1.0, methods=METHODS,
    c=1e-3, alpha=0.05, n_samples=10_000, n_replicates=1_000, random_state=0, n_jobs=1, seed=0,
):
    """Coverage and length over n x d (``ds``) or n x budget (``epsilons``) for each method
    (Section 7.4, Figures 9-12). ``load(d)`` returns (X, y, feature_names) with d features
    plus the constant; each n takes the first n rows of a fixed permutation."""
    if (ds is None) == (epsilons is None):
        raise ValueError("give exactly one of ds (an n x d grid) or epsilons (an n x budget grid).")
    axis = [("d", v) for v in ds] if ds is not None else [("epsilon", v) for v in epsilons]
    settings = []
    for name, value in axis:
        for n in ns:
            for mechanism, privacy in methods:
                dd, eps = (value, epsilon) if name == "d" else (d, value)
                settings.append(dict(sweep=f"grid-n-{name}", mechanism=mechanism, privacy=privacy, n=int(n), d=int(dd),
                                     epsilon=float(eps), budget=budget_for(privacy, eps)))
    common = _common(c, alpha, n_samples, n_replicates, random_state, n_jobs)
    yield from _run(settings, _subsampled_runner(load, loss, common, seed, variability=0))


def _subsampled_runner(load, loss, common, seed, variability):
    """Run coverage (and, when ``variability`` is a replicate count, variability intervals) per setting."""
    cache = {}

    def data(d, n):
        if d not in cache:
            cache[d] = load(d)
        X, y, names = cache[d]
        return (*subsample(X, y, n, seed), names)

    def run(setting):
        X, y, names = data(setting["d"], setting["n"])
        kw = dict(mechanism=setting["mechanism"], privacy=setting["privacy"], budget=setting["budget"])
        cov = None
        for p in iter_coverage(X, y, loss, **kw, **common):
            cov = _coverage_rows(p, setting, names)
            yield cov, p.done, p.total
        if variability:
            vi_kw = {k: common[k] for k in ("c", "alpha", "random_state", "n_jobs")}
            for v in iter_variability(X, y, loss, n_replicates=variability, **kw, **vi_kw):
                vrows = _variability_rows(v, setting, names)
                merged = cov.merge(vrows[["feature", "vi_lower", "vi_upper", "vi_length"]], on="feature")
                yield merged, v.done, v.total

    return run


def iter_interval_vs_variability(
    load: Callable[[int], tuple], loss, over: str, values: Iterable, n: int = 15_000, d: int = 10,
    epsilon: float = 1.0, methods=METHODS, c=1e-3, alpha=0.05, n_samples=10_000, n_replicates=1_000,
    n_vi=10_000, random_state=0, n_jobs=1, seed=0,
):
    """Mean private-interval length against variability-interval length as n, d or epsilon
    varies (Section 7.6, Figures 14-16)."""
    if over not in ("n", "d", "epsilon"):
        raise ValueError(f"over must be 'n', 'd' or 'epsilon', got {over!r}.")
    settings = []
    for value in values:
        base = dict(n=int(n), d=int(d), epsilon=float(epsilon))
        base[over] = type(base[over])(value)
        for mechanism, privacy in methods:
            settings.append(dict(sweep=f"ci-vs-vi-{over}", mechanism=mechanism, privacy=privacy, **base,
                                 budget=budget_for(privacy, base["epsilon"])))
    common = _common(c, alpha, n_samples, n_replicates, random_state, n_jobs)
    yield from _run(settings, _subsampled_runner(load, loss, common, seed, variability=n_vi))


def iter_sample_size_match(
    load: Callable[[int], tuple], loss, nonprivate_ns: Iterable[int], d: int = 10, epsilon: float = 1.0,
    methods=METHODS, step: int = 2_500, c=1e-3, alpha=0.05, n_samples=10_000, n_replicates=1_000,
    random_state=0, n_jobs=1, seed=0,
):
    """For each non-private n', the smallest private n (from ``step`` in steps of ``step``) whose
    mean private length is at most the non-private length at n' (Section 7.5, Figure 13)."""
    X_all, y_all, names = load(d)
    common = _common(c, alpha, n_samples, n_replicates, random_state, n_jobs)
    start, rows = time.perf_counter(), []
    targets = []
    for n_np in nonprivate_ns:
        X, y = subsample(X_all, y_all, int(n_np), seed)
        ci = nonprivate_confidence_intervals(X, y, loss, c=c, alpha=alpha).conf_int
        targets.append((int(n_np), float(np.mean(ci[:, 1] - ci[:, 0]))))
    total = len(targets) * len(methods)
    for mechanism, privacy in methods:
        for n_np, target in targets:
            n_priv, length = step, np.inf
            while n_priv <= len(X_all):
                X, y = subsample(X_all, y_all, n_priv, seed)
                setting = dict(mechanism=mechanism, privacy=privacy, budget=budget_for(privacy, epsilon))
                for p in iter_coverage(X, y, loss, **setting, **common):
                    yield SweepProgress(len(rows), total, pd.DataFrame(rows),
                                        dict(setting, n_nonprivate=n_np, n=n_priv), p.done, p.total,
                                        time.perf_counter() - start)
                length = p.overall_length[0]
                if length <= target:
                    break
                n_priv += step
            rows.append(dict(sweep="sample-size", mechanism=mechanism, privacy=privacy, epsilon=epsilon, d=d,
                             n_nonprivate=n_np, nonprivate_length=target,
                             n_private=n_priv if length <= target else np.nan, private_length=length,
                             n_max=len(X_all)))
    yield SweepProgress(total, total, pd.DataFrame(rows), None, 0, 0, time.perf_counter() - start)


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
    two = CurveFit("c0/n + c1/sqrt(n)", dict(c0=c0, c1=c1), _r2(length, design @ [c0, c1]),
                   lambda m: c0 / np.asarray(m, float) + c1 / np.sqrt(m))
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
    return CurveFit(name, dict(c0=c0, c1=c1), _r2(length, model(budget, c0, c1)), lambda b: model(np.asarray(b, float), c0, c1))
