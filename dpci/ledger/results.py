"""Results shared across sessions, kept in the ledger's database (table ``dpci_results``).

A result here is what a computation *from public randomness* gave (a bootstrap's variability intervals,
a coverage sweep): never a private release (those are in ``dpci_releases``, paid for by the ledger) and
never rows. Each is stored under a key naming everything it depends on (the dataset's key, the settings
that matter, the bootstrap's own seed), so a server that restarts, or a second server on the same
database, shows a finished result again instead of computing it anew.
"""

from __future__ import annotations

import hashlib
import time

import sqlalchemy as sa

from .schema import make_engine, migrate, results

MAX_BYTES = 32_000_000  # a larger result is not kept (it is computed again when asked for)


def result_id(key) -> str:
    """The stored name of a result's key: a hash of its ``repr`` (keys are tuples of plain values)."""
    return hashlib.blake2b(repr(key).encode(), digest_size=20).hexdigest()


class ResultStore:
    """Finished results by key, in the database at ``url`` (or an existing SQLAlchemy engine).

    Parameters
    ----------
    url : str or sqlalchemy.Engine
        The database (the ledger's, so results survive a restart where releases do).
    """

    def __init__(self, url):
        self.engine = url if isinstance(url, sa.Engine) else make_engine(url)
        migrate(self.engine)

    def get(self, key) -> bytes | None:
        """The payload stored under ``key``, or None."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(results.c.payload).where(results.c.id == result_id(key))).first()
        return None if row is None else bytes(row[0])

    def put(self, key, kind: str, payload: bytes) -> bool:
        """Store ``payload`` under ``key`` (a result computed twice at once is stored once); False when
        it is too large to keep."""
        if len(payload) > MAX_BYTES:
            return False
        row = dict(id=result_id(key), kind=kind, payload=payload, created=time.time())
        try:
            with self.engine.begin() as conn:
                conn.execute(sa.insert(results).values(**row))
        except sa.exc.IntegrityError:  # the same result, stored by another process first
            pass
        return True

    def forget(self, kind: str | None = None) -> int:
        """Delete the stored results (of one ``kind``, or all); returns how many went."""
        query = sa.delete(results)
        if kind is not None:
            query = query.where(results.c.kind == kind)
        with self.engine.begin() as conn:
            return conn.execute(query).rowcount
