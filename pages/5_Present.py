"""Present: the current release, cleanly, for stakeholders; with downloads."""

from dataclasses import asdict

import streamlit as st

import ui
from dpci.explorer import interval_table, plain_summary
from dpci.figures import forest_plot, ledger_plot
from dpci.report import report_html

st.set_page_config(page_title="dpci: present", page_icon=":material/lock:", layout="wide")
settings = ui.sidebar(show_vi=False)
try:
    X, y, names, truth = ui.load_data(settings)
    problem = ui.c_problem(settings, len(X))
    if problem is not None:
        raise ValueError(problem[0] + " Fix c in the sidebar.")
    key = ui.dataset_key(settings)
    release = ui.cached_release(key, settings)
    nonprivate = ui.cached_nonprivate(key, settings)
except ValueError as err:
    st.error(str(err))
    st.stop()

vi_job = ui.existing_variability_job(settings)
vi = ui.shown_variability(vi_job.latest, settings.alpha) if vi_job is not None else None
table = interval_table(names, release, nonprivate, vi, truth, settings.alpha)
title = f"What the private model says, with {100 * settings.level:g}% confidence"
st.title(title)
sentences = plain_summary(table, release.spend, settings.priv, settings.level, len(X), settings.delta)
for line in sentences:
    st.markdown(f"- {line}")
chart = forest_plot(table, level=settings.level)
chart.update_layout(height=max(420, 90 + 60 * len(names)), font=dict(size=17))
st.plotly_chart(chart, width="stretch", config={"displaylogo": False})
ledger = release.spend.to_frame()
ledger_fig = ledger_plot(ledger, unit="epsilon" if settings.priv == "pure" else "rho")
st.plotly_chart(ledger_fig, width="stretch")

st.subheader("Downloads")
c1, c2, c3 = st.columns(3)
c1.download_button("Intervals (CSV)", table.to_csv(index=False), "private-intervals.csv", "text/csv",
                   width="stretch")
c2.download_button("Chart (HTML)", chart.to_html(include_plotlyjs=True), "private-intervals-chart.html",
                   "text/html", width="stretch")
report = report_html(title, asdict(settings), sentences, table, ledger, [chart, ledger_fig])
c3.download_button("Full report (one HTML file)", report, "private-intervals-report.html", "text/html",
                   width="stretch", type="primary")
