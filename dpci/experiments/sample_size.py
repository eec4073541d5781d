"""Section 7.5 (Figure 13) as a sweep: for each non-private n', the smallest private n whose mean
interval length is at most the non-private length at n', found by walking or bisecting the
lattice of n; each n is evaluated once and shared between targets."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from ..release import nonprivate_confidence_intervals
from ..spec import ReleaseSpec, check_spec
from .bootstrap import iter_coverage
from .sweeps import METHODS, SweepProgress, budget_for, run_keywords, spec_at, subsample


def nonprivate_length(X, y, loss, n: int, c=1e-3, alpha=0.05, seed=0) -> float:
    """Mean length of the non-private intervals on the first n rows of the fixed permutation: the
    target that Section 7.5 asks the private intervals to match at n' = n."""
    Xn, yn = subsample(X, y, int(n), seed)
    ci = nonprivate_confidence_intervals(Xn, yn, loss, c=c, alpha=alpha).conf_int
    return float(np.mean(ci[:, 1] - ci[:, 0]))


def iter_sample_size_match(
    load: Callable[[int], tuple],
    spec: ReleaseSpec,
    nonprivate_ns: Iterable[int],
    d: int = 10,
    epsilon: float = 1.0,
    methods=METHODS,
    step: int = 2_500,
    n_replicates=1_000,
    random_state=0,
    n_jobs=1,
    precision=None,
    seed=0,
    n_max: int | None = None,
    search: str = "walk",
    nonprivate_lengths: dict | None = None,
):
    """For each non-private n', the smallest private n on the lattice step, 2 step, ... <= ``n_max``
    (default: all rows) whose mean private length is at most the non-private length at n'
    (Section 7.5, Figure 13). ``spec`` (a :class:`dpci.ReleaseSpec`) gives the loss, c, alpha and m;
    each method runs at its notion's budget for ``epsilon`` (:func:`~dpci.experiments.sweeps.budget_for`).

    ``search="walk"`` walks the lattice upwards from ``step`` for every n'; ``search="bisect"`` first
    checks that the largest n reaches the target, then bisects: the same answer whenever the mean
    length decreases along the lattice, in fewer evaluations. Every (method, n) is evaluated once and
    shared between the targets; each new evaluation is reported in a progress's ``evaluated`` (the
    points of the length-vs-n curve). ``nonprivate_lengths`` maps n' to a target already computed
    (:func:`nonprivate_length`). A target no n reaches gets ``n_private`` NaN and, as
    ``private_length``, the length at the largest n.
    """
    if search not in ("walk", "bisect"):
        raise ValueError(f"search must be 'walk' or 'bisect', got {search!r}.")
    X_all, y_all, _ = load(d)
    n_max = len(X_all) if n_max is None else min(int(n_max), len(X_all))
    lattice = list(range(step, n_max + 1, step))
    run_kw = run_keywords(n_replicates, random_state, n_jobs, precision)
    spec = check_spec(spec, "iter_sample_size_match")
    loss, c, alpha = spec.loss, spec.c, spec.alpha
    known = {int(n): float(v) for n, v in (nonprivate_lengths or {}).items()}
    targets = [
        (n, known[n] if n in known else nonprivate_length(X_all, y_all, loss, n, c, alpha, seed))
        for n in map(int, nonprivate_ns)
    ]
    total = len(targets) * len(methods)
    rows: list[dict] = []
    start, cache = time.perf_counter(), {}

    def progress(current, done, of, evaluated=None):
        return SweepProgress(
            len(rows), total, pd.DataFrame(rows), current, done, of, time.perf_counter() - start, evaluated
        )

    def length(mechanism, privacy, i, n_np):
        """The mean private length at the i-th n of the lattice (evaluated once), yielding progress."""
        n = lattice[i]
        if (mechanism, privacy, n) not in cache:
            setting = dict(mechanism=mechanism, privacy=privacy, budget=budget_for(privacy, epsilon))
            current, t = dict(setting, n_nonprivate=n_np, n=n), time.perf_counter()
            X, y = subsample(X_all, y_all, n, seed)
            for p in iter_coverage(X, y, spec_at(spec, setting), **run_kw):
                yield progress(current, p.done, p.total)
            (mean, mean_se), (cov, cov_se) = p.overall_length, p.overall_coverage
            cache[mechanism, privacy, n] = {
                "n": n,
                "length": mean,
                "length_se": mean_se,
                "coverage": cov,
                "coverage_se": cov_se,
            }
            yield progress(
                current,
                p.done,
                p.total,
                dict(
                    cache[mechanism, privacy, n], mechanism=mechanism, privacy=privacy, seconds=time.perf_counter() - t
                ),
            )
        return cache[mechanism, privacy, n]["length"]

    def find(mechanism, privacy, n_np, target):
        """(index of the smallest n reaching the target or None, the length at the last n looked at)."""

        def at(i):
            return length(mechanism, privacy, i, n_np)

        if search == "walk":
            last = np.inf
            for i in range(len(lattice)):
                last = yield from at(i)
                if last <= target:
                    return i, last
            return None, last
        if not lattice:
            return None, np.inf
        last = yield from at(len(lattice) - 1)
        if not last <= target:
            return None, last
        lo, hi = 0, len(lattice) - 1  # length(lo) > target >= length(hi), once length(0) > target is known
        if (yield from at(0)) <= target:
            hi = 0
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if (yield from at(mid)) <= target:
                hi = mid
            else:
                lo = mid
        return hi, (yield from at(hi))

    for mechanism, privacy in methods:
        for n_np, target in targets:
            found, last = yield from find(mechanism, privacy, n_np, target)
            rows.append(
                dict(
                    sweep="sample-size",
                    mechanism=mechanism,
                    privacy=privacy,
                    epsilon=epsilon,
                    d=d,
                    n_nonprivate=n_np,
                    nonprivate_length=target,
                    n_private=np.nan if found is None else lattice[found],
                    private_length=last,
                    n_max=n_max,
                )
            )
    yield progress(None, 0, 0)
