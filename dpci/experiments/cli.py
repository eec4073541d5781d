"""Command line: ``python -m dpci sweep NAME --dataset adult --out results.csv``.

Runs a named experiment of Section 7 on a named dataset (or ``--data FILE.csv --target COL
--bounds FILE.json``), writes the tidy CSV atomically and shows a progress bar on stderr.
Arguments and the output file are checked before any work; Ctrl-C or SIGTERM stops the sweep
and writes what finished, marked ``partial``; ``--scheduler`` sends the work to Dask.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from pathlib import Path

import numpy as np

from .. import methods as registry
from ..ledger_cli import add_arguments as _ledger_arguments
from ..ledger_cli import add_release_arguments, database_help, in_flags, open_ledger, read_data
from ..losses import loss_from_text
from ..spec import ReleaseSpec
from .bootstrap import iter_coverage, iter_variability
from .cli_io import (
    check_out,
    file_loader,
    int_at_least,
    open_unit,
    positive_float,
    scheduler,
    sigterm_as_interrupt,
    worker_count,
    write_atomically,
)
from .sample_size import iter_sample_size_match
from .sweeps import (
    METHODS,
    iter_grid_sweep,
    iter_interval_vs_variability,
    iter_split_sweep,
    recommend_split,
)

SWEEPS = (
    "split-phi1",
    "split-phi2",
    "grid-n-d",
    "grid-n-epsilon",
    "ci-vs-vi-n",
    "ci-vs-vi-d",
    "ci-vs-vi-epsilon",
    "sample-size",
    "coverage",
    "variability",
)
DATASETS = ("adult", "kddcup", "synthetic")


def dataset_loader(name: str, seed: int = 0):
    """A function d -> (X, y, feature_names) for a named dataset (d features plus the constant)."""
    from .. import data

    if name == "adult":
        return lambda d: _unpack(data.load_adult(d=d))
    if name == "kddcup":
        return lambda d: _unpack(data.load_kddcup(d=d))
    if name == "synthetic":

        def synthetic(d):
            d = d or 5
            theta = np.linspace(-1.5, 1.5, d + 1)
            X, y = data.make_synthetic_logistic(50_000, theta, random_state=seed)
            return X, y, [f"x{j}" for j in range(d)] + ["const"]

        return synthetic
    raise ValueError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}.")


def _unpack(ds):
    return ds.X, ds.y, list(ds.feature_names)


def _floats(text):
    return [float(v) for v in text.split(",")] if text else None


def _method_pairs(text):
    """'objective:pure,output:zcdp' -> (("objective", "pure"), ("output", "zcdp")), each checked."""
    pairs = []
    for item in text.split(","):
        name, _, notion = item.strip().partition(":")
        try:
            registry.get(name).check_notion(notion)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        pairs.append((name, notion))
    return tuple(pairs)


def _ints(text):
    return [int(float(v)) for v in text.split(",")] if text else None


class ProgressBar:
    """A progress bar on stderr (tqdm: rate, elapsed and remaining time), fed fractions of 0..1."""

    def __init__(self, stream=None, width=None):
        from tqdm import tqdm

        self._bar = tqdm(
            total=1.0,
            file=stream or sys.stderr,
            ncols=width,
            unit="run",
            dynamic_ncols=width is None,
            bar_format="{desc} {percentage:5.1f}% |{bar}| {elapsed}<{remaining}",
        )

    def update(self, fraction, label=""):
        self._bar.n = min(max(fraction, 0.0), 1.0)
        self._bar.set_description_str(label[:60], refresh=False)
        self._bar.refresh()

    def close(self):
        self._bar.close()


def _sweep_fraction(p):
    inner = p.replicates_done / p.replicates_total if p.replicates_total else 0.0
    return (p.settings_done + inner) / max(p.settings_total, 1)


HELP = """\
Differentially private confidence intervals from the command line.

  dpci release --data people.csv --target label --bounds facts.json --epsilon 1
      one private release from your CSV (or .csv.gz), charged to the privacy ledger
  dpci sweep coverage --dataset adult --out results.csv
      an experiment of the paper's Section 7, written as a CSV (--data FILE for your own)
  dpci ledger list
      every dataset on the ledger: its budget, what it spent, in how many releases

The ledger is a database the app shares; without --database it is made on first use at
  {ledger}
with its secret key beside it, both readable by you alone. Each command has its own --help.
"""


def build_parser():
    # the installed `dpci` command and `python -m dpci` are the same program; usage names the one typed
    prog = "dpci" if Path(sys.argv[0]).name == "dpci" else "python -m dpci"
    from ..ledger.config import database_url

    help_text = HELP.format(ledger=database_url().removeprefix("sqlite:///"))
    parser = argparse.ArgumentParser(
        prog=prog, description=help_text, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sw = sub.add_parser("sweep", help="run a named experiment and write a CSV")
    sw.add_argument("name", choices=SWEEPS)
    sw.add_argument("--dataset", choices=DATASETS, default="adult")
    sw.add_argument("--data", default=None, help="your own CSV file instead of --dataset (with --target)")
    sw.add_argument("--target", default=None, help="the label column of --data (two values)")
    sw.add_argument("--database", default=None, help="the ledger a sweep on --data is noted in: " + database_help())
    sw.add_argument("--positive", default=None, help="the label of --target taken as +1")
    sw.add_argument(
        "--bounds",
        default=None,
        help='public bounds of the numeric columns of --data, a JSON file {"age": [17, 90], ...}; '
        "without it the data's own range is used and the result is NOT private",
    )
    sw.add_argument("--out", required=True, help="CSV file to write (checked before any work)")
    sw.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    sw.add_argument("--scheduler", default=None, help="address of a Dask distributed scheduler to run on")
    sw.add_argument("--loss", default="logistic", help="a registered loss (dpci.losses.LOSSES): logistic, huber, ...")
    sw.add_argument("--h", type=positive_float, default=None, help="Huber width (default 0.5; --loss huber)")
    sw.add_argument(
        "--loss-param", action="append", default=[], metavar="NAME=VALUE", help="a parameter of the loss (repeatable)"
    )
    sw.add_argument(
        "--mechanism",
        "--method",
        dest="mechanism",
        choices=registry.available(),
        default="objective",
        help="a registered method (dpci.methods.available())",
    )
    sw.add_argument("--privacy", choices=("pure", "zcdp"), default="pure")
    sw.add_argument(
        "--methods",
        type=_method_pairs,
        default=None,
        help="methods of grid, comparison and sample-size sweeps, as NAME:NOTION,... "
        "(default: the paper's four, objective:pure,output:pure,objective:zcdp,output:zcdp)",
    )
    sw.add_argument(
        "--budget", type=positive_float, default=None, help="epsilon (pure) or rho (zcdp); default 1 or 0.5"
    )
    sw.add_argument(
        "--epsilon",
        type=positive_float,
        default=1.0,
        help="epsilon of grid and comparison sweeps (zCDP methods: rho = eps^2/2, or see --equal-delta)",
    )
    sw.add_argument(
        "--equal-delta",
        type=open_unit,
        default=None,
        help="compare zCDP methods with epsilon-DP at equal (epsilon, delta) with this delta (grid and "
        "comparison sweeps) instead of the paper's rho = eps^2/2, a weaker guarantee",
    )
    sw.add_argument("--c", type=positive_float, default=1e-3)
    sw.add_argument("--alpha", type=open_unit, default=0.05)
    sw.add_argument("--d", type=int_at_least(1), default=10, help="features before the constant")
    sw.add_argument("--n", type=int_at_least(100), default=15_000, help="rows, where the sweep fixes n")
    sw.add_argument("--values", default=None, help="comma-separated values of the swept quantity")
    sw.add_argument("--ns", default="500,1000,2000,4000,8000,15000", help="comma-separated n values of grid sweeps")
    sw.add_argument("--replicates", type=int_at_least(1), default=1_000, help="k: private intervals per setting")
    sw.add_argument("--samples", type=int_at_least(100), default=10_000, help="m: Monte Carlo samples per interval")
    sw.add_argument(
        "--vi-replicates", type=int_at_least(1), default=10_000, help="bootstrap replicates of variability intervals"
    )
    sw.add_argument("--jobs", type=worker_count, default=1, help="worker processes (-1: all cores)")
    sw.add_argument("--seed", type=int_at_least(0), default=0)
    from .reproduce import add_arguments as _reproduce_arguments

    _reproduce_arguments(
        sub.add_parser("reproduce", help="rerun Section 7 and write docs/figures (see dpci.experiments.reproduce)")
    )

    _ledger_arguments(sub.add_parser("ledger", help="the privacy ledger: list, history, set-budget, reset"))
    add_release_arguments(sub.add_parser("release", help="one private release from a CSV, through the ledger"))
    return parser


def run_sweep(args, bar=None, load=None):
    """Run the sweep described by parsed ``args``; return the tidy DataFrame."""
    frame = None
    for frame in iter_sweep(args, bar, load):
        pass
    return frame


def _loader(args):
    if args.data:
        if not args.target:
            raise ValueError("--data needs --target, the name of its label column.")
        return file_loader(args.data, args.target, args.bounds, args.positive)
    return dataset_loader(args.dataset, args.seed)


def iter_sweep(args, bar=None, load=None):
    """Yield the tidy DataFrame of what has finished so far, after every chunk; the last is complete."""
    loss = loss_from_text(args.loss, args.loss_param, h=args.h)
    load = load or _loader(args)
    budget = args.budget if args.budget is not None else (1.0 if args.privacy == "pure" else 0.5)
    common = dict(random_state=args.seed, n_jobs=args.jobs)
    method = dict(mechanism=args.mechanism, privacy=args.privacy, budget=budget)
    base = ReleaseSpec(loss=loss, c=args.c, alpha=args.alpha, n_samples=args.samples)  # what every setting shares
    bar = bar or ProgressBar()
    name = args.name
    if name in ("coverage", "variability") or name.startswith("split-"):  # one method, notion and budget
        spec = base.replace(method=args.mechanism, privacy=args.privacy, budget=budget, split=None)
    if name in ("coverage", "variability"):
        X, y, names = load(args.d)
        if name == "coverage":
            gen = iter_coverage(X, y, spec, n_replicates=args.replicates, **common)
        else:
            gen = iter_variability(X, y, spec, n_replicates=args.vi_replicates, **common)
        for p in gen:
            bar.update(p.done / p.total, f"{name}: {p.done}/{p.total} replicates")
            yield p.to_frame(names).assign(sweep=name, **method, n=len(X), d=X.shape[1] - 1)
        bar.close()
        return
    sweep_kw = dict(common, n_replicates=args.replicates)
    pairs = dict(methods=args.methods) if args.methods else {}
    if name.startswith("split-"):
        X, y, names = load(args.d)
        gen = iter_split_sweep(
            X, y, spec, vary=name.split("-")[1], shares=_floats(args.values), feature_names=names, **sweep_kw
        )
    elif name.startswith("grid-"):
        axis = name.split("-")[-1]
        values = _ints(args.values) if axis == "d" else _floats(args.values)
        values = values or ([1, 2, 5, 10] if axis == "d" else [0.2, 0.5, 1.0, 2.0, 4.0])
        gen = iter_grid_sweep(
            load,
            base,
            ns=_ints(args.ns),
            d=args.d,
            epsilon=args.epsilon,
            **{"ds" if axis == "d" else "epsilons": values},
            **pairs,
            **sweep_kw,
            delta=args.equal_delta,
        )
    elif name.startswith("ci-vs-vi-"):
        over = name.split("-")[-1]
        defaults = {"n": "1000,2000,5000,10000,20000", "d": "1,2,5,10", "epsilon": "0.2,0.5,1,2,4"}
        values = (_ints if over != "epsilon" else _floats)(args.values or defaults[over])
        gen = iter_interval_vs_variability(
            load,
            base,
            over,
            values,
            n=args.n,
            d=args.d,
            epsilon=args.epsilon,
            n_vi=args.vi_replicates,
            **pairs,
            **sweep_kw,
            delta=args.equal_delta,
        )
    else:  # sample-size
        values = _ints(args.values or "1000,2500,5000,7500,10000")
        gen = iter_sample_size_match(load, base, values, d=args.d, epsilon=args.epsilon, **pairs, **sweep_kw)
    for p in gen:
        label = "" if p.current is None else f"{p.current.get('mechanism')}/{p.current.get('privacy')}"
        bar.update(
            _sweep_fraction(p),
            f"{name}: setting {min(p.settings_done + 1, p.settings_total)}/{p.settings_total} {label}",
        )
        yield p.frame
    bar.close()


@contextlib.contextmanager
def _file_on_the_ledger(args):
    """For a sweep on the user's own file (``--data``): the ledger (``--database``, else the app's) watches it,
    the file's table met as a release would meet it, and the sweep itself is noted as not private (it
    draws its noise from public seeds and writes the file's exact fit)."""
    if not args.data:
        yield None
        return
    from ..data import guess_separator, upload_table

    raw = read_data(args.data)
    ledger = open_ledger(args.database)
    match = ledger.match_table(upload_table(raw, sep=guess_separator(raw)), f"your upload {Path(args.data).name}")
    if match.why:
        print(f"note: {match.why}.", file=sys.stderr)
    spec = dict(function="sweep", sweep=args.name, file=Path(args.data).name, target=args.target, seed=args.seed)
    ledger.note(match.key, what=f"sweep {args.name} on the file (public seeds, exact fit: not private)", spec=spec)
    with ledger.watching(dataset=match.key, session="command line") as watch:
        yield watch


def main(argv=None):
    args = build_parser().parse_args(argv)  # bad arguments end here (exit 2), before any work
    if args.command == "reproduce":
        from .reproduce import cli_main

        return cli_main(args)
    if args.command == "ledger":
        from ..ledger_cli import main as ledger_main

        return ledger_main(args)
    if args.command == "release":
        from ..ledger_cli import release_main

        return release_main(args)
    last, partial = None, False
    try:
        out = check_out(args.out, args.force)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # a PrivacyLeakWarning (bounds from the data) is shown every time
            load = _loader(args)
        for warning in caught:
            print(f"warning: {in_flags(warning.message)}", file=sys.stderr)
        if args.scheduler and args.jobs == 1:
            args.jobs = -1  # one chunk at a time would leave the cluster idle
        frames = iter_sweep(args, load=load)
        with sigterm_as_interrupt(), scheduler(args.scheduler), _file_on_the_ledger(args):
            try:
                for last in frames:
                    pass
            except KeyboardInterrupt:
                partial = True
                frames.close()  # stops between chunks and releases the workers
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {in_flags(err)}", file=sys.stderr)
        return 2
    if last is None or last.empty:
        print("stopped before any result; nothing written", file=sys.stderr)
        return 130 if partial else 2
    frame = last.assign(partial=partial)
    if args.data:  # the fit on the user's own rows, exact: name it for what it is
        frame = frame.rename(columns={"theta0": "theta0_nonprivate"})
        print(
            f"not private: the sweep ran on {Path(args.data).name}'s rows with public seeds, and theta0_nonprivate is "
            "the exact fit of those rows; the ledger records it as not private (dpci ledger list)",
            file=sys.stderr,
        )
    write_atomically(frame, out)
    if partial:
        print(f"stopped: wrote the {len(frame)} rows that finished to {out} (marked partial)", file=sys.stderr)
        return 130
    print(f"wrote {len(frame)} rows to {out}", file=sys.stderr)
    if args.name.startswith("split-"):
        best = recommend_split(frame, args.alpha)
        print(
            f"recommended split: phi = ({best['phi1']:.3g}, {best['phi2']:.3g}, {best['phi3']:.3g}), "
            f"coverage {best['coverage']:.3f}, mean length {best['length']:.4g}"
            + ("" if best["meets_coverage"] else " (no split reached 1 - alpha)"),
            file=sys.stderr,
        )
    return 0


__all__ = ["METHODS", "dataset_loader", "main", "run_sweep"]
