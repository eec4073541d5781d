"""Reproduce the experiments of Section 7 of Wang, Kifer & Lee and check the paper's claims.

``python -m dpci reproduce --out docs/ [--quick] [--jobs N] [--only 7.3,7.6]`` runs one
function per experiment:

* :func:`allocation` -- Section 7.3, Figures 1-8 and Table 2 (budget split);
* :func:`sample_complexity` -- Section 7.4, Figures 9-12 (coverage / length heatmaps);
* :func:`overhead` -- Section 7.5, Figure 13 (private n matching the non-private length);
* :func:`intervals_vs_variability` -- Section 7.6, Figures 14-16;
* :func:`curve_fits` -- Section 7.7, Figures 17-19;
* :func:`runtime` -- Section 7.8, Table 3.

Each returns an :class:`ExperimentResult` -- ``frame, figures, checks = result`` -- where
``checks`` are named qualitative claims evaluated on the data. A check is either an
**assertion** (a claim our implementation must reproduce robustly; the margins are a few Monte
Carlo standard errors, and a failed assertion makes the command exit non-zero) or a **paper
claim** (the paper's statement compared with our numbers; agreeing or differing is a finding,
not an error). :func:`run` runs the experiments, writes a CSV and standalone Plotly HTML per
figure to ``<out>/figures/`` (``<out>/figures/quick/`` in quick mode, so a quick run never
overwrites the full results) and merges a ``summary.json`` there (so ``--only`` reruns one part).

Everything is seeded: a rerun with the same settings gives the same numbers, whatever
``n_jobs`` (see :mod:`dpci.experiments.bootstrap`). Data: Adult from ``sample_data/`` and KDD Cup 99 (10%)
from ``../shared/data/`` (KDD parts are skipped with a message when it is absent); the paper's
IPUMS-US, IPUMS-BR and Banking data are not available here.

The package is laid out one module per concern, each Section 7 part holding its computation
(built on :mod:`dpci.experiments.sweeps`, which also skips the settings Algorithm 1 cannot run)
and its checks:

* :mod:`.settings` -- :class:`Settings`, :data:`FULL`, :data:`QUICK` and the shared constants;
* :mod:`.context` -- the run's :class:`Context`, cached data, :class:`Check` and result records,
  running a sweep with a log line per setting, and the files (CSV, HTML, summary.json, checks.md);
* :mod:`.split` (7.3), :mod:`.grids` (7.4), :mod:`.sample_size` (7.5), :mod:`.variability` (7.6),
  :mod:`.curves` (7.7), :mod:`.timing` (7.8);
* :mod:`.cli` -- :data:`SPECS`, :func:`run`, :func:`report` and the command line.
"""

from ..sweeps import ALL, METHODS
from .cli import (
    SPECS,
    add_arguments,
    allocation,
    cli_main,
    curve_fits,
    experiment,
    intervals_vs_variability,
    overhead,
    report,
    run,
    runtime,
    sample_complexity,
)
from .context import Check, Context, ExperimentResult, Report, kddcup_available, read_data
from .sample_size import match_sample_sizes, nonprivate_targets
from .settings import EXPERIMENTS, FULL, QUICK, Settings

__all__ = [
    "ALL",
    "EXPERIMENTS",
    "FULL",
    "METHODS",
    "QUICK",
    "SPECS",
    "Check",
    "Context",
    "ExperimentResult",
    "Report",
    "Settings",
    "add_arguments",
    "allocation",
    "cli_main",
    "curve_fits",
    "experiment",
    "intervals_vs_variability",
    "kddcup_available",
    "match_sample_sizes",
    "nonprivate_targets",
    "overhead",
    "read_data",
    "report",
    "run",
    "runtime",
    "sample_complexity",
]
