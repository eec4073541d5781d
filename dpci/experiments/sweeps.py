"""Sweeps that answer the questions of Section 7, as tidy DataFrames.

* :func:`iter_split_sweep` -- the phi1 share (Figures 1-4) or the phi2 share of the
  remainder (Figures 5-8); :func:`recommend_split` picks the shortest intervals whose
  coverage is at least 1 - alpha.
* :func:`iter_grid_sweep` -- coverage and length over n x d or n x budget (Figures 9-12).
* :func:`iter_interval_vs_variability` -- private intervals against variability intervals
  over n, d or the budget (Figures 14-16).
* :func:`dpci.experiments.sample_size.iter_sample_size_match` -- the private n whose intervals are
  as short as the non-private ones at n' (Figure 13, Section 7.5).
* the curves of Section 7.7 are fitted by :mod:`dpci.experiments.curves`.

Every sweep is a generator of :class:`SweepProgress` (partial results while a setting
runs, at least once per chunk of replicates) and returns, as its last ``frame``, one
row per setting and coordinate, plus a row ``feature == "(all)"`` per setting with the
coverage and length averaged over coordinates (Section 7.2) and their standard errors.
Pure DP and zCDP are compared at rho = epsilon^2 / 2 (Section 7.2). A progress is also yielded
as each setting finishes (``current`` None, its rows in ``frame``).

With ``skip_invalid=True`` a setting that Algorithm 1 cannot run (objective perturbation with c
too small, :class:`~dpci.exceptions.RegularisationTooSmall`) does not stop the sweep: it gives one
``"(all)"`` row with NaN coverage and length, ``replicates`` 0 and the reason in a ``skipped``
column (empty for the settings that ran).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import methods as registry
from ..accounting import Split, rho_for_approx_dp, rho_from_epsilon
from ..exceptions import RegularisationTooSmall
from ..methods import default_split
from ..spec import ReleaseSpec, check_spec
from .bootstrap import iter_coverage, iter_variability

METHODS = registry.PAPER_PAIRS  # the default methods of a sweep; any registered (method, notion) pairs can be given
ALL = "(all)"


def budget_for(privacy: str, epsilon: float, delta: float | None = None) -> float:
    """The budget compared with epsilon-DP: epsilon itself; for zCDP rho = epsilon^2 / 2, the paper's
    comparison (Section 7.2), or with ``delta`` the rho that is (epsilon, delta)-DP (equal privacy)."""
    if privacy == "pure":
        return float(epsilon)
    return rho_from_epsilon(epsilon) if delta is None else rho_for_approx_dp(epsilon, delta)


def subsample(X, y, n: int, seed: int = 0):
    """The first n rows after a fixed random permutation (Section 7.1)."""
    if n > len(X):
        raise ValueError(f"asked for n = {n} rows but the dataset has {len(X)}.")
    idx = np.random.default_rng(seed).permutation(len(X))[:n]
    return X[idx], y[idx]


@dataclass(frozen=True)
class SweepProgress:
    """State of a sweep: finished settings' rows plus the one under way.

    ``evaluated`` is set by :func:`iter_sample_size_match` once per newly evaluated n: that n, its
    mean length and coverage with their standard errors, the method, and the seconds it took.
    """

    settings_done: int
    settings_total: int
    frame: pd.DataFrame
    current: dict | None
    replicates_done: int
    replicates_total: int
    elapsed: float
    evaluated: dict | None = None

    @property
    def finished(self) -> bool:
        return self.settings_done >= self.settings_total


def _coverage_rows(progress, setting: dict, names) -> pd.DataFrame:
    frame = progress.to_frame(names)
    cov, cov_se = progress.overall_coverage
    length, length_se = progress.overall_length
    overall = dict(
        feature=ALL,
        theta0=np.nan,
        coverage=cov,
        coverage_se=cov_se,
        length=length,
        length_se=length_se,
        replicates=progress.done,
    )
    frame = pd.concat([frame, pd.DataFrame([overall])], ignore_index=True)
    return frame.assign(**setting)[list(setting) + list(frame.columns)]


def _variability_rows(progress, setting: dict, names) -> pd.DataFrame:
    frame = progress.to_frame(names)
    overall = dict(
        feature=ALL,
        theta0=np.nan,
        vi_lower=np.nan,
        vi_upper=np.nan,
        vi_length=frame["vi_length"].mean(),
        replicates=progress.done,
    )
    frame = pd.concat([frame, pd.DataFrame([overall])], ignore_index=True)
    return frame.assign(**setting)[list(setting) + list(frame.columns)]


def _skipped_row(setting: dict, err: RegularisationTooSmall) -> pd.DataFrame:
    """The row of a setting Algorithm 1 cannot run: c must exceed t / (2n(e^epsilon1 - 1)) (Section 4.1)."""
    why = (
        f"c too small for objective perturbation: Algorithm 1 needs c > {err.smallest_c:.4g} "
        f"(e.g. c = {err.suggested_c:.3g})"
    )
    row = dict(
        _public(setting),
        feature=ALL,
        theta0=np.nan,
        coverage=np.nan,
        coverage_se=np.nan,
        length=np.nan,
        length_se=np.nan,
        replicates=0,
        skipped=why,
    )
    return pd.DataFrame([row])


def _run(
    settings: list[dict], runner: Callable[[dict], Iterator[tuple[pd.DataFrame, int, int]]], skip_invalid: bool = False
):
    """Drive the settings one after another, yielding progress after every chunk and after every setting
    (the last of which is the final state); ``skip_invalid``: see the module's docstring."""
    done_frames: list[pd.DataFrame] = []
    start = time.perf_counter()
    for i, setting in enumerate(settings):
        partial = None
        try:
            for partial, rep_done, rep_total in runner(setting):
                if skip_invalid:
                    partial = partial.assign(skipped="")
                frame = _concat(done_frames + [partial])
                yield SweepProgress(i, len(settings), frame, setting, rep_done, rep_total, time.perf_counter() - start)
        except RegularisationTooSmall as err:
            if not skip_invalid:
                raise
            partial = _skipped_row(setting, err)
        done_frames.append(partial)
        yield SweepProgress(i + 1, len(settings), _concat(done_frames), None, 0, 0, time.perf_counter() - start)
    if not settings:
        yield SweepProgress(0, 0, pd.DataFrame(), None, 0, 0, time.perf_counter() - start)


def _concat(frames) -> pd.DataFrame:
    frame = pd.concat(frames, ignore_index=True)
    if "skipped" in frame:  # the reason last, whether or not the first setting was skipped
        frame = frame[[col for col in frame.columns if col != "skipped"] + ["skipped"]]
    return frame


def spec_at(spec: ReleaseSpec, setting: dict) -> ReleaseSpec:
    """The spec of one setting of a sweep: ``spec`` with the setting's method, notion and budget, its
    split (None: the method's default) and its c when it has one."""
    return check_spec(spec, "a sweep").replace(
        method=setting["mechanism"],
        privacy=setting["privacy"],
        budget=setting["budget"],
        split=setting.get("split"),
        c=setting.get("c", spec.c),
    )


def _coverage_runner(X, y, spec, names, run_kw):
    def run(setting):
        for p in iter_coverage(X, y, spec_at(spec, setting), **run_kw):
            yield _coverage_rows(p, _public(setting), names), p.done, p.total

    return run


def _public(setting: dict) -> dict:
    """Setting columns for the DataFrame (the split becomes one share column per step, phi1, phi2, ...)."""
    out = {k: v for k, v in setting.items() if k != "split"}
    if "split" in setting:
        split = Split(*setting["split"])
        out.update({f"phi{i + 1}": share for i, share in enumerate(split)})
        if len(split) == 3:
            out.update(phi2_share=split.phi2_rest)
    return out


def run_keywords(n_replicates=1_000, random_state=0, n_jobs=1, precision=None) -> dict:
    """How every setting of a sweep is run (the keywords of
    :func:`~dpci.experiments.bootstrap.iter_coverage` besides the spec): the k bootstrap replicates (at
    most k with ``precision``: each setting's coverage run stops once its standard error is below it),
    the randomness of the replicates and the worker processes."""
    return dict(n_replicates=n_replicates, random_state=random_state, n_jobs=n_jobs, precision=precision)


def iter_split_sweep(
    X,
    y,
    spec: ReleaseSpec,
    vary="phi1",
    shares=None,
    phi1=None,
    feature_names=None,
    n_replicates=1_000,
    random_state=0,
    n_jobs=1,
    precision=None,
    skip_invalid=False,
):
    """Coverage and length as the split changes (Section 7.3), for the method, notion and budget of
    ``spec`` (a :class:`dpci.ReleaseSpec`; its split is what varies).

    ``vary="phi1"``: phi1 takes each share and phi2 = phi3 split the rest equally (Section 7.3.1).
    ``vary="phi2"``: phi1 is fixed (``phi1`` or Table 2) and phi2 takes each share of the rest
    (Section 7.3.2). ``n_replicates``, ``random_state``, ``n_jobs`` and ``precision`` run each
    setting (:func:`run_keywords`).
    """
    spec = check_spec(spec, "iter_split_sweep")
    mechanism, privacy, budget = spec.method, spec.privacy, spec.budget
    if vary == "phi1":
        shares = shares or (
            (0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.8, 0.9)
            if privacy == "pure"
            else (0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98)
        )
        splits = [Split.even_rest(s, len(registry.get(mechanism).steps)) for s in shares]
    elif vary == "phi2":
        if len(registry.get(mechanism).steps) != 3:
            raise ValueError(
                f"varying phi2's share of the rest needs a method with three steps; {mechanism!r} has "
                f"{len(registry.get(mechanism).steps)}: vary phi1 (the others share the rest equally)."
            )
        shares = shares or (0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875)
        first = phi1 if phi1 is not None else default_split(mechanism, privacy).phi1
        splits = [Split.from_rest(first, s) for s in shares]
    else:
        raise ValueError(f"vary must be 'phi1' or 'phi2', got {vary!r}.")
    settings = [
        dict(
            sweep=f"split-{vary}",
            mechanism=mechanism,
            privacy=privacy,
            budget=budget,
            n=len(X),
            d=X.shape[1] - 1,
            split=sp,
        )
        for sp in splits
    ]
    run_kw = run_keywords(n_replicates, random_state, n_jobs, precision)
    yield from _run(settings, _coverage_runner(X, y, spec, feature_names, run_kw), skip_invalid)


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
    load: Callable[[int], tuple],
    spec: ReleaseSpec,
    ns: Iterable[int],
    ds: Iterable[int] | None = None,
    epsilons: Iterable[float] | None = None,
    cs: Iterable[float] | None = None,
    d: int = 10,
    epsilon: float = 1.0,
    methods=METHODS,
    n_replicates=1_000,
    random_state=0,
    n_jobs=1,
    precision=None,
    seed=0,
    skip_invalid=False,
    delta=None,
):
    """Coverage and length over n x d (``ds``), n x budget (``epsilons``) or n x c (``cs``) for each
    method (Section 7.4, Figures 9-12). ``spec`` (a :class:`dpci.ReleaseSpec`) gives the loss, c, alpha
    and m; each setting replaces its method, notion and budget (at the method's default split).
    ``load(d)`` returns (X, y, feature_names) with d features plus the constant; each n takes the
    first n rows of a fixed permutation. ``delta``: compare zCDP methods at equal (epsilon, delta)
    instead of the paper's rho = epsilon^2/2."""
    axes = {"d": ds, "epsilon": epsilons, "c": cs}
    given = [name for name, values in axes.items() if values is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of ds (an n x d grid), epsilons (an n x budget grid) or cs (an n x c grid).")
    name = given[0]
    settings = []
    for value in axes[name] or ():
        base = dict(d=d, epsilon=epsilon, c=None)  # c is a setting's own only on an n x c grid
        base[name] = value
        for n in ns:
            settings += _per_method(f"grid-n-{name}", methods, n, base["d"], base["epsilon"], delta, base["c"])
    run_kw = run_keywords(n_replicates, random_state, n_jobs, precision)
    yield from _run(settings, _subsampled_runner(load, spec, run_kw, seed, variability=0), skip_invalid)


def _per_method(sweep: str, methods, n, d, epsilon, delta=None, c=None) -> list[dict]:
    """One setting per (method, notion) at n rows, d features and epsilon (for zCDP rho = epsilon^2/2,
    or with ``delta`` the rho that is (epsilon, delta)-DP: :func:`budget_for`), and at c when given
    (else the sweep's)."""
    equal = {} if delta is None else {"delta": float(delta)}
    if c is not None:
        equal["c"] = float(c)
    return [
        dict(
            sweep=sweep,
            mechanism=m,
            privacy=p,
            n=int(n),
            d=int(d),
            epsilon=float(epsilon),
            budget=budget_for(p, epsilon, delta),
            **equal,
        )
        for m, p in methods
    ]


def _subsampled_runner(load, spec, run_kw, seed, variability):
    """Run coverage (and, when ``variability`` is a replicate count, variability intervals) per setting."""
    cache = {}

    def data(d, n):
        if d not in cache:
            cache[d] = load(d)
        X, y, names = cache[d]
        return (*subsample(X, y, n, seed), names)

    def run(setting):
        X, y, names = data(setting["d"], setting["n"])
        here = spec_at(spec, setting)  # a sweep over c gives each setting its own
        cov = None
        for p in iter_coverage(X, y, here, **run_kw):
            cov = _coverage_rows(p, setting, names)
            yield cov, p.done, p.total
        if variability:
            vi_kw = {k: run_kw[k] for k in ("random_state", "n_jobs")}
            for v in iter_variability(X, y, here, n_replicates=variability, **vi_kw):
                vrows = _variability_rows(v, setting, names)
                merged = cov.merge(vrows[["feature", "vi_lower", "vi_upper", "vi_length"]], on="feature")
                yield merged, v.done, v.total

    return run


def iter_interval_vs_variability(
    load: Callable[[int], tuple],
    spec: ReleaseSpec,
    over: str,
    values: Iterable,
    n: int = 15_000,
    d: int = 10,
    epsilon: float = 1.0,
    methods=METHODS,
    n_replicates=1_000,
    random_state=0,
    n_jobs=1,
    precision=None,
    n_vi=10_000,
    seed=0,
    skip_invalid=False,
    delta=None,
):
    """Mean private-interval length against variability-interval length as n, d, epsilon or the
    regulariser c varies (Section 7.6, Figures 14-16); ``spec`` and ``delta`` as in :func:`iter_grid_sweep`."""
    if over not in ("n", "d", "epsilon", "c"):
        raise ValueError(f"over must be 'n', 'd', 'epsilon' or 'c', got {over!r}.")
    settings = []
    for value in values:
        base = dict(n=int(n), d=int(d), epsilon=float(epsilon), c=None)
        base[over] = float(value) if over in ("epsilon", "c") else int(value)
        settings += _per_method(f"ci-vs-vi-{over}", methods, **base, delta=delta)
    run_kw = run_keywords(n_replicates, random_state, n_jobs, precision)
    yield from _run(settings, _subsampled_runner(load, spec, run_kw, seed, variability=n_vi), skip_invalid)
