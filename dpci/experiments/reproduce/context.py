"""What every part of the reproduction shares: the run's context (settings, workers, logging),
the cached datasets, the :class:`Check` records and results, running a sweep cell by cell with a
log line per setting, and the files of a run (CSV, standalone HTML figures, ``summary.json`` and
``checks.md``)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ... import methods as registry
from ...spec import ReleaseSpec
from ..sweeps import ALL, run_keywords
from .settings import ALPHA, EXPERIMENTS, LOSS, TITLES, C, Settings

# --------------------------------------------------------------------------- results


@dataclass
class Check:
    """A named claim evaluated on the data.

    ``kind`` is ``"assertion"`` (must hold; failing fails the run) or ``"paper"`` (the paper's
    statement beside ours: ``passed`` means "agrees").
    """

    experiment: str
    name: str
    passed: bool
    detail: str
    kind: str = "assertion"

    def line(self) -> str:
        if self.kind == "assertion":
            mark = "PASS" if self.passed else "FAIL"
        else:
            mark = "agrees" if self.passed else "differs"
        return f"[{self.experiment}] {mark:7s} {self.name}: {self.detail}"


@dataclass
class ExperimentResult:
    """What one experiment returns; unpacks as ``frame, figures, checks``."""

    key: str
    title: str
    frame: pd.DataFrame
    figures: dict = field(default_factory=dict)
    checks: list = field(default_factory=list)
    tables: dict = field(default_factory=dict)  # name -> DataFrame (small summaries for the report)
    notes: list = field(default_factory=list)
    wall_time: float = 0.0
    replotted: bool = False  # read back from CSVs (then summary.json keeps the original run's details)

    def __iter__(self):
        return iter((self.frame, self.figures, self.checks))


class Context:
    """Shared state of a run: settings, workers, logging, cached data."""

    def __init__(self, settings: Settings, n_jobs: int = 1, log: Callable[[str], None] | None = None):
        self.s = settings
        self.n_jobs = n_jobs
        self._log = log
        self.start = time.perf_counter()

    @property
    def spec(self) -> ReleaseSpec:
        """What every sweep of the reproduction shares: the paper's loss, c and alpha and the profile's m
        (each setting replaces the method, notion, budget and split)."""
        return ReleaseSpec(loss=LOSS, c=C, alpha=ALPHA, n_samples=self.s.m)

    def sweep_run(self, k: int, random_state) -> dict:
        """How every sweep of the reproduction runs, as the sweeps' keywords: k replicates, the seed and
        the workers (:func:`~dpci.experiments.sweeps.run_keywords`)."""
        return run_keywords(k, random_state, self.n_jobs)

    def log(self, text: str):
        if self._log is not None:
            self._log(f"[{time.perf_counter() - self.start:8.1f}s] {text}")


def log_to_stderr(text: str):
    print(text, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- data


@lru_cache(maxsize=16)
def adult(d: int):
    """(X, y, feature_names) of Adult with the first d features (public-bounds scaling)."""
    from ...data import load_adult

    ds = load_adult(d=d)
    return ds.X, ds.y, list(ds.feature_names)


@lru_cache(maxsize=2)
def adult_paper_scaling_d1():
    """Adult, d = 1, scaled as Section 7.1 says: age divided by its *observed* maximum (so in
    [0.19, 1]), the constant added, each row divided by its norm. NOT private (ERRATA); used
    only to test whether the paper's preprocessing explains a difference."""
    from ...data import load_adult, load_adult_frame

    age = load_adult_frame()["age"].to_numpy(dtype=float)
    X = np.column_stack([age / age.max(), np.ones_like(age)])
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, load_adult(d=1).y, ["age (observed-max scaling)", "const"]


@lru_cache(maxsize=4)
def kddcup(d: int):
    """(X, y, feature_names) of KDD Cup 99 (10%) with the first d features."""
    from ...data import load_kddcup

    ds = load_kddcup(d=d, keep_frame=False)
    return ds.X, ds.y, list(ds.feature_names)


def kddcup_available() -> tuple[bool, str]:
    from ...data import kddcup_path

    try:
        path = kddcup_path()
    except FileNotFoundError as err:
        return False, f"KDD Cup 99 parts skipped: {err}"
    return path.exists(), f"KDD Cup 99 parts skipped: {path} not found."


# --------------------------------------------------------------------------- helpers


def overall(frame: pd.DataFrame) -> pd.DataFrame:
    """The "(all)" rows: coverage and length averaged over coordinates (Section 7.2)."""
    return frame[frame["feature"] == ALL].reset_index(drop=True)


def run_cells(ctx: Context, sweep: Iterator, label: Callable[[int, pd.Series], str]) -> pd.DataFrame:
    """Run a sweep (a generator of SweepProgress started with ``skip_invalid=True``) to the end, logging
    each setting as it finishes (``label(i, row)`` names the i-th). Returns the "(all)" row of every
    setting, with ``note`` "undefined: why" for a setting the algorithm cannot run (objective
    perturbation needs c > t / (2n(e^eps1 - 1)), Algorithm 1) and "" for the others."""
    t, logged, last = time.perf_counter(), 0, None
    for last in sweep:
        if last.settings_done == logged:
            continue
        rows = overall(last.frame)
        for i in range(logged, last.settings_done):
            r = rows.iloc[i]
            if r["skipped"]:
                ctx.log(f"{label(i, r)}: undefined ({r['skipped']})")
            else:
                vi = f", VI {r['vi_length']:.4g}" if "vi_length" in rows else ""
                ctx.log(
                    f"{label(i, r)}: coverage {r['coverage']:.3f} +/- {r['coverage_se']:.3f}, length "
                    f"{r['length']:.4g} +/- {r['length_se']:.2g}{vi} ({time.perf_counter() - t:.1f} s)"
                )
            t = time.perf_counter()
        logged = last.settings_done
    assert last is not None, "a sweep yields at least its final state"
    frame = overall(last.frame)
    frame["note"] = [f"undefined: {why}" if why else "" for why in frame.pop("skipped")]
    return frame


def method_rows(frame, mechanism, privacy):
    return frame[(frame["mechanism"] == mechanism) & (frame["privacy"] == privacy)]


def row_where(frame, **where):
    sel = frame
    for key, val in where.items():
        sel = sel[np.isclose(sel[key], val)] if isinstance(val, float) else sel[sel[key] == val]
    if len(sel) != 1:
        raise KeyError(f"{len(sel)} rows match {where}")
    return sel.iloc[0]


def fmt_n(n) -> str:
    return "n/a" if n is None or (isinstance(n, float) and not np.isfinite(n)) else f"{int(n):,}"


def short(mechanism, privacy):
    name = registry.get(mechanism).short[:3] if mechanism in registry.available() else mechanism
    return f"{name}+{'DP' if privacy == 'pure' else 'zCDP'}"


# --------------------------------------------------------------------------- files


def figures_dir(out_dir, quick: bool) -> Path:
    path = Path(out_dir) / "figures"
    return path / "quick" if quick else path


def _json_default(obj):
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return None if not np.isfinite(obj) else float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (tuple, set)):
        return list(obj)
    raise TypeError(type(obj))


def write_data(result: ExperimentResult, directory: Path):
    """The experiment's CSV(s): the "(all)" rows of every setting, and small tables."""
    directory.mkdir(parents=True, exist_ok=True)
    result.frame.to_csv(directory / f"{result.key}.csv", index=False, float_format="%.6g")
    for name, table in result.tables.items():
        table.to_csv(directory / f"{result.key}-{name}.csv", index=False, float_format="%.6g")


def read_data(key: str, directory: Path) -> ExperimentResult:
    """An experiment's data as written by :func:`write_data` (to redraw and re-check without rerunning)."""
    directory = Path(directory)
    frame = pd.read_csv(directory / f"{key}.csv", keep_default_na=True)
    tables = {p.stem[len(key) + 1 :]: pd.read_csv(p) for p in sorted(directory.glob(f"{key}-*.csv"))}
    summary_path = directory / "summary.json"
    entry = json.loads(summary_path.read_text()).get(key, {}) if summary_path.exists() else {}
    tables = {k: v for k, v in tables.items() if k in entry.get("tables", list(tables))}
    result = ExperimentResult(key, TITLES[key], frame, tables=tables, notes=entry.get("notes", []))
    result.wall_time = entry.get("wall_time_s", 0.0)
    result.replotted = True
    return result


def write_result(result: ExperimentResult, directory: Path, settings: Settings, n_jobs: int):
    """Write the experiment's CSV(s), HTML figures and its entry of summary.json."""
    write_data(result, directory)
    files = []
    for name, fig in result.figures.items():
        # include_plotlyjs="cdn": each file stays small (tens of kB) and standalone except for
        # plotly.js, which the browser loads from the CDN.
        fig.write_html(directory / f"{name}.html", include_plotlyjs="cdn", full_html=True)
        files.append(f"{name}.html")
    summary_path = directory / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    entry = {
        "title": result.title,
        "wall_time_s": round(result.wall_time, 1),
        "settings": settings.name,
        "n_jobs": n_jobs,
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
        "figures": files,
        "notes": result.notes,
        "tables": sorted(result.tables),
        "checks": [asdict(c) for c in result.checks],
    }
    if result.replotted and result.key in summary:
        old = summary[result.key]
        entry.update({k: old[k] for k in ("settings", "n_jobs", "finished") if k in old})
        entry["replotted"] = time.strftime("%Y-%m-%d %H:%M:%S")
    summary[result.key] = entry
    summary.setdefault("settings", {})[settings.name] = asdict(settings)
    summary_path.write_text(json.dumps(summary, indent=1, default=_json_default))
    write_checks_markdown(directory)


def write_checks_markdown(directory: Path):
    """``checks.md``: every check of every experiment in summary.json, as one Markdown table."""
    summary = json.loads((Path(directory) / "summary.json").read_text())
    lines = [
        "# Checks of the last run (generated by `python -m dpci reproduce`; do not edit)",
        "",
        "| exp. | kind | claim | verdict | our numbers |",
        "|---|---|---|---|---|",
    ]
    for key in EXPERIMENTS:
        entry = summary.get(key)
        if not entry:
            continue
        for c in entry["checks"]:
            if c["kind"] == "assertion":
                verdict = "PASS" if c["passed"] else "**FAIL**"
            else:
                verdict = "agrees" if c["passed"] else "**differs**"
            detail = c["detail"].replace("|", "/")
            lines.append(f"| {key} | {c['kind']} | {c['name']} | {verdict} | {detail} |")
    lines.append("")
    lines += [
        f"- {key}: {summary[key]['settings']} settings, {summary[key]['wall_time_s']:,} s, finished "
        f"{summary[key]['finished']}"
        for key in EXPERIMENTS
        if key in summary
    ]
    (Path(directory) / "checks.md").write_text("\n".join(lines) + "\n")


@dataclass
class Report:
    results: list
    wall_time: float
    directory: Path

    @property
    def checks(self) -> list:
        return [c for r in self.results for c in r.checks]

    @property
    def failed_assertions(self) -> list:
        return [c for c in self.checks if c.kind == "assertion" and not c.passed]

    def summary(self) -> str:
        lines = []
        for r in self.results:
            lines.append(f"== {r.key} {r.title} ({r.wall_time:.1f} s)")
            lines += [f"   note: {n}" for n in r.notes]
            lines += ["   " + c.line() for c in r.checks]
        n_assert = sum(c.kind == "assertion" for c in self.checks)
        n_paper = [c for c in self.checks if c.kind == "paper"]
        lines.append(
            f"assertions: {n_assert - len(self.failed_assertions)}/{n_assert} pass; paper claims: "
            f"{sum(c.passed for c in n_paper)}/{len(n_paper)} agree; wall time {self.wall_time:.1f} s; "
            f"files in {self.directory}"
        )
        return "\n".join(lines)
