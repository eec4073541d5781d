"""The release desk: a release's life in the app, in one place. It makes a release (:func:`release_of`:
found on the ledger and shown again for free, else priced, admitted, drawn, stored and, for real data,
chosen), says which one Present shows (:func:`presented`, :func:`present`, :func:`request`), and returns
what each page draws:

* The Explorer (:func:`for_explorer`, :func:`from_link`): the release of the sidebar's settings, paid once
  and shown again for free, or a free preview on a stand-in for real data not yet released, or the stored
  release an address names; a refusal said, with the last chart kept.
* Present (:func:`for_present`): a link's release, else the one the Explorer's link opened, else the one
  chosen, else the one the Explorer made with the sidebar's settings (:func:`release_id_for`); in teaching
  mode with none, a preview drawn from the public seed. Where there is nothing to present, the desk says
  why (and offers the one press that makes a release) and stops the page.

* How it works (:func:`release_of` in teaching mode): the public seed's release, recorded as not private.

The pages only draw what the desk returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import streamlit as st

import ui.data
import ui.privacy
import ui.shared
import ui.upload
from dpci.ledger import BudgetExceeded
from dpci.ledger.records import StoredIntervals, not_private_reason, release_payload
from dpci.presentation.tables import escape_markdown
from ui.app_state import AppState
from ui.release_names import identity
from ui.settings import settings_from_spec
from ui.sidebar_ledger import draw_odometer


@dataclass
class Shown:
    """What the Explorer draws: the rows, the release (or its preview) and, for a preview, the non-private fit
    on its stand-in (on the data it is fitted when drawn, for the estimand the chart is for)."""

    X: Any
    y: Any
    names: list
    truth: Any
    release: Any
    nonprivate: Any
    preview: bool

    @property
    def source(self) -> str:
        return "preview" if self.preview else "data"


LAST_FOREST = "_last_forest"  # session_state: the last chart drawn, shown faded while settings cannot draw


def last_chart(until: str) -> None:
    """The picture stays: the last chart drawn, faded, while the current settings cannot be drawn."""
    last = st.session_state.get(LAST_FOREST)
    if last is not None:
        st.caption(f"The chart of the last settings drawn, {until}:")
        st.plotly_chart(last.update_layout(template="plotly_white").update_traces(opacity=0.35), width="stretch")


@dataclass(frozen=True)
class OnDesk:
    """A release as a page presents it. ``stored`` is its ledger record (None: a teaching-mode preview);
    ``key`` names the rows in this session (None: the data are not here, so nothing is compared with them);
    ``upload`` is what the release says of its file; ``not_private`` why no guarantee holds (None: private)."""

    settings: AppState
    release: Any
    stored: Any
    names: list[str]
    truth: Any
    n: int
    d: int
    key: str | None
    upload: dict | None
    not_private: str | None

    @property
    def has_data(self) -> bool:
        return self.key is not None


# --- making a release, and the one Present shows ---------------------------------------------------------
def release_of(key: str, s: AppState, where: str = "Explorer"):
    """The release for the settings (key names the rows in use). Teaching mode: drawn from the public
    seed (recorded as not private). Otherwise the stored release of these settings if there is one
    (showing it again is free: nothing is drawn), else a new one, admitted by the ledger before its noise
    is drawn and stored; Refused when the dataset's budget cannot pay for it."""
    ref = ui.privacy.dataset_ref(s)
    if s.teaching:
        return ui.data.teaching_release(key, s)
    found = ui.privacy.stored(s, key)
    if found is not None:
        return found
    problem = ui.privacy.refusal(s)
    if problem is not None:
        ui.privacy.forget_request(s, key)
        raise ui.data.Refused(problem)
    X, y, _, _ = ui.data.load_data(s)
    book = ui.privacy.ledger()
    try:
        with book.watching(dataset=ref.key, session=ui.privacy.visitor()) as watch:
            release = s.spec.release(X, y)  # fresh randomness: a private release
    except BudgetExceeded as err:  # another tab spent the budget between the preview and now
        ui.privacy.forget_request(s, key)
        raise ui.data.Refused(str(err)) from None
    payload = release_payload(release, feature_names=ui.data.load_data(s)[2])
    spec = ui.privacy.spec_of(s, where)
    changes = ui.data.public_changes(s)
    if changes is not None:  # the odds ratios' public changes, so Present states them without the data
        spec["odds_changes"] = {name: asdict(change) for name, change in changes.items()}
    release_id = book.store_release(
        watch.admissions[-1], ref.key, identity(s, key), spec, payload, ui.privacy.visitor()
    )
    if ui.privacy.needs_explicit_release(s):  # real data: the one release made is the one Present shows
        ui.privacy.choose(s, release_id)
    draw_odometer(s)
    return StoredIntervals.from_payload(payload, release_id)


def current_id(s: AppState) -> str | None:
    """The id of the stored release of these settings (the one the Explorer shows for them), or None:
    none made yet, teaching mode (nothing is stored), or no data chosen."""
    if s.teaching:
        return None
    try:
        found = ui.privacy.stored(s, ui.data.dataset_key(s))
    except ValueError:  # no upload yet
        return None
    return None if found is None else found.release_id


def presented(current: AppState) -> str | None:
    """The id of the release Present shows with the sidebar's settings ``current`` (:func:`release_id_for`)."""
    return release_id_for(current)


def present(s: AppState, release_id: str) -> None:
    """Make a stored release the one Present shows (it is already paid for: nothing is charged)."""
    ui.privacy.choose(s, release_id)


def request(s: AppState, data_key: str) -> None:
    """The Release button of real data: the next run makes the release (its cost was said beside it)."""
    ui.privacy.request_release(s, data_key)


def release_id_for(current: AppState) -> str | None:
    """The id of the release a page presents with the sidebar's settings ``current`` (module docstring)."""
    shared = ui.shared.active(current)  # a release opened from the Explorer's link, while its settings stay
    return (
        st.query_params.get("release")
        or (shared.id if shared is not None else None)
        or ui.privacy.chosen(current)
        or current_id(current)
    )


def for_present(current: AppState) -> OnDesk:
    """The release Present shows, loaded; or the reason there is none, drawn, and the page stopped."""
    asked = st.query_params.get("release")  # a link to a stored release: exactly its numbers, never new noise
    release_id = release_id_for(current)
    stored = ui.privacy.ledger().release(release_id) if release_id else None
    if asked and stored is None:
        _stop_unknown(asked)
    if stored is None and not current.teaching:
        _stop_nothing_released(current)
    if stored is None:  # teaching mode without a release: the sidebar's settings, drawn from the public seed
        return _preview(current)
    st.query_params["release"] = stored.id  # a reload or a copied address shows the same release
    return _stored(stored)


def _stored(stored) -> OnDesk:
    try:
        settings = settings_from_spec(stored.spec)
    except (ValueError, TypeError, KeyError) as err:  # e.g. a loss or method this server has not registered
        st.error(
            f"Release `{stored.id}` cannot be shown here: {escape_markdown(str(err))} It was made with a "
            "method or loss this server does not have; open it where it was made, or read its record."
        )
        st.stop()
    release = StoredIntervals.from_payload(stored.payload, stored.id)
    try:
        _, _, names, truth = ui.data.load_data(settings)
        key = ui.data.dataset_key(settings)
    except ValueError:  # data not in this session (an upload, the command line): the record says enough
        names, truth, key = None, None, None
    d = len(release.theta)  # the stored release says its own size and names: nothing read from the data
    names = stored.payload.get("feature_names") or names or [f"x{j + 1}" for j in range(d)]
    upload = stored.spec.get("upload")
    # What is not private is the stored release's own record (made with it), so a reload, another browser
    # and every download say the same.
    return OnDesk(settings, release, stored, names, truth, release.n, d, key, upload, not_private_reason(stored))


def _preview(settings: AppState) -> OnDesk:
    try:
        X, _, names, truth = ui.data.load_data(settings)
        problem = ui.data.c_problem(settings, len(X))
        if problem is not None:
            raise ValueError(problem[0] + " Fix c in the sidebar.")
        key = ui.data.dataset_key(settings)
        release = release_of(key, settings, "Present")
    except (ui.data.Refused, ValueError) as err:
        ui.data.explain_error(err)
        st.stop()
    n, d = X.shape
    return OnDesk(settings, release, None, names, truth, n, d, key, None, ui.upload.upload_not_private(settings))


def _stop_unknown(asked: str) -> None:
    st.title("Present a release")
    st.error(
        f"There is no release `{escape_markdown(asked[:40])}` on this server: the link may be mistyped, or "
        "from another server. Make a release on the Explorer and present it from there."
    )
    st.stop()


def _stop_nothing_released(current: AppState) -> None:
    """Nothing released with these settings yet: say so, and offer the one press that makes it (practice
    data; an upload is released on the Explorer only, its cost said first)."""
    st.title("Present a release")
    real = ui.privacy.needs_explicit_release(current)
    st.info(
        f"Nothing has been released from {escape_markdown(ui.privacy.dataset_label(current))} with the sidebar's "
        "settings yet. Present shows the one release you make: press *Release* on the Explorer once the settings "
        "are chosen (ideally on the stand-in of the sweep pages, which costs no privacy)"
        + ("." if real else ", or release the sidebar's settings here.")
    )
    if not real and st.button("Release the sidebar's settings", type="primary"):
        try:
            made = release_of(ui.data.dataset_key(current), current, "Present")
        except (ui.data.Refused, ValueError) as err:
            ui.data.explain_error(err)
            st.stop()
        present(current, made.release_id)
        st.rerun()
    st.stop()


# --- the Explorer's release ---------------------------------------------------------------------------
def for_explorer(s: AppState, X, y, names, truth, halt) -> Shown:
    """The release of these settings (paid, or shown again for free), or for real data not yet released
    a preview on a stand-in of its public facts (free, until the user releases)."""
    key = ui.data.dataset_key(s)
    preview = (
        ui.privacy.needs_explicit_release(s)
        and ui.privacy.stored(s, key) is None
        and not ui.privacy.release_requested(s, key)
    )
    try:
        if preview:
            X, y, names = ui.data.preview_arrays(s)
            return Shown(X, y, names, None, ui.data.preview_release(key, s), ui.data.preview_nonprivate(key, s), True)
        return Shown(X, y, names, truth, release_of(key, s), None, False)  # non-private: when drawn
    except ui.data.Refused as err:
        st.error(escape_markdown(str(err)))  # the ledger's refusal: its budget, who can change it, what to do
        last_chart("until you go back to settings already released, or ask for less budget")
        halt()
    except Exception as err:  # noqa: BLE001 - shown as a message, never a traceback
        ui.data.explain_error(err)
        halt()
    raise AssertionError("halt() stops the run")


def from_link(s: AppState, found, data=None) -> Shown:
    """The release opened from the address (ui.shared): its stored numbers, nothing drawn or charged;
    beside it the non-private fit only when ``data`` (X, y, names, truth) is the public practice data."""
    release = ui.shared.intervals(found)
    if data is None:
        d = len(release.theta)
        names = found.payload.get("feature_names") or [f"x{j + 1}" for j in range(d)]
        return Shown(None, None, names, None, release, None, False)
    X, y, names, truth = data
    return Shown(X, y, names, truth, release, None, False)  # the non-private fit: when drawn (its estimand)
