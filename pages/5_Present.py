"""Present: the current release, cleanly, for stakeholders; with downloads."""

import streamlit as st

import ui.release_desk
import ui.sidebar
from ui import present, present_page

st.set_page_config(page_title="dpci: present", page_icon="🔒", layout="wide")
current = ui.sidebar.sidebar(show_vi=False)
desk = ui.release_desk.for_present(current)  # the release to present, or the reason there is none (stops)
present_page.header(desk, current)
headline = st.container()  # the odds ratios, drawn here once the audience has chosen the table
table, internal, release, bias, symbol = present_page.audience_table(desk)
said = present_page.sentences(desk, table, internal, release, bias)
chart = present_page.interval_chart(desk, table)
with headline:
    odds = present.odds_ratios(table, desk.settings, desk.not_private, desk.stored, desk.upload, symbol, release.c)
ledger, spend = present_page.spend_chart(desk, release)
present_page.downloads(desk, table, internal, odds, said, (chart, spend), ledger)
present_page.release_as_code(desk)
