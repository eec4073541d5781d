"""What the command line needs around a sweep: argument types with ranges, the output file
checked before any work and written atomically, user data with public bounds, a Dask
scheduler, and SIGTERM handled like Ctrl-C (so what finished is kept)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import tempfile
from pathlib import Path


def int_at_least(least: int):
    """An argparse type: an integer >= ``least``."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least:,}, got {value}")
        return value

    return parse


def positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def open_unit(text):
    value = positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text}")
    return value


def worker_count(text):
    value = int_at_least(-64)(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be a positive number of workers, or -1 for all cores")
    return value


def check_out(path: str, force: bool) -> Path:
    """The output file, checked before any work: its folder exists and is writable, it is not a
    folder, and it is not overwritten without ``force``. ValueError says what to change."""
    out = Path(path)
    if out.is_dir():
        raise ValueError(f"--out {path} is a folder; give a file name, e.g. {out / 'results.csv'}.")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"the folder {folder} of --out does not exist; create it first (mkdir -p {folder}).")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"the folder {folder} of --out is not writable.")
    if out.exists() and not force:
        raise ValueError(f"{path} exists; pass --force to overwrite it, or choose another --out.")
    return out


def write_atomically(frame, out: Path) -> None:
    """Write the CSV to a temporary file beside ``out``, then rename it over ``out``: a reader (or a
    crash) never sees a half-written file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent if str(out.parent) else ".")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            frame.to_csv(f, index=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def file_loader(path: str, target: str, bounds_path: str | None, positive: str | None = None):
    """d -> (X, y, feature names) for a user's CSV with public bounds (a JSON object
    ``{"column": [lower, upper], ...}``); without bounds the data's own range is used and
    dpci warns that the result is not private (PrivacyLeakWarning)."""
    from ..data import guess_separator, read_uploaded_csv
    from ..ledger_cli import read_data

    data = read_data(path)  # a .csv.gz too
    bounds = None
    if bounds_path:
        try:
            bounds = json.loads(Path(bounds_path).read_text())
        except OSError as err:
            raise ValueError(f"--bounds {bounds_path}: {err.strerror}.") from None
        except json.JSONDecodeError as err:
            raise ValueError(
                f'--bounds {bounds_path} is not JSON ({err.msg}, line {err.lineno}); write {{"age": [17, 90], ...}}.'
            ) from None
        if not isinstance(bounds, dict):
            raise ValueError(f'--bounds {bounds_path} must hold one JSON object, {{"age": [17, 90], ...}}.')
    categories = None
    if bounds and {"bounds", "categories", "labels"} & set(bounds):  # dpci release's form of the public facts
        bounds, categories = bounds.get("bounds"), bounds.get("categories")
    result = read_uploaded_csv(
        data, target, positive_class=positive, bounds=bounds, categories=categories, sep=guess_separator(data)
    )
    width = len(result.schema.feature_names())

    def load(d):
        ds = result.to_dataset(d=min(int(d), width))
        return ds.X, ds.y, list(ds.feature_names)

    return load


@contextlib.contextmanager
def scheduler(address: str | None):
    """Send the bootstrap's chunks to a Dask distributed scheduler (:func:`.cluster.on_scheduler`, which
    says what to do when Dask is missing or the scheduler cannot be reached); the client goes at the end."""
    if not address:
        yield
        return
    from . import cluster

    try:
        with cluster.on_scheduler(address):
            yield
    finally:
        cluster.close_clients()


@contextlib.contextmanager
def sigterm_as_interrupt():
    """SIGTERM raises KeyboardInterrupt in the main thread, as Ctrl-C does, so the sweep stops
    between chunks, its workers are released and what finished is written."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: nothing to install
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
