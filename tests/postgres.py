"""A throw-away PostgreSQL server for the ledger's tests: a cluster in a temporary folder, reachable
only through a Unix socket in that folder (no TCP port is opened), stopped and removed afterwards.

Uses Debian's ``postgresql`` package (.ci/run installs it) and the psycopg driver
(pip install -e '.[dev]'). As root, the server runs as the ``postgres`` user, as PostgreSQL requires.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def unavailable() -> str | None:
    """Why no throw-away server can be started here, or None."""
    if binaries() is None:
        return "PostgreSQL is not installed (apt-get install -y postgresql)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the psycopg driver is not installed (pip install -e '.[dev]')"
    return None


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextmanager
def throwaway_server():
    """Yield a function that makes a fresh, empty database and returns its SQLAlchemy URL; the server is
    stopped and its files removed afterwards."""
    bin_dir = binaries()
    assert bin_dir is not None, unavailable()
    folder = Path(tempfile.mkdtemp(prefix="dpci-pg-"))
    data, socket_dir = folder / "data", folder
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    log = folder / "server.log"
    subprocess.run(
        _as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"]),
        check=True,
        capture_output=True,
    )
    options = f"-k {socket_dir} -c listen_addresses='' -p 5432 -c fsync=off"
    subprocess.run(
        _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "start"]),
        check=True,
        capture_output=True,
        timeout=60,
    )
    try:
        for _ in range(50):
            ready = subprocess.run(
                [str(bin_dir / "pg_isready"), "-h", str(socket_dir), "-p", "5432"], capture_output=True
            )
            if ready.returncode == 0:
                break
            time.sleep(0.2)
        made = []

        def new_database() -> str:
            name = f"dpci_{len(made)}"
            subprocess.run(
                [str(bin_dir / "createdb"), "-h", str(socket_dir), "-p", "5432", "-U", "postgres", name],
                check=True,
                capture_output=True,
            )
            made.append(name)
            return f"postgresql+psycopg://postgres@/{name}?host={socket_dir}&port=5432"

        yield new_database
    finally:
        subprocess.run(
            _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(folder, ignore_errors=True)
