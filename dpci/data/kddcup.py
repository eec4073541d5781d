"""KDD Cup 1999 (10% subset): schema with public bounds, and loader.

Source: KDD Cup 1999 Data, UCI Machine Learning Repository,
doi:10.24432/C51C7N, CC BY 4.0. The 10% file ``kddcup.data_10_percent.gz``
(494,021 rows, 41 features and a label) is not shipped; it is read from the
shared data directory when present (argument ``path``, else the environment
variable ``DPCI_SHARED_DATA``, else ``<repository root>/../shared/data``).
The paper (Section 7.1, Table 1) uses the full 4,898,431-row file.

Label: "normal" -> -1, any attack -> +1 (the paper: "the goal is to
distinguish network attacks"). The raw attack type is kept in the column
``label`` of ``frame``; the binary target is the derived column ``attack``.

Public bounds
-------------
Feature definitions come from the KDD Cup 99 task description (Stolfo et al.).
Where the definition bounds a feature (indicators, rates in [0, 1]) that bound
is used. Where it does not (durations, byte and event counts), the bound is a
format or design choice recorded in each column's ``source``: traffic-window
counts are stored as 9-bit (``count``, ``srv_count``: 0..511) and 8-bit
(``dst_host_*count``: 0..255) counters in the published files; byte counts are
bounded by 2^32 - 1 and, like durations and event counts, scaled on a log1p
scale; larger values are clipped. None of the bounds is an observed maximum of
the data being analysed, which would leak information (ERRATA.md).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpci.data.dataset import Dataset, make_dataset
from dpci.data.paths import SHARED_DATA_ENV, shared_data_dir
from dpci.data.schema import Column, Schema, categorical, numeric

#: File name of the 10% subset.
KDDCUP_10_PERCENT = "kddcup.data_10_percent.gz"

#: Rows in the 10% subset.
KDDCUP_10_PERCENT_ROWS = 494_021

_TASK = "KDD Cup 99 task description (feature definition)"
_IND = "indicator (0/1) by the KDD Cup 99 task description"
_RATE = "a percentage of connections, [0, 1] by the KDD Cup 99 task description"


def _count(name: str, upper: float, why: str) -> Column:
    return numeric(name, 0, upper, source=why, log1p=True)


_EVENT = "event count; not bounded by the documentation, design bound 10,000 on a log1p scale"

#: The 70 service values of the full KDD Cup 99 data (the names file only says
#: "symbolic"); the 10% subset uses 66 of them.
KDDCUP_SERVICES = (
    "IRC",
    "X11",
    "Z39_50",
    "aol",
    "auth",
    "bgp",
    "courier",
    "csnet_ns",
    "ctf",
    "daytime",
    "discard",
    "domain",
    "domain_u",
    "echo",
    "eco_i",
    "ecr_i",
    "efs",
    "exec",
    "finger",
    "ftp",
    "ftp_data",
    "gopher",
    "harvest",
    "hostnames",
    "http",
    "http_2784",
    "http_443",
    "http_8001",
    "imap4",
    "iso_tsap",
    "klogin",
    "kshell",
    "ldap",
    "link",
    "login",
    "mtp",
    "name",
    "netbios_dgm",
    "netbios_ns",
    "netbios_ssn",
    "netstat",
    "nnsp",
    "nntp",
    "ntp_u",
    "other",
    "pm_dump",
    "pop_2",
    "pop_3",
    "printer",
    "private",
    "red_i",
    "remote_job",
    "rje",
    "shell",
    "smtp",
    "sql_net",
    "ssh",
    "sunrpc",
    "supdup",
    "systat",
    "telnet",
    "tftp_u",
    "tim_i",
    "time",
    "urh_i",
    "urp_i",
    "uucp",
    "uucp_path",
    "vmnet",
    "whois",
)

_RATES = "serror_rate srv_serror_rate rerror_rate srv_rerror_rate same_srv_rate diff_srv_rate srv_diff_host_rate"
_DST_HOST_RATES = (
    "dst_host_same_srv_rate dst_host_diff_srv_rate dst_host_same_src_port_rate dst_host_srv_diff_host_rate "
    "dst_host_serror_rate dst_host_srv_serror_rate dst_host_rerror_rate dst_host_srv_rerror_rate"
)


def _alike(make, names: str, *args, **kwargs) -> tuple[Column, ...]:
    """One column per name (``names`` separated by spaces, in file order), all made alike."""
    return tuple(make(name, *args, **kwargs) for name in names.split())


_FEATURES: tuple[Column, ...] = (
    _count("duration", 86_400, "seconds; design bound one day, log1p scale"),
    categorical("protocol_type", ("tcp", "udp", "icmp"), source=_TASK),
    categorical(
        "service",
        KDDCUP_SERVICES,
        source="the 70 network services of the published KDD Cup 99 data",
    ),
    categorical(
        "flag",
        ("SF", "S0", "S1", "S2", "S3", "OTH", "REJ", "RSTO", "RSTOS0", "RSTR", "SH"),
        source="the 11 connection status flags of the published KDD Cup 99 data",
    ),
    _count("src_bytes", 2**32 - 1, "bytes; 32-bit counter bound, log1p scale"),
    _count("dst_bytes", 2**32 - 1, "bytes; 32-bit counter bound, log1p scale"),
    numeric("land", 0, 1, source=_IND),
    *_alike(_count, "wrong_fragment urgent hot num_failed_logins", 10_000, _EVENT),
    numeric("logged_in", 0, 1, source=_IND),
    _count("num_compromised", 10_000, _EVENT),
    numeric("root_shell", 0, 1, source=_IND),
    numeric("su_attempted", 0, 1, source=_IND + " (the published data also has 2: clipped to 1)"),
    *_alike(_count, "num_root num_file_creations num_shells num_access_files num_outbound_cmds", 10_000, _EVENT),
    *_alike(numeric, "is_host_login is_guest_login", 0, 1, source=_IND),
    *_alike(
        numeric, "count srv_count", 0, 511, source="connections in the past 2 s; 9-bit counter in the published data"
    ),
    *_alike(numeric, _RATES, 0, 1, source=_RATE),
    *_alike(
        numeric,
        "dst_host_count dst_host_srv_count",
        0,
        255,
        source="host window count; 8-bit counter in the published data",
    ),
    *_alike(numeric, _DST_HOST_RATES, 0, 1, source=_RATE),
)

KDDCUP_SCHEMA = Schema(
    name="kddcup99",
    columns=_FEATURES,
    label="attack",
    positive_class="attack",
    negative_class="normal",
    source="KDD Cup 1999 Data, UCI, doi:10.24432/C51C7N, CC BY 4.0",
)

#: Column names of the raw file, in file order (41 features + raw label).
KDDCUP_COLUMNS = [c.name for c in _FEATURES] + ["label"]

_TEXT = ("protocol_type", "service", "flag")


def kddcup_path(path: str | os.PathLike | None = None, filename: str = KDDCUP_10_PERCENT) -> Path:
    """Locate a KDD Cup 99 file.

    Parameters
    ----------
    path : path-like, optional
        The file itself, or a directory holding ``filename``. Defaults to the
        shared data directory (``$DPCI_SHARED_DATA`` or ``../shared/data``).
    filename : str
        File name looked up in a directory.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        Naming the missing file and how to point the loader at it.
    """
    p = Path(path).expanduser() if path is not None else shared_data_dir() / filename
    if p.is_dir():
        p = p / filename
    if not p.is_file():
        raise FileNotFoundError(
            f"KDD Cup 99 file not found: {p}. It is not shipped with dpci; download "
            f"{filename} (UCI, doi:10.24432/C51C7N) and pass path=... or set "
            f"{SHARED_DATA_ENV} to its directory."
        )
    return p


def load_kddcup_frame(path: str | os.PathLike | None = None, nrows: int | None = None) -> pd.DataFrame:
    """Read the raw KDD Cup 99 file with explicit dtypes.

    Parameters
    ----------
    path : path-like, optional
        File or directory (see :func:`kddcup_path`).
    nrows : int, optional
        Read only the first ``nrows`` rows.

    Returns
    -------
    pandas.DataFrame
        The 41 feature columns (text columns as ``category``), ``label`` (the
        raw class without its trailing '.', category) and ``attack``
        ("normal" or "attack", category).
    """
    file = kddcup_path(path)
    dtypes = {c.name: ("category" if c.name in _TEXT else "float64") for c in _FEATURES}
    dtypes["label"] = "category"
    frame = pd.read_csv(
        file,
        header=None,
        names=KDDCUP_COLUMNS,
        dtype=dtypes,
        engine="c",
        nrows=nrows,
        na_filter=False,
    )
    label = frame["label"].cat.rename_categories(lambda s: str(s).rstrip("."))
    frame["label"] = label
    frame["attack"] = pd.Categorical(
        np.where(label.to_numpy() == "normal", "normal", "attack"), categories=["normal", "attack"]
    )
    return frame


def load_kddcup(
    path: str | os.PathLike | None = None,
    d: int | None = None,
    features: Sequence[str] | None = None,
    add_constant: bool = True,
    *,
    normalize: str = "unit",
    nrows: int | None = None,
    dtype=np.float64,
    keep_frame: bool = True,
) -> Dataset:
    """Load KDD Cup 99 (10% subset) preprocessed as in Section 7.1.

    Parameters
    ----------
    path : path-like, optional
        File or directory; default ``$DPCI_SHARED_DATA`` or ``../shared/data``
        relative to the repository root.
    d : int, optional
        Keep the first ``d`` features (before the constant). Order: the 38
        numeric columns in file order, then the one-hot blocks of
        protocol_type (3), service (70), flag (11): 122 features in all.
    features : sequence of str, optional
        Named subset instead of ``d``.
    add_constant : bool, default True
        Append the constant feature ``"const"``.
    normalize : {"unit", "project", "global"}, default "unit"
        Row normalisation (see :class:`UnitBallPreprocessor`).
    nrows : int, optional
        Read only the first ``nrows`` rows.
    dtype : numpy dtype, default float64
        ``float32`` halves the memory of ``X`` (about 0.5 GB in float64 for
        all 123 columns).
    keep_frame : bool, default True
        Keep the raw DataFrame in ``Dataset.frame``.

    Returns
    -------
    Dataset
        ``y`` = +1 for attacks, -1 for normal traffic.

    Raises
    ------
    FileNotFoundError
        If the file is absent (the message names it).
    """
    frame = load_kddcup_frame(path, nrows=nrows)
    return make_dataset(
        frame,
        KDDCUP_SCHEMA,
        name="kddcup99-10pct",
        d=d,
        features=features,
        add_constant=add_constant,
        normalize=normalize,
        dtype=dtype,
        keep_frame=keep_frame,
    )
