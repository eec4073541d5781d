"""Which budget an uploaded table meets: the same people, by the columns they share (no UI).

A table arrives as its digest, its number of rows and one fingerprint per column
(:class:`dpci.data.TableColumns`: each column's cells as a canonical multiset, a two-valued column by
how it splits the rows). A table with as many rows as a registered dataset holds the same people when

* their column sets nest, one's columns all among the other's (an ignored column added, dropped or
  renamed, a label recoded), or
* they share two column fingerprints, one of a column with more than two values (the same rows with
  other columns changed: an id dropped, a noise column added, one cell of an unread column edited).

It then meets that dataset's budget, and :func:`match_table` says why. That is the safe direction: a
budget shared by two tables of the same people is never a fresh one. What still counts as another
table: another number of rows (a row dropped or repeated), or fewer than two such columns in common.

A table that meets two datasets registered apart shows that they are the same people under two
budgets. Either key would let its releases ignore what the other has spent, so the ledger refuses it
(:class:`SameRowsTwice`); whoever runs the server decides. Fingerprints are stored keyed by the server's
secret, like dataset keys, so the database reveals nothing about a column to anyone without it.

Looking up and registering is one transaction that first writes the ledger's ``schema_version`` row:
a write lock in SQLite, a row lock in PostgreSQL, so two sessions uploading the same people at once
are serialised and the second finds the first's key (docs/privacy-ledger.md, "Which data a budget
follows").
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from . import config
from .schema import columns, datasets, meta


class SameRowsTwice(ValueError):
    """An upload whose columns nest with two datasets the ledger keeps under separate budgets."""


@dataclass(frozen=True)
class TableMatch:
    """The key an upload is charged to, and why: ``why`` is None for a table that nests with the dataset
    (or is new), else a sentence a page or the command line shows ("the same people: ...")."""

    key: str
    why: str | None = None


def table_key(ledger, table, label: str = "") -> str:
    """The ledger key ``table`` (a :class:`dpci.data.TableColumns`) is charged to (:func:`match_table`)."""
    return match_table(ledger, table, label).key


def match_table(ledger, table, label: str = "") -> TableMatch:
    """The dataset of the same people as ``table`` (module docstring), else a new one named by its digest
    (registered here with the server's default budget for real data, its column fingerprints stored
    beside it), with the reason when the two only share columns."""
    mine = {config.keyed(ledger.secret, c) for c in table.columns}
    strong = {config.keyed(ledger.secret, c) for c in table.strong}
    with ledger.engine.begin() as conn:
        conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value=meta.c.value))
        found = _same_people(conn, table.rows, mine, strong)
        if len(found) > 1:
            keys = [key for key, _ in found]
            labels = conn.execute(sa.select(datasets.c.label).where(datasets.c.key.in_(keys))).scalars()
            raise SameRowsTwice(
                "This table shares its rows and columns with tables uploaded before under separate budgets "
                f"({', '.join(sorted(set(labels)))}): the same people, and no one budget to charge. "
                "Upload the table as it was first uploaded, or ask whoever runs the server "
                "(dpci ledger list shows the datasets)."
            )
        own = ledger.key_of(table.digest)
        key = found[0][0] if found else own
        why = found[0][1] if found else None
        if conn.execute(sa.select(datasets.c.key).where(datasets.c.key == key)).first() is None:
            ledger._insert_dataset(conn, key, label)
        # Every form met is kept, not their union: {a, b} then {a, b, c} under one key, a later {a, b, d}
        # still nests with {a, b} and meets that budget.
        form = own
        if conn.execute(sa.select(columns.c.form).where(columns.c.form == form).limit(1)).first() is None:
            rows = [dict(dataset=key, form=form, rows=table.rows, fingerprint=f) for f in sorted(mine)]
            conn.execute(sa.insert(columns), rows)
    ledger._known.add(key)
    return TableMatch(key, why)


def _same_people(conn, rows: int, mine: set[str], strong: set[str]) -> list[tuple[str, str | None]]:
    """The registered datasets of the same people as a table of ``rows`` rows with column fingerprints
    ``mine`` (``strong``: those of columns with more than two values), oldest first, each with why (None:
    the columns nest)."""
    query = (
        sa.select(columns.c.dataset, columns.c.form, columns.c.fingerprint)
        .join(datasets, datasets.c.key == columns.c.dataset)
        .where(columns.c.rows == rows)
        .order_by(datasets.c.created, datasets.c.key)
    )
    forms: dict[tuple[str, str], set[str]] = {}
    for key, form, fingerprint in conn.execute(query):
        forms.setdefault((key, form), set()).add(fingerprint)
    met: dict[str, str | None] = {}
    for (key, _), fs in forms.items():
        shared = fs & mine
        if fs <= mine or mine <= fs:
            met[key] = None
        elif len(shared) >= 2 and shared & strong:
            met.setdefault(
                key,
                f"it has as many rows as a table uploaded before and {len(shared)} of its columns hold the same "
                "values, so it holds the same people and meets that table's budget",
            )
    return list(met.items())
