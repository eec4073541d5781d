"""Stored releases: a release's public outputs kept under an unguessable id, so a reload, a restart or
another browser shows the same numbers without drawing noise again (:mod:`dpci.ledger.records` says what
is kept). A part of :class:`~dpci.ledger.Ledger`; it needs only the ledger's ``engine``.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping

import sqlalchemy as sa

from .answers import Admission, StoredRelease
from .schema import charges, releases, run_once


def to_json(value) -> str:
    return json.dumps(value, sort_keys=True, default=_json_default)


def _json_default(value):
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    return repr(value)


class StoredReleases:
    """The ledger's stored releases (module docstring)."""

    engine: sa.engine.Engine

    def store_release(
        self, admission: Admission | None, key: str, identity: str, spec: Mapping, payload: Mapping, session: str = ""
    ) -> str:
        """Keep a release's public outputs under a new unguessable id (and link its charge to it)."""
        release_id = secrets.token_urlsafe(16)
        with self.engine.begin() as conn:
            conn.execute(
                sa.insert(releases).values(
                    id=release_id,
                    dataset=key,
                    identity=identity,
                    charge_id=admission.id if admission else None,
                    spec=to_json(dict(spec)),
                    payload=to_json(dict(payload)),
                    session=session,
                    created=time.time(),
                )
            )
            if admission is not None:
                conn.execute(sa.update(charges).where(charges.c.id == admission.id).values(release=release_id))
        return release_id

    def release(self, release_id: str) -> StoredRelease | None:
        """The stored release with this id, or None."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(releases).where(releases.c.id == str(release_id))).mappings().first()
            charge = None
            if row is not None and row["charge_id"] is not None:
                c = conn.execute(sa.select(charges).where(charges.c.id == row["charge_id"])).mappings().first()
                charge = dict(c) if c is not None else None
        return _stored(row, charge) if row is not None else None

    def find_release(self, key: str, identity: str, session: str | None = None) -> StoredRelease | None:
        """The newest stored release of the dataset with this identity (from ``session`` if given)."""
        query = sa.select(releases.c.id).where(releases.c.dataset == key, releases.c.identity == identity)
        if session is not None:
            query = query.where(releases.c.session == session)
        with self.engine.connect() as conn:
            found = conn.execute(query.order_by(releases.c.created.desc()).limit(1)).first()
        return self.release(found[0]) if found else None

    def rename_releases(self, name: str, rename) -> int | None:
        """Once per database (:func:`dpci.ledger.schema.run_once`, recorded as ``name``): give each stored
        release the identity ``rename(stored)`` returns for it (None: keep its own). For a rule of naming
        that lives above the ledger (the app's). Returns how many were renamed, or None when the step had
        run already (by this or any other process)."""
        renamed = 0

        def step(conn) -> None:
            nonlocal renamed
            for row in conn.execute(sa.select(releases)).mappings().all():
                new = rename(_stored(row, None))
                if new is not None and new != row["identity"]:
                    conn.execute(sa.update(releases).where(releases.c.id == row["id"]).values(identity=new))
                    renamed += 1

        return renamed if run_once(self.engine, name, step) else None

    def releases_of(self, key: str) -> list[StoredRelease]:
        with self.engine.connect() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    sa.select(releases.c.id).where(releases.c.dataset == key).order_by(releases.c.created)
                )
            ]
        return [r for r in map(self.release, ids) if r is not None]


def _stored(row, charge) -> StoredRelease:
    return StoredRelease(
        id=row["id"],
        dataset=row["dataset"],
        identity=row["identity"],
        spec=json.loads(row["spec"]),
        payload=json.loads(row["payload"]),
        created=row["created"],
        charge=charge,
    )
