"""Running the experiments: one per Section 7 part (:data:`SPECS`), :func:`run` for a whole
reproduction with its files, and the ``python -m dpci reproduce`` command line."""

from __future__ import annotations

import sys
import time

from .context import (
    Check,
    Context,
    ExperimentResult,
    Report,
    figures_dir,
    log_to_stderr,
    read_data,
    write_data,
    write_result,
)
from .curves import compute_curve_fits, report_curve_fits
from .grids import compute_sample_complexity, report_sample_complexity
from .sample_size import compute_overhead, report_overhead
from .settings import EXPERIMENTS, FULL, QUICK, TITLES, Settings
from .split import compute_allocation, report_allocation
from .timing import compute_runtime, report_runtime
from .variability import compute_intervals_vs_variability, report_intervals_vs_variability

SPECS = {  # key: (title, compute(ctx) -> (frame, tables, notes), report(result, settings) fills figures/checks)
    "7.3": (TITLES["7.3"], compute_allocation, report_allocation),
    "7.4": (TITLES["7.4"], compute_sample_complexity, report_sample_complexity),
    "7.5": (TITLES["7.5"], compute_overhead, report_overhead),
    "7.6": (TITLES["7.6"], compute_intervals_vs_variability, report_intervals_vs_variability),
    "7.7": (TITLES["7.7"], compute_curve_fits, report_curve_fits),
    "7.8": (TITLES["7.8"], compute_runtime, report_runtime),
}


def report(result: ExperimentResult, settings: Settings, log=None) -> ExperimentResult:
    """Draw the figures and evaluate the checks of a computed experiment (an error in this step
    becomes a failed check, so it never loses the computed data)."""
    result.figures, result.checks = {}, []
    try:
        SPECS[result.key][2](result, settings)
    except Exception as err:  # noqa: BLE001 - keep the data, report the failure
        import traceback

        if log is not None:
            log(traceback.format_exc())
        result.checks.append(Check(result.key, "figures and checks evaluated", False, f"error: {err!r}"))
    return result


def _computed(key: str, ctx: Context) -> ExperimentResult:
    """Experiment ``key``'s data, not yet drawn or checked."""
    title, compute, _ = SPECS[key]
    t = time.perf_counter()
    frame, tables, notes = compute(ctx)
    result = ExperimentResult(key, title, frame, tables=dict(tables), notes=list(notes))
    result.wall_time = time.perf_counter() - t
    return result


def experiment(key: str, ctx: Context) -> ExperimentResult:
    """Compute experiment ``key`` and evaluate it."""
    return report(_computed(key, ctx), ctx.s, ctx._log)


def allocation(ctx: Context) -> ExperimentResult:
    """Section 7.3 (see :func:`.split.compute_allocation`)."""
    return experiment("7.3", ctx)


def sample_complexity(ctx: Context) -> ExperimentResult:
    """Section 7.4 (see :func:`.grids.compute_sample_complexity`)."""
    return experiment("7.4", ctx)


def overhead(ctx: Context) -> ExperimentResult:
    """Section 7.5 (see :func:`.sample_size.compute_overhead`)."""
    return experiment("7.5", ctx)


def intervals_vs_variability(ctx: Context) -> ExperimentResult:
    """Section 7.6 (see :func:`.variability.compute_intervals_vs_variability`)."""
    return experiment("7.6", ctx)


def curve_fits(ctx: Context) -> ExperimentResult:
    """Section 7.7 (see :func:`.curves.compute_curve_fits`)."""
    return experiment("7.7", ctx)


def runtime(ctx: Context) -> ExperimentResult:
    """Section 7.8 (see :func:`.timing.compute_runtime`)."""
    return experiment("7.8", ctx)


def run(
    out_dir="docs", quick=False, n_jobs=1, only=None, log=log_to_stderr, settings: Settings | None = None, replot=False
) -> Report:
    """Run the experiments (all, or the keys in ``only``), write their files, return a :class:`Report`.

    ``replot=True`` recomputes nothing: it reads the CSVs already in the output directory, redraws the
    figures and re-evaluates the checks (the wall times reported are those of the original run).
    """
    settings = settings or (QUICK if quick else FULL)
    keys = list(EXPERIMENTS) if not only else [k.strip() for k in only]
    unknown = [k for k in keys if k not in SPECS]
    if unknown:
        raise ValueError(f"unknown experiment(s) {', '.join(unknown)}; choose from {', '.join(EXPERIMENTS)}.")
    directory = figures_dir(out_dir, quick)
    ctx = Context(settings, n_jobs=n_jobs, log=log)
    if n_jobs != 1 and not replot:
        from ..bootstrap import warm_up_workers

        warm_up_workers(n_jobs)
    start = time.perf_counter()
    results = []
    for key in keys:
        ctx.log(f"--- {key} ({settings.name}{', replot' if replot else ''})")
        if replot:
            result = report(read_data(key, directory), settings, log)
        else:
            result = _computed(key, ctx)
            write_data(result, directory)  # the data are safe before anything is drawn or checked
            report(result, settings, log)
        write_result(result, directory, settings, n_jobs)
        ctx.log(f"--- {key} done in {result.wall_time:.1f} s")
        results.append(result)
    return Report(results, time.perf_counter() - start, directory)


# --------------------------------------------------------------------------- command line


def add_arguments(parser):
    """Arguments of ``python -m dpci reproduce``."""
    parser.add_argument(
        "--out", default="docs", help="directory; files go to OUT/figures/ (OUT/figures/quick/ with --quick)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="small grids for CI (< 5 min on 2 cores); asserts the claims"
    )
    parser.add_argument("--jobs", type=int, default=1, help="joblib workers (-1: all cores)")
    parser.add_argument("--only", default=None, help=f"comma-separated experiments among {','.join(EXPERIMENTS)}")
    parser.add_argument(
        "--replot",
        action="store_true",
        help="recompute nothing: redraw the figures and re-evaluate the checks from the CSVs in OUT",
    )


def cli_main(args) -> int:
    only = args.only.split(",") if args.only else None
    try:
        outcome = run(args.out, quick=args.quick, n_jobs=args.jobs, only=only, replot=args.replot)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(outcome.summary())
    if outcome.failed_assertions:
        print(f"{len(outcome.failed_assertions)} assertion(s) failed", file=sys.stderr)
        return 1
    return 0
