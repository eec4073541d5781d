"""The app's privacy bookkeeping, on the library's ledger (dpci.ledger): one database for the server
(an SQLite file in the data directory unless DPCI_DATABASE_URL or ``[connections.dpci]`` in Streamlit's
secrets says otherwise), so a reload, a new tab or a restart meets the same spend.

* Two rules, chosen by the server from the data it loads, never from what a visitor sends. The shipped
  datasets (Adult, synthetic) are public *practice data*: every release draws its noise and goes into
  the visitor's practice ledger (a random id in a cookie picks whose, never which rule), which marks what
  a curator's budget would refuse and refuses nothing. Real data (an upload) is one dataset for the
  whole server, and its budget refuses.
* A release is named by its *identity*: the data and every setting its noise depends on (not the
  level, m or delta: post-processing). The Explorer shows the stored release of that identity if
  there is one (free: nothing is drawn); otherwise it asks the ledger to admit a new release (refused
  before any noise when the budget cannot pay) and stores its public outputs under an unguessable id.
* Teaching mode draws with a public seed: recorded as not private, never counted.
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass

import streamlit as st

from dpci import methods as registry
from dpci.ledger import Ledger, Status
from dpci.ledger.records import StoredIntervals
from dpci.notions import NOTIONS, notion
from dpci.presentation.tables import escape_markdown
from ui.app_state import AppState
from ui.release_names import RENAMING, identity, renamed
from ui.settings import label, settings_record
from ui.upload import canonical_table, table_columns, table_identity

COOKIE = "dpci_visitor"
VISITOR = "_visitor"  # session_state: this browser's visitor id
CHOSEN = "_released"  # session_state: dataset key -> the release id Present shows
NOTED = "_noted"  # session_state: what this session has already recorded as not private
SHIPPED = {"adult": "adult", "synthetic": "synthetic"}


def server_env(secrets, environ) -> dict:
    """The ledger's configuration: the environment, and Streamlit's secrets.toml where the environment
    says nothing (``[connections.dpci] url``, the ``st.connection`` convention; ``[dpci] budget``,
    ``demo_budget``, ``secret``)."""
    env = dict(environ)
    connection = dict(secrets.get("connections", {}) or {}).get("dpci", {}) or {}
    if connection.get("url") and not env.get("DPCI_DATABASE_URL"):
        env["DPCI_DATABASE_URL"] = str(connection["url"])
    for name, value in dict(secrets.get("dpci", {}) or {}).items():
        env.setdefault(f"DPCI_{name.upper()}", str(value))
    return env


@st.cache_resource(show_spinner=False)
def ledger() -> Ledger:
    """The server's ledger (one per process, shared by every session)."""
    try:
        secrets = st.secrets.to_dict()
    except (FileNotFoundError, KeyError, AttributeError):  # no secrets file: the environment only
        secrets = {}
    except Exception:  # noqa: BLE001 - a secrets file that does not parse: said by Streamlit; the environment only
        secrets = {}
    book = Ledger.from_config(server_env(secrets, os.environ))
    # releases stored under an older name get the current one, once per database (ui.release_names)
    book.rename_releases(RENAMING, renamed)
    return book


def visitor() -> str:
    """This browser's visitor id: read from its cookie, else made now (and written by
    :func:`write_visitor_cookie`), so a reload or a restart keeps the visitor's demo budget."""
    known = st.session_state.get(VISITOR)
    if known:
        return known
    try:
        cookie = st.context.cookies.get(COOKIE, "")
    except Exception:  # noqa: BLE001 - no browser (a test harness): a new id
        cookie = ""
    if not (isinstance(cookie, str) and re.fullmatch(r"[A-Za-z0-9_-]{16,64}", cookie)):
        cookie = secrets.token_urlsafe(16)
        st.session_state["_write_cookie"] = True
    st.session_state[VISITOR] = cookie
    return cookie


def write_visitor_cookie() -> None:
    """Set the visitor cookie in the browser once (a script in the page; a year, this site only)."""
    if st.session_state.pop("_write_cookie", False):
        st.html(
            f"<script>document.cookie = '{COOKIE}={visitor()}; path=/; max-age=31536000; SameSite=Strict';</script>",
            unsafe_allow_javascript=True,
        )


@dataclass(frozen=True)
class DataRef:
    """The settings' dataset in the ledger: its ``key``, a ``label`` for people, and whether it is
    ``demo`` (public practice) data."""

    key: str
    label: str
    demo: bool


def dataset_ref(s: AppState) -> DataRef:
    """The data behind the settings (the same people whatever d, n or the upload's choices), registered
    in the ledger with the server's default budget on first sight. Practice data only for the shipped
    files ``SHIPPED`` names, which :func:`ui.datasets.load_data` reads for these settings; anything else
    is an upload, real data."""
    book = ledger()
    if s.data.dataset in SHIPPED:
        name = SHIPPED[s.data.dataset]
        ref = DataRef(book.key_of(f"dpci shipped data: {name}", scope=visitor()), dataset_label(s), True)
    else:
        kept = st.session_state.get("upload_kept")
        if kept is not None:
            ref = DataRef(upload_key(book, kept), f"your upload {kept[0]}", False)
        elif st.session_state.get("upload_digest"):  # an upload read without its file kept (tests)
            ref = DataRef(book.key_of(f"upload {st.session_state['upload_digest']}"), "your upload", False)
        else:
            raise ValueError("No CSV uploaded yet: upload one on the Explorer, or pick Adult or Synthetic.")
    book.ensure(ref.key, ref.label, demo=ref.demo)
    return ref


def upload_key(book: Ledger, kept) -> str:
    """The ledger key of the kept upload ``(name, bytes, digest)``: the dataset of the same people
    (:meth:`dpci.ledger.Ledger.table_key`, found once per file and session), or for a file that is no
    table, its bytes. Raises ValueError when the ledger cannot tell which budget it meets."""
    keys = st.session_state.setdefault("_upload_keys", {})
    if kept[2] not in keys:
        table = table_columns(kept)
        label = f"your upload {kept[0]}"
        if table is None:
            keys[kept[2]] = book.key_of(table_identity(kept))
        else:
            match = book.match_table(table, label)
            keys[kept[2]] = match.key
            st.session_state.setdefault(UPLOAD_WHY, {})[kept[2]] = match.why
    return keys[kept[2]]


UPLOAD_WHY = "_upload_why"  # session_state: file digest -> why it meets a known budget (None: its own or nested)


def upload_why() -> str | None:
    """Why the kept upload meets the budget of a table uploaded before, when it only shares columns with it."""
    kept = st.session_state.get("upload_kept")
    return None if kept is None else st.session_state.get(UPLOAD_WHY, {}).get(kept[2])


canonical_upload = canonical_table  # the library's, so the app and the command line name an upload alike


def dataset_label(s: AppState) -> str:
    if s.data.dataset == "upload":
        kept = st.session_state.get("upload_kept")
        return f"your upload {kept[0]}" if kept else "your upload"
    return label(s, "dataset").split(" (")[0]  # "Adult", "Synthetic"


def status(s: AppState) -> Status:
    return ledger().status(dataset_ref(s).key)


def spend_of(s: AppState):
    """What a release of these settings spends: the spec's privacy map, the one the ledger charges."""
    return s.spec.measure().spend


def describe(s: AppState) -> str:
    return f"{registry.get(s.spec.method).label}, {s.notion.say(s.spec.budget)}, c = {s.spec.c:g}"


def spec_of(s: AppState, where: str) -> dict:
    """What the ledger stores about a release made from the app: its settings (described once,
    :func:`ui.settings.settings_record`), the page, why it
    is not private (values read from an upload; None when it is), and for an upload its public
    description (file name, target, bounds, categories), so its script can read the same columns the
    same way."""
    from ui.upload import upload_not_private

    # not_private: recorded with the release, so Present says the same after a reload, in any browser
    # (dpci.ledger.records.not_private_reason reads it)
    spec = dict(source="app", **settings_record(s), page=where, not_private=upload_not_private(s))
    result, kept = st.session_state.get("upload_result"), st.session_state.get("upload_kept")
    if s.data.dataset == "upload" and result is not None:
        from ui.export import upload_spec

        spec["upload"] = upload_spec(result, kept[0] if kept else "your-data.csv", st.session_state.get("upload_sep"))
    return spec


def stored(s: AppState, data_key: str) -> StoredIntervals | None:
    """The stored release of these settings, if one was made (showing it again is free)."""
    ref = dataset_ref(s)
    book = ledger()
    found = book.find_release(ref.key, identity(s, data_key))
    return None if found is None else StoredIntervals.from_payload(found.payload, found.id)


REQUESTED = "_release_requested"  # session_state: release identities the user asked to make


def needs_explicit_release(s: AppState) -> bool:
    """Real data (an upload) with fresh randomness: the Explorer previews on a stand-in and touches the
    data only when the user presses Release, its cost shown first. Demo data stays live (a class sees
    the ledger work, within each visitor's demo budget); teaching mode is free."""
    return s.data.dataset not in SHIPPED and not s.teaching


def request_release(s: AppState, data_key: str) -> None:
    """Button callback: make the release of these settings now (the Explorer's next run admits it)."""
    st.session_state.setdefault(REQUESTED, set()).add(identity(s, data_key))


def forget_request(s: AppState, data_key: str) -> None:
    """A requested release was refused: back to the preview for these settings."""
    st.session_state.get(REQUESTED, set()).discard(identity(s, data_key))


def release_requested(s: AppState, data_key: str) -> bool:
    return identity(s, data_key) in st.session_state.get(REQUESTED, set())


def preview_cost(s: AppState) -> tuple[str, bool]:
    """(what pressing Release would cost, in words; whether the ledger would admit it)."""
    preview = ledger().preview(dataset_ref(s).key, spend_of(s))
    symbol = preview.budget.symbol
    own = s.notion.amount(spend_of(s))
    what = f"Release at {symbol} = {own:.3g}" if preview.charge == preview.charge else "This release"
    return preview.describe(what), preview.admitted


def refusal(s: AppState) -> str | None:
    """Why a new release of these settings would be refused (the ledger's filter), or None: never for
    practice data (counted and marked instead) nor in teaching mode."""
    if s.teaching:
        return None
    ref = dataset_ref(s)
    if ref.demo:
        return None
    preview = ledger().preview(ref.key, spend_of(s))
    return None if preview.admitted else preview.reason


def practice(s: AppState):
    """The visitor's practice ledger of the settings' dataset (:class:`dpci.ledger.Practice`), or None
    for real data."""
    ref = dataset_ref(s)
    return ledger().practice(ref.key) if ref.demo else None


def start_again(s: AppState) -> None:
    """Button callback: forget this visitor's practice releases of the settings' dataset (practice data
    only: the ledger refuses to reset real data)."""
    ref = dataset_ref(s)
    ledger().reset(ref.key)
    st.session_state.get(CHOSEN, {}).pop(ref.key, None)
    st.session_state.pop("_last_forest", None)


def notion_refusals(s: AppState) -> dict[str, str]:
    """The privacy notions the settings' dataset cannot pay for, with the reason in words: a zCDP
    release on real data whose budget is pure ε-DP (no ε describes it). Empty for practice data."""
    try:
        ref = dataset_ref(s)
    except ValueError:  # no upload yet: nothing to say
        return {}
    if ref.demo:
        return {}
    budget = ledger().status(ref.key).budget
    held = notion(budget.notion)
    return {
        n.name: f"{n.label} is not offered: this data's budget, {budget.describe()}, is {held.label[:1].lower()}{held.label[1:]}, which no "
        f"{n.symbol} release fits. Only whoever runs the server can give it a {n.label} budget."
        for n in NOTIONS.values()
        if budget.notion not in n.counted_by
    }


def note_not_private(s: AppState, key: str, what: str) -> None:
    """Record on the ledger, once per session and ``key``, a result from the data no guarantee covers."""
    noted = st.session_state.setdefault(NOTED, set())
    ref = dataset_ref(s)
    if (ref.key, key) in noted:
        return
    ledger().note(ref.key, what=what, spec=settings_record(s), session=visitor())
    noted.add((ref.key, key))


def choose(s: AppState, release_id: str) -> None:
    """Make a stored release the one Present shows (it is already paid for)."""
    st.session_state.setdefault(CHOSEN, {})[dataset_ref(s).key] = release_id
    st.query_params["release"] = release_id


def chosen(s: AppState) -> str | None:
    """The id of the release chosen for Present for the settings' dataset, or None."""
    try:
        return st.session_state.get(CHOSEN, {}).get(dataset_ref(s).key)
    except ValueError:  # no upload yet: nothing chosen
        return None


def release_sentences(release_id: str | None) -> list[str]:
    """What Present says about a stored release's randomness and about what else was computed from
    the same data before it was chosen."""
    if release_id is None:
        return []  # teaching mode: plain_summary already says a fixed seed made it
    found = ledger().release(release_id)
    if found is None or found.charge is None:
        return []
    lines = ["Drawn with fresh, secret randomness from the operating system (never shown or stored)."]
    status_now = ledger().status(found.dataset)
    if status_now.group_size > 1:
        lines.append(protects(status_now.group_size))
    before = float(found.charge["spent_before"])
    b = status_now.budget
    if before > 0:
        lines.append(
            f"Before this release, {b.describe(before)} had already been spent on this data (releases looked at "
            f"first). If they guided the choice of settings, the total spent with this one, "
            f"{b.describe(before + float(found.charge['charge']))}, not this release's own, is the guarantee of "
            "what is published."
        )
    if status_now.not_private:
        k = status_now.not_private
        shown = f"{k} result{'s' * (k != 1)} computed from this data without privacy {'were' if k != 1 else 'was'}"
        lines.append(
            f"{shown} shown on these pages (the Explorer's non-private and variability intervals, teaching-mode "
            "previews or sweeps), and the ledger counts them: where they guided the choice of split or c, that "
            "choice was made from the data."
        )
    return lines


def practice_mark(s: AppState) -> str:
    """The mark of the release the page shows for these settings, if a curator would refuse it ("" if
    not, or if nothing of these settings is stored yet: then of the last release drawn)."""
    from ui.datasets import dataset_key

    if s.teaching:  # a public seed: the page shows no private release, and spent nothing
        return ""
    shown = stored(s, dataset_key(s))
    return practice(s).mark(shown.release_id if shown is not None else None)


def practice_caption(s: AppState) -> str:
    """The visitor's practice ledger: what was spent, as its budget counts it (the conversion behind
    :func:`practice_help`)."""
    book = practice(s)
    text = f"**Practice ledger** · {escape_markdown(dataset_label(s))}, your browser  \n{book.describe()}."
    over = f"; {book.over} {'is' if book.over == 1 else 'are'} over the practice budget" if book.over else ""
    return f"{text}  \nPublic data, so nothing is refused{over}."


def practice_help(s: AppState) -> str:
    """The help tip beside the practice ledger's total: how it was counted (dpci.ledger.Practice.conversion)."""
    return practice(s).conversion()


def ledger_caption(s: AppState) -> str:
    """One line: what this dataset has spent, of its budget (and the server's total for demo data)."""
    st_ = status(s)
    who = "your browser" if st_.demo else "everyone on this server"
    text = f"**Privacy ledger** · {escape_markdown(st_.label)}, {who}  \n{st_.describe()}"
    if st_.group_size > 1:
        text += f"  \nEach person may have up to {st_.group_size} rows: charges are for the group."
    if st_.demo and st_.server_releases > st_.releases:
        text += (
            f"  \nAll visitors: {st_.server_releases} releases, {st_.budget.symbol} = {st_.server_spent:.3g} in total."
        )
    return text


def history_csv(history: list[dict]) -> str:
    """The ledger's history of a dataset as CSV (time in UTC; what; private: whether what it made carries
    a guarantee, a stored release's own record deciding; counted: whether the ledger charged it; charge;
    total before)."""
    import datetime as dt

    import pandas as pd

    from dpci.ledger.records import not_private_reason
    from dpci.presentation.tables import csv_safe

    def private(r) -> bool:
        stored = ledger().release(r["release"]) if r["private"] and r["release"] else None
        return bool(r["private"]) and (stored is None or not_private_reason(stored) is None)

    rows = [
        dict(
            time=dt.datetime.fromtimestamp(r["time"], dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
            what=r["what"],
            private=private(r),
            counted=r["private"],
            charge=r["charge"],
            spent_before=r["spent_before"],
            release=r["release"] or "",
        )
        for r in history
    ]
    return csv_safe(pd.DataFrame(rows)).to_csv(index=False)


def protects(group_size: int) -> str:
    """Whom the guarantee protects, in words."""
    if group_size == 1:
        return "The guarantee protects each row (one row is one person)."
    return f"The guarantee protects each person with up to {group_size} rows (every charge is for the group)."
