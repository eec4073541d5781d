"""Section 7.5: overhead on sample complexity (Figure 13) -- the private n whose intervals are as short
as the non-private ones at n', the computation (built on
:func:`dpci.experiments.sample_size.iter_sample_size_match`) and its checks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import methods as registry
from ...presentation.figures import sample_size_plot
from ..sample_size import iter_sample_size_match, nonprivate_length
from ..sweeps import METHODS
from .context import Check, Context, ExperimentResult, adult, fmt_n, kddcup, kddcup_available, short
from .settings import ALPHA, LOSS, C, Settings

CURVE_COLUMNS = ["n", "length", "length_se", "coverage", "coverage_se", "mechanism", "privacy"]


def match_sample_sizes(ctx, load, d, targets, step, n_max, mechanism, privacy, k, epsilon=1.0, seed=0, random_state=0):
    """For each (n', target length), the smallest private n on the lattice step, 2 step, ... <= n_max
    whose mean private length (k repetitions) is <= the target; returns that frame and the curve of
    every evaluated n.

    :func:`dpci.experiments.sample_size.iter_sample_size_match` with ``search="bisect"``: its definition, data
    and seeds, but the lattice is searched by bisection and every evaluated n is shared between targets.
    The answers agree with its upward walk whenever the mean length decreases along the lattice, which
    the returned curve lets one verify.
    """
    return _match(ctx, load, d, targets, step, n_max, [(mechanism, privacy)], k, epsilon, seed, random_state)


def _match(ctx, load, d, targets, step, n_max, methods, k, epsilon=1.0, seed=0, random_state=0):
    """:func:`match_sample_sizes` for several methods in one sweep, logging each evaluated n."""
    sweep = iter_sample_size_match(
        load,
        ctx.spec,
        [n for n, _ in targets],
        d=d,
        epsilon=epsilon,
        methods=methods,
        step=step,
        **ctx.sweep_run(k, random_state),
        seed=seed,
        n_max=n_max,
        search="bisect",
        nonprivate_lengths=dict(targets),
    )
    points = []
    for p in sweep:
        if p.evaluated is not None:
            e = p.evaluated
            points.append(e)
            ctx.log(
                f"7.5 {short(e['mechanism'], e['privacy'])} n={e['n']}: length {e['length']:.4g} ({e['seconds']:.1f} s)"
            )
    frame = p.frame.drop(columns="sweep")
    # a target no n reaches has no private length here (the sweep reports the length at the largest n)
    frame["private_length"] = frame["private_length"].where(frame["n_private"].notna())
    order = {method: i for i, method in enumerate(methods)}
    points.sort(key=lambda e: (order[e["mechanism"], e["privacy"]], e["n"]))
    return frame, pd.DataFrame(points, columns=CURVE_COLUMNS)


def nonprivate_targets(load, d, ns, seed=0):
    """(n', mean non-private length at n') for each n' (Section 7.5's targets)."""
    X_all, y_all, _ = load(d)
    return [(int(n), nonprivate_length(X_all, y_all, LOSS, n, c=C, alpha=ALPHA, seed=seed)) for n in ns]


def compute_overhead(ctx: Context):
    """Section 7.5, Figure 13: the private n whose mean interval length equals the non-private
    length at n' (d = 10, epsilon = 1 / rho = 0.5), on Adult and KDD Cup 99."""
    s = ctx.s
    notes = []
    datasets = [("adult", adult, len(adult(10)[0]))]
    kdd_ok, why = kddcup_available()
    if s.match_kdd:
        if kdd_ok:
            datasets.append(("kddcup", kddcup, s.match_kdd_max))
        else:
            notes.append(why)
            ctx.log(why)
    frames, curves = [], []
    for name, load, n_max in datasets:
        targets = nonprivate_targets(load, 10, s.match_nonprivate_ns)
        ctx.log(f"7.5 {name}: non-private lengths " + ", ".join(f"{n:,}: {L:.4g}" for n, L in targets))
        f, cv = _match(ctx, load, 10, targets, s.match_step, n_max, METHODS, s.match_k, random_state=s.seed + 5)
        frames.append(f.assign(dataset=name))
        curves.append(cv.assign(dataset=name))
    return pd.concat(frames, ignore_index=True), {"curve": pd.concat(curves, ignore_index=True)}, notes


def report_overhead(result: ExperimentResult, s: Settings):
    frame, curve = result.frame, result.tables["curve"]
    for name, g in frame.groupby("dataset", sort=False):
        nmax = int(g["n_max"].iloc[0])
        result.figures[f"7.5-{name}"] = sample_size_plot(
            g,
            title=f"Figure 13 ({name}): private n with the mean length of the non-private interval at n'; d = 10, "
            f"epsilon = 1 (rho = 0.5), k = {s.match_k:,}; missing points need n > {nmax:,}",
        )

    # assertions
    reached = frame.dropna(subset=["n_private"])
    result.checks.append(
        Check(
            "7.5",
            "privacy costs samples: every reached private n exceeds n'",
            bool((reached["n_private"] > reached["n_nonprivate"]).all()),
            f"{len(reached)} of {len(frame)} targets reached within the data; ratio n/n' from "
            f"{(reached['n_private'] / reached['n_nonprivate']).min():.1f} to "
            f"{(reached['n_private'] / reached['n_nonprivate']).max():.1f}"
            if len(reached)
            else "no target reached",
        )
    )
    bad = []
    for name, g in curve.groupby(["dataset", "mechanism", "privacy"]):
        c2 = g.sort_values("n")
        L, se = c2["length"].to_numpy(), c2["length_se"].to_numpy()
        if not np.all(np.diff(L) < 3 * np.hypot(se[1:], se[:-1])):
            bad.append("/".join(name))
    result.checks.append(
        Check(
            "7.5",
            "private length decreases along the n lattice (bisection is exact)",
            not bad,
            "monotone for every dataset and method" if not bad else "not monotone: " + ", ".join(bad),
        )
    )
    for dataset, g in frame.groupby("dataset", sort=False):
        nz = g.set_index(["mechanism", "privacy", "n_nonprivate"])["n_private"].fillna(np.inf).sort_index()
        for mechanism in registry.PAPER:
            zc, pu = nz.xs((mechanism, "zcdp")), nz.xs((mechanism, "pure"))
            result.checks.append(
                Check(
                    "7.5",
                    f"{dataset}: zCDP needs no more samples than pure DP ({mechanism} perturbation)",
                    bool((zc <= pu).all()),
                    _pairs_text("pure, zCDP", pu, zc),
                )
            )
        # paper claims
        for claim, first, second, names in (
            (
                "under pure DP objective perturbation needs fewer samples than output",
                ("objective", "pure"),
                ("output", "pure"),
                "objective, output",
            ),
            (
                "zCDP + output slightly better than zCDP + objective",
                ("output", "zcdp"),
                ("objective", "zcdp"),
                "output, objective",
            ),
        ):
            a, b = nz.xs(first), nz.xs(second)
            both = np.isfinite(a) | np.isfinite(b)
            result.checks.append(
                Check(
                    "7.5",
                    f"{dataset}: {claim}",
                    bool((a[both] <= b[both]).all() and both.any()),
                    _pairs_text(names, a, b),
                    kind="paper",
                )
            )


def _pairs_text(names, first, second):
    """A check's detail: each n' with the private n of the two methods (n/a where no n reaches the target)."""
    return f"n' -> ({names}): " + "; ".join(f"{int(a):,}: ({fmt_n(first[a])}, {fmt_n(second[a])})" for a in first.index)
