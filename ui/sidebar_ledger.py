"""The privacy ledger in the settings sidebar: the odometer under the budget (redrawn after each
release), Start again for practice data, and the panel with the dataset's budget and history."""

from __future__ import annotations

import streamlit as st

from dpci.notions import notion
from dpci.presentation.tables import escape_markdown
from ui import privacy as ledger_view
from ui.app_state import AppState
from ui.state import current_settings

ODOMETER_SLOT = "_odometer_slot"  # session_state: this run's sidebar slot of the privacy ledger


def draw_odometer(s: AppState):
    """The privacy ledger of the settings' dataset in its sidebar slot (redrawn after each release):
    for practice data the visitor's practice ledger, with its marks and a way to start again."""
    slot = st.session_state.get(ODOMETER_SLOT)
    if slot is None:
        return
    box = slot.container(border=True)
    try:
        status = ledger_view.status(s)
    except ValueError:  # no upload yet
        box.markdown("**Privacy ledger** · no dataset yet")
        return
    if status.demo:
        _practice_odometer(box, s)
        return
    box.markdown(ledger_view.ledger_caption(s))
    box.progress(min(status.spent / status.budget.amount, 1.0))
    if why := ledger_view.upload_why():
        box.caption(f"One budget: {escape_markdown(why)}.")
    if status.not_private:
        box.caption(
            f"+ {status.not_private} result{'s' * (status.not_private != 1)} no guarantee covers "
            "(teaching mode, non-private or bootstrap intervals, sweeps on the real data)."
        )


def _practice_odometer(box, s: AppState) -> None:
    book = ledger_view.practice(s)
    box.markdown(ledger_view.practice_caption(s), help=ledger_view.practice_help(s))
    spent = notion(book.budget.notion).amount(book)
    box.progress(1.0 if spent is None else min(spent / book.budget.amount, 1.0))
    mark = ledger_view.practice_mark(s)
    if mark:
        box.warning(mark)


def start_again_button(sb, s: AppState) -> None:
    """Practice data: a button that starts the visitor's practice ledger again (drawn once a run, under
    the ledger, which a release redraws)."""
    try:
        practice = ledger_view.dataset_ref(s).demo
    except ValueError:  # no upload yet
        return
    if practice:
        sb.button(
            "Start again",
            on_click=ledger_view.start_again,
            args=(s,),
            key="start_again",
            help="Forget your practice releases of this dataset and begin a new practice ledger.",
        )


def ledger_panel(sb):
    """The dataset's budget (set by whoever runs the server) and its history, with a download."""
    panel = sb.expander("Privacy ledger: budget and history", key="odometer_panel", on_change="rerun")
    if not panel.open:
        return
    s = current_settings()
    try:
        ref = ledger_view.dataset_ref(s)
    except ValueError as err:
        panel.caption(str(err))
        return
    status = ledger_view.ledger().status(ref.key)
    group = (
        ""
        if status.group_size == 1
        else f" One person may contribute up to {status.group_size} rows: every charge is for the group."
    )
    history = ledger_view.ledger().history(ref.key)
    if status.demo:
        panel.caption(
            f"Practice budget {status.budget.describe()}. This data is public, so nothing is refused: each browser "
            "keeps its own practice ledger (in a cookie), and a release past the budget is marked as one a "
            "curator would refuse. Showing a stored release again costs nothing."
        )
        refused = ledger_view.ledger().practice(ref.key).refused  # the private releases, oldest first
        marks = dict(zip((r["id"] for r in history if r["private"]), refused))
    else:
        panel.caption(
            f"Budget {status.budget.describe()}, fixed by whoever runs the server before the first release; no "
            f"page can raise it. One budget for this data, shared by everyone on this server.{group} Every "
            "release is admitted before its noise is drawn; showing a stored release again costs nothing."
        )
        marks = {}
    for row in history[-12:]:
        cost = f"{status.budget.symbol} = {row['charge']:.3g}" if row["private"] else "not private"
        if marks.get(row["id"]):
            cost += "; a curator would refuse it"
        panel.caption(f"• {escape_markdown(row['what'])} ({cost})")
    if history:
        panel.download_button(
            "History (CSV)",
            ledger_view.history_csv(history),
            "privacy-ledger.csv",
            "text/csv",
            on_click="ignore",
            width="stretch",
        )
