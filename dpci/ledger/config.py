"""Where the ledger lives and what it is keyed with: the data directory, the database URL, the server
secret, default budgets, and the keyed hash that names a dataset.

Read from the environment (``DPCI_DATABASE_URL``, ``DPCI_DATA_DIR``, ``DPCI_SECRET``, ``DPCI_BUDGET``,
``DPCI_DEMO_BUDGET``); the app also passes what Streamlit's ``secrets.toml`` says under
``[connections.dpci]`` (``url``) and ``[dpci]`` (the other keys). Whoever runs the server sets these;
nothing in a page can.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .filter import Budget

# Real data: pure epsilon = 3. As a zCDP filter, (3, 1e-6)-DP is rho = 0.185, below what the app's default
# releases cost (epsilon = 1 by objective perturbation: rho = 0.24 counted step by step; rho = 0.5), so
# a budget that admits both notions there is one the operator states (DPCI_BUDGET="rho=0.5,delta=1e-6").
DEFAULT_BUDGET = "epsilon=3"
# Practice data: a zCDP filter stated as (10, 1e-6)-DP, so both notions are counted (a pure release
# epsilon_j^2 / 2 per step, Proposition 1); it marks what a curator would refuse, and refuses nothing.
DEFAULT_DEMO_BUDGET = "epsilon=10,delta=1e-6"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``DPCI_DATA_DIR``, else ``$XDG_DATA_HOME/dpci`` (``~/.local/share/dpci``)."""
    env = os.environ if env is None else env
    if env.get("DPCI_DATA_DIR"):
        return Path(env["DPCI_DATA_DIR"]).expanduser()
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "dpci"


def database_url(env: Mapping[str, str] | None = None) -> str:
    """``DPCI_DATABASE_URL`` (any SQLAlchemy URL), else an SQLite file in :func:`data_dir`."""
    env = os.environ if env is None else env
    if env.get("DPCI_DATABASE_URL"):
        return env["DPCI_DATABASE_URL"]
    return f"sqlite:///{data_dir(env) / 'ledger.sqlite3'}"


def server_secret(url: str, env: Mapping[str, str] | None = None) -> bytes:
    """The key of the datasets' keyed hashes: ``DPCI_SECRET``, else a file ``secret.key`` beside an
    SQLite database (or in the data directory), created on first use and readable by its owner only.
    An in-memory database gets a secret for this process only."""
    env = os.environ if env is None else env
    if env.get("DPCI_SECRET"):
        return env["DPCI_SECRET"].encode()
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:"):
        return secrets.token_bytes(32)
    if parsed.get_backend_name() == "sqlite":
        folder = Path(str(parsed.database)).expanduser().parent
    else:
        folder = data_dir(env)
    path = folder / "secret.key"
    if not path.exists():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32))
    from .schema import owner_only

    owner_only(path)
    return path.read_text().strip().encode()


def default_budget(env: Mapping[str, str] | None = None, demo: bool = False) -> Budget:
    env = os.environ if env is None else env
    if demo:
        return Budget.parse(env.get("DPCI_DEMO_BUDGET") or DEFAULT_DEMO_BUDGET)
    return Budget.parse(env.get("DPCI_BUDGET") or DEFAULT_BUDGET)


def content_digest(*parts) -> bytes:
    """A canonical digest of a dataset's content: arrays by dtype, shape and bytes (C order), text and
    bytes as they are, anything else by its repr."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            digest.update(repr((part.shape, part.dtype.str)).encode())
            digest.update(np.ascontiguousarray(part).tobytes())
        elif isinstance(part, bytes):
            digest.update(len(part).to_bytes(8, "little") + part)
        else:
            text = str(part) if isinstance(part, str) else repr(part)
            digest.update(len(text).to_bytes(8, "little") + text.encode())
    return digest.digest()


def canonical_csv(data: bytes) -> bytes:
    """An uploaded file's content up to how it was saved: no byte-order mark, Unix line endings, no
    trailing blank lines (the same table saved on another system is the same dataset). The app and the
    command line key an upload by this, so both meet the same spend."""
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return text.rstrip("\n").encode()


def keyed(secret: bytes, digest: bytes) -> str:
    """HMAC-SHA256 of a content digest under the server secret: names a dataset in the ledger without
    revealing anything about its rows (without the secret, no one can test a guess of them)."""
    return hmac.new(secret, digest, hashlib.sha256).hexdigest()[:40]
