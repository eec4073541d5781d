"""A link shares numbers: the Explorer's address carries the stored release it shows (``release=<id>``),
and a session opened from such an address shows exactly that release, drawing and charging nothing.

What must hold:

* The stored release is public post-processing only (:mod:`dpci.ledger.records`): opening it reads its
  payload and its settings, never a dataset's rows, and never asks the ledger to admit anything.
* Whether the release's data may be read for the comparisons (non-private and variability intervals)
  is decided by the server: only when the ledger registered its dataset as practice data and its
  settings name a shipped file. An upload's release is shown from its payload alone.
* The shared release stays while the settings keep its identity (the data's choices and the spec's
  noise key: moving the level is post-processing); a setting its noise depends on leaves it, and
  the page behaves as it does without a link.
"""

from __future__ import annotations

import re

import streamlit as st

from dpci.ledger.records import StoredIntervals, not_private_reason
from dpci.presentation.tables import escape_markdown
from ui import privacy
from ui.app_state import FIELDS, AppState
from ui.settings import OLD_KEYS, settings_from_spec
from ui.state import WIDGET, current_settings, settings_store

SHARED = "_shared_release"  # session_state: (release id, link_key) of the release opened from the address
OPENED = "_link_opened"  # session_state: the address's release id this session has read already
NOTE = "_link_note"  # session_state: why the address's release could not be shown (said until a setting moves)
#: Said at the top when a visitor opens an address that holds settings but no release.
SETTINGS_ONLY = (
    "This address holds settings only, so the numbers below were drawn now, with new noise: they are not the "
    "ones whoever shared the address saw. To share exact numbers, copy the address once a release is shown "
    "(it then carries `release=`)."
)
RELEASE_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")  # the ledger's ids: secrets.token_urlsafe(16)


def link_key(s: AppState) -> tuple:
    """What a link's release is kept for: the data's choices and every setting the noise depends on, the
    upload's file aside (``ui.release_names.identity`` is the stored release's name, which holds it)."""
    return (s.data.dataset, s.data.d, s.data.n, s.data.scaling, s.spec.noise_key)


def explorer_record(spec) -> bool:
    """Whether a release record was made on the Explorer: it keeps the app's settings (``app`` beside the
    release spec, or ``app_settings`` in a record written before that layout)."""
    return isinstance(spec, dict) and ("app" in spec or "app_settings" in spec)


def open_link() -> None:
    """Once per address: a ``release=`` id in it makes that stored release the one shown, its settings
    the session's. An id that is malformed, unknown or not an Explorer release is said, and the
    address's settings are used instead."""
    asked = st.query_params.get("release")
    if not asked:
        if OPENED not in st.session_state and set(st.query_params) & (
            set(FIELDS) | OLD_KEYS
        ):  # a settings-only address
            st.session_state[OPENED] = ""
            asked_settings = current_settings()  # what can run of what the address asks (it says what gave way)
            if not asked_settings.teaching:  # teaching mode's public seed draws the same numbers again
                st.session_state[NOTE] = (SETTINGS_ONLY, link_key(asked_settings))
        return
    if st.session_state.get(OPENED) == asked:
        return
    st.session_state[OPENED] = asked
    store = settings_store()  # the address's settings first: the fallback
    said = escape_markdown(asked[:40])
    found = privacy.ledger().release(asked) if RELEASE_ID.fullmatch(asked) else None
    if not RELEASE_ID.fullmatch(asked):
        reason = f"The address names a release, `{said}`, that is not a release id"
    elif found is None:
        reason = f"There is no release `{said}` on this server (the link may be mistyped, or from another server)"
    elif not explorer_record(found.spec):
        reason = f"Release `{said}` was not made on the Explorer: the *Present* page shows it"
    else:
        try:
            settings = settings_from_spec(found.spec)
        except (ValueError, TypeError, KeyError):
            reason = f"Release `{said}` was made with a method or loss this server does not have"
        else:
            store.clear()
            store.update(settings.values())
            for name in list(st.session_state):  # the widgets are drawn again from the store
                if isinstance(name, str) and name.startswith(WIDGET):
                    del st.session_state[name]
            st.session_state[SHARED] = (found.id, link_key(settings))
            st.session_state.pop(NOTE, None)
            return
    st.session_state[NOTE] = (
        f"{reason}, so the settings in the address are used instead.",
        link_key(AppState.from_values(store)),
    )
    st.session_state.pop(SHARED, None)


def say_note(s: AppState) -> None:
    """The sentence of :func:`open_link` about the address (a release it could not show, or settings only),
    until a setting moves."""
    note = st.session_state.get(NOTE)
    if note is not None and note[1] == link_key(s):
        (st.info if note[0] == SETTINGS_ONLY else st.warning)(note[0])
    else:
        st.session_state.pop(NOTE, None)


def active(s: AppState):
    """The stored release opened from the address (:class:`dpci.ledger.StoredRelease`), while the
    settings keep its identity; None otherwise (and the link is left for good)."""
    shared = st.session_state.get(SHARED)
    if shared is None:
        return None
    found = privacy.ledger().release(shared[0]) if shared[1] == link_key(s) else None
    if found is None:
        st.session_state.pop(SHARED, None)
    return found


def intervals(found) -> StoredIntervals:
    return StoredIntervals.from_payload(found.payload, found.id)


def public_data(found) -> bool:
    """Whether the shared release's data may be read for its comparisons: practice data by the server's
    own record of the dataset, and a shipped file by the release's settings."""
    dataset = (found.spec.get("app") or found.spec.get("app_settings") or {}).get("dataset")
    return dataset in privacy.SHIPPED and privacy.ledger().status(found.dataset).demo


def mark_address(release) -> None:
    """The address carries the stored release the page shows (its id), and no other."""
    release_id = getattr(release, "release_id", None)
    if release_id:
        st.query_params["release"] = release_id
        st.session_state[OPENED] = release_id  # this session's own: nothing to open at its next run
    else:
        st.query_params.pop("release", None)


def guarantee(found) -> str:
    """The stored release's guarantee in one sentence, from its own record (the same in any browser)."""
    reason = not_private_reason(found)
    if reason is not None:
        return f"Not private: {reason.rstrip('.')}."
    s = settings_from_spec(found.spec)
    return f"Guarantee: {s.notion.say(s.spec.budget)} ({s.notion.words})."


def say_shared(found) -> None:
    """Say that the page shows a release opened from its link, and its guarantee as its record states it."""
    st.info(
        f"**A shared release.** Release `{found.id[:8]}…`, opened from its link: its stored numbers, the same "
        "in any browser; nothing was drawn or charged. Moving a setting its noise depends on leaves it for a "
        "new release."
    )
    words = guarantee(found)
    (st.error if words.startswith("Not private") else st.caption)(escape_markdown(words))


def caption(release_id: str | None, teaching: bool) -> str:
    """Which link shares what, said where the page says how to share."""
    settings_link = (
        "The page address without `release=` holds the settings only: opened elsewhere it runs them again, "
        + (
            "from the same public seed (the same numbers, not private)."
            if teaching
            else "with new noise (other numbers, a new release on that visitor's ledger)."
        )
    )
    if release_id is None:
        return "Share this exact configuration by copying the page address. " + settings_link
    return (
        f"Share these numbers by copying the page address: it carries release `{release_id[:8]}…`, so any browser "
        "shows exactly this release, drawing and charging nothing. " + settings_link
    )
