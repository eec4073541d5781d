"""The name of a stored release, and the one-time renaming of releases stored under older names.
Pure: no Streamlit here.

A release made from the app is named by its *identity*: the rows in use (:func:`data_key`) and its
specification's noise key (every setting its noise depends on, and its randomness), so the same
settings find their stored release again for free. Releases stored before release specifications
carry names made by an older formula; :func:`renamed` gives each the name the current code computes
from its own record, once per database (:meth:`dpci.ledger.Ledger.rename_releases`, run when the app
opens its ledger). A record of an upload keeps its old name: the digest of the file its name needs is
not in the record (docs/privacy-ledger.md, "Stored releases and their names").
"""

from __future__ import annotations

import hashlib

from ui.app_state import AppState
from ui.settings import settings_from_spec

# The one-time step's name in the ledger's meta table (changing it would run the renaming again).
RENAMING = "app release identities"


def data_key(s: AppState, upload_digest: str = "") -> str:
    """A short key naming the rows in use: the dataset, d, n, an upload's digest and the scaling (the
    synthetic data are never scaled)."""
    upload = upload_digest if s.data.dataset == "upload" else ""
    return f"{s.data.dataset}|{s.data.d}|{s.data.n}|{upload}" + (
        f"|{s.data.scaling}" if s.data.dataset != "synthetic" else ""
    )


def identity(s: AppState, data_key: str) -> str:
    """Names a release: the rows in use and its specification's noise key (every setting its noise
    depends on, and its randomness: a public seed, or fresh)."""
    text = f"{data_key}|{s.spec.noise_key}"
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def renamed(stored) -> str | None:
    """The identity the app computes for a stored release (:class:`dpci.ledger.StoredRelease`) from its
    own record, or None to keep its name: a release not made by the app, an upload's (its file's digest
    is not recorded), or a record this server cannot read (a method or loss it does not have). Never
    raises: the app runs it when it opens its ledger."""
    spec = stored.spec or {}
    if "app" not in spec and "app_settings" not in spec:
        return None
    try:
        s = settings_from_spec(spec)
        return None if s.data.dataset == "upload" else identity(s, data_key(s))
    except Exception:  # noqa: BLE001 - a record this code cannot read keeps its name (and still opens by id)
        return None
