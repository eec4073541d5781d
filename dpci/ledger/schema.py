"""The ledger's database: tables, the engine and migrations (SQLAlchemy Core; SQLite or any SQL database).

Five tables and a version:

* ``datasets``: one row per dataset (its keyed hash, a label, whether it is demo data and its scope, the
  rows one person may contribute, the budget fixed before its first release);
* ``charges``: one row per result computed from a dataset: a private release (``private`` true, its
  ``charge`` in the budget's unit) or a result no guarantee covers (a public seed, a bootstrap, a
  non-private interval, a sweep on the data: listed, never counted);
* ``releases``: the public outputs of each stored release (never rows, never the secret randomness);
* ``results``: results computed from public randomness that every session may share (a bootstrap's
  variability intervals, a sweep), by a hash of what they depend on (:mod:`dpci.ledger.results`);
* ``columns``: each uploaded table's column fingerprints (keyed), one row per column of each form of
  the table met, so a table whose columns nest with a known one meets its budget
  (:mod:`dpci.ledger.tables`);
* ``meta``: ``schema_version``. :data:`MIGRATIONS` brings an older database up to date on open; a
  one-time data migration whose rule lives above the ledger (the app's names of its releases) is
  recorded here too, by name (:func:`run_once`).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import sqlalchemy as sa

SCHEMA_VERSION = 3

metadata = sa.MetaData()

meta = sa.Table(
    "dpci_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

datasets = sa.Table(
    "dpci_datasets",
    metadata,
    sa.Column("key", sa.String(160), primary_key=True),  # content hash, and "/scope" for demo data
    sa.Column("content", sa.String(80), nullable=False, index=True),  # keyed hash of the content alone
    sa.Column("scope", sa.String(80), nullable=False, default=""),  # "" (shared) or a visitor's id (demo data)
    sa.Column("label", sa.Text, nullable=False, default=""),
    sa.Column("demo", sa.Boolean, nullable=False, default=False),
    sa.Column("group_size", sa.Integer, nullable=False, default=1),
    sa.Column("notion", sa.String(8), nullable=False),
    sa.Column("amount", sa.Float, nullable=False),
    sa.Column("delta", sa.Float, nullable=False),
    sa.Column("version", sa.Integer, nullable=False, default=0),  # bumped by every charge: the row lock
    sa.Column("created", sa.Float, nullable=False),
)

charges = sa.Table(
    "dpci_charges",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("dataset", sa.String(160), sa.ForeignKey("dpci_datasets.key"), nullable=False, index=True),
    sa.Column("private", sa.Boolean, nullable=False),
    sa.Column("charge", sa.Float, nullable=False),  # in the dataset's unit (0 when not private)
    sa.Column("epsilon", sa.Float, nullable=True),  # the release's own spend, for the history
    sa.Column("rho", sa.Float, nullable=True),
    sa.Column("what", sa.Text, nullable=False),
    sa.Column("spec", sa.Text, nullable=False),  # JSON: what was computed
    sa.Column("session", sa.String(80), nullable=False, default=""),
    sa.Column("release", sa.String(64), nullable=True),  # the stored release it made, if any
    sa.Column("spent_before", sa.Float, nullable=False, default=0.0),  # the dataset's total before it
    sa.Column("created", sa.Float, nullable=False),
)

releases = sa.Table(
    "dpci_releases",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),  # unguessable (secrets.token_urlsafe)
    sa.Column("dataset", sa.String(160), sa.ForeignKey("dpci_datasets.key"), nullable=False, index=True),
    sa.Column("identity", sa.String(80), nullable=False, index=True),  # hash of the specification
    sa.Column("charge_id", sa.Integer, sa.ForeignKey("dpci_charges.id"), nullable=True),
    sa.Column("spec", sa.Text, nullable=False),  # JSON
    sa.Column("payload", sa.Text, nullable=False),  # JSON: the public outputs
    sa.Column("session", sa.String(80), nullable=False, default=""),
    sa.Column("created", sa.Float, nullable=False),
)

results = sa.Table(
    "dpci_results",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),  # hash of the result's key (dpci.ledger.results)
    sa.Column("kind", sa.String(40), nullable=False, index=True),
    sa.Column("payload", sa.LargeBinary, nullable=False),
    sa.Column("created", sa.Float, nullable=False),
)

columns = sa.Table(
    "dpci_columns",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("dataset", sa.String(160), sa.ForeignKey("dpci_datasets.key"), nullable=False, index=True),
    sa.Column("form", sa.String(80), nullable=False, index=True),  # keyed digest of the table as uploaded
    sa.Column("rows", sa.Integer, nullable=False, index=True),
    sa.Column("fingerprint", sa.String(80), nullable=False),  # keyed digest of one column's cells
)

# version -> function(connection) taking the schema from version - 1 to version. Version 1 is the
# first; a later change appends its step here (an ALTER TABLE or a data migration), never edits one.
MIGRATIONS: dict[int, object] = {
    2: lambda conn: results.create(conn, checkfirst=True),  # the shared results (create_all made it already)
    3: lambda conn: columns.create(conn, checkfirst=True),  # uploads' column fingerprints
}


def owner_only(path: Path) -> None:
    """Take the group's and others' permissions off an existing file of the ledger's (made by older code
    or another umask), saying so: it holds who released what, or the key that names the datasets."""
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        os.chmod(path, mode & 0o700)
        warnings.warn(
            f"{path} could be read by other users of this machine (mode {mode:o}); it is now yours alone "
            f"({mode & 0o700:o}).",
            stacklevel=3,
        )


def create_private_file(path: Path) -> None:
    """Create ``path`` empty, readable and writable by its owner only (0600), and its folder (0700) if
    missing; an existing file keeps its content and loses any group or other permission (:func:`owner_only`). The ledger's file holds who released what and when, so
    no other user of the machine may read it. SQLite gives the files it adds beside a database (``-wal``,
    ``-shm``, ``-journal``) the database file's own permissions."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        owner_only(path)


def make_engine(url: str) -> sa.Engine:
    """An engine for ``url``; SQLite gets WAL mode, a busy timeout and foreign keys, and a file
    database's folder (0700) and file (0600) are created (:func:`create_private_file`). ``sqlite://`` (in memory) is shared by the threads of one process."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True, future=True)
    database = parsed.database or ""
    if database in ("", ":memory:"):
        engine = sa.create_engine(
            "sqlite://", poolclass=sa.pool.StaticPool, connect_args={"check_same_thread": False, "timeout": 60}
        )
    else:
        create_private_file(Path(database).expanduser())
        engine = sa.create_engine(url, connect_args={"timeout": 60})

    @sa.event.listens_for(engine, "connect")
    def _sqlite_pragmas(dbapi_connection, _record):
        cursor = dbapi_connection.cursor()
        if database not in ("", ":memory:"):
            cursor.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
        cursor.execute("PRAGMA busy_timeout=60000")  # a second writer waits for the first
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    return engine


def migrate(engine: sa.Engine) -> int:
    """Create the tables if needed and bring the schema to :data:`SCHEMA_VERSION`; returns the version."""
    try:
        metadata.create_all(engine)  # only the missing tables; never touches existing ones
    except sa.exc.DatabaseError:  # another process created one between the check and the CREATE
        metadata.create_all(engine)
    with engine.begin() as conn:
        row = conn.execute(sa.select(meta.c.value).where(meta.c.key == "schema_version")).first()
        if row is None:
            try:
                conn.execute(sa.insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
            except sa.exc.IntegrityError:  # another process wrote it first
                pass
            return SCHEMA_VERSION
        version = int(row[0])
    if version > SCHEMA_VERSION:
        raise RuntimeError(
            f"the ledger's database has schema version {version}, newer than this dpci ({SCHEMA_VERSION}): "
            "upgrade dpci before using it."
        )
    while version < SCHEMA_VERSION:
        with engine.begin() as conn:
            MIGRATIONS[version + 1](conn)  # type: ignore[operator]
            conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value=str(version + 1)))
        version += 1
    return version


def run_once(engine: sa.Engine, name: str, step) -> bool:
    """Run ``step(conn)`` once per database: in one transaction that first writes the ``schema_version``
    row (SQLite's write lock, a PostgreSQL row lock, as :func:`dpci.ledger.tables.table_key` does), so
    concurrent openers are serialised; the step is recorded under ``done: <name>`` in the same
    transaction, and an opener that finds the record does nothing. Returns whether the step ran."""
    done = f"done: {name}"[:64]
    with engine.begin() as conn:
        conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value=meta.c.value))
        if conn.execute(sa.select(meta.c.value).where(meta.c.key == done)).first() is not None:
            return False
        step(conn)
        conn.execute(sa.insert(meta).values(key=done, value="1"))
    return True
