"""Which budget an uploaded table meets: the same people, by nesting column sets (no UI).

A table arrives as its digest, its number of rows and one fingerprint per column
(:class:`dpci.data.TableColumns`: each column's cells as a canonical multiset). Two tables with as
many rows whose column sets nest, one's columns all among the other's, hold the same people: the same
rows with an ignored column added, dropped or renamed. They meet one budget: the new table gets the
key of the dataset already registered, which is the safe direction (a budget shared by two tables of
the same people is never a fresh one). One changed cell changes its column's fingerprint, so no
nesting: another dataset, like any other table.

A table whose columns nest with two datasets registered apart (say ``{a, b}`` and ``{a, c}`` for
``{a, b, c}``) shows that those two are the same people under two budgets. Either key would let its
releases ignore what the other has spent, so the ledger refuses it (:class:`SameRowsTwice`); whoever
runs the server decides. Fingerprints are stored keyed by the server's secret, like dataset keys, so
the database reveals nothing about a column to anyone without it.

Looking up and registering is one transaction that first writes the ledger's ``schema_version`` row:
a write lock in SQLite, a row lock in PostgreSQL, so two sessions uploading the same people at once
are serialised and the second finds the first's key (docs/privacy-ledger.md, "Which data a budget
follows").
"""

from __future__ import annotations

import sqlalchemy as sa

from . import config
from .schema import columns, datasets, meta


class SameRowsTwice(ValueError):
    """An upload whose columns nest with two datasets the ledger keeps under separate budgets."""


def table_key(ledger, table, label: str = "") -> str:
    """The ledger key ``table`` (a :class:`dpci.data.TableColumns`) is charged to: the registered
    dataset its columns nest with, else a new one named by its digest (registered here with the
    server's default budget for real data, its column fingerprints stored beside it)."""
    mine = {config.keyed(ledger.secret, c) for c in table.columns}
    with ledger.engine.begin() as conn:
        conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value=meta.c.value))
        found = _nesting(conn, table.rows, mine)
        if len(found) > 1:
            labels = conn.execute(sa.select(datasets.c.label).where(datasets.c.key.in_(found))).scalars()
            raise SameRowsTwice(
                "This table holds the columns of tables uploaded before under separate budgets "
                f"({', '.join(sorted(set(labels)))}): the same people, and no one budget to charge. "
                "Upload the table as it was first uploaded, or ask whoever runs the server."
            )
        own = ledger.key_of(table.digest)
        key = found[0] if found else own
        if conn.execute(sa.select(datasets.c.key).where(datasets.c.key == key)).first() is None:
            ledger._insert_dataset(conn, key, label)
        # Every form met is kept, not their union: {a, b} then {a, b, c} under one key, a later {a, b, d}
        # still nests with {a, b} and meets that budget.
        form = own
        if conn.execute(sa.select(columns.c.form).where(columns.c.form == form).limit(1)).first() is None:
            rows = [dict(dataset=key, form=form, rows=table.rows, fingerprint=f) for f in sorted(mine)]
            conn.execute(sa.insert(columns), rows)
    ledger._known.add(key)
    return key


def _nesting(conn, rows: int, mine: set[str]) -> list[str]:
    """The registered datasets with ``rows`` rows whose column fingerprints nest with ``mine``, oldest
    first."""
    query = (
        sa.select(columns.c.dataset, columns.c.form, columns.c.fingerprint)
        .join(datasets, datasets.c.key == columns.c.dataset)
        .where(columns.c.rows == rows)
        .order_by(datasets.c.created, datasets.c.key)
    )
    forms: dict[tuple[str, str], set[str]] = {}
    for key, form, fingerprint in conn.execute(query):
        forms.setdefault((key, form), set()).add(fingerprint)
    nesting = [key for (key, _), fs in forms.items() if fs <= mine or mine <= fs]
    return list(dict.fromkeys(nesting))
