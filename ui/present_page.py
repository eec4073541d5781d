"""Present's parts, drawn in order by pages/5_Present.py from the release the desk found (ui.release_desk):
the headline, the audience's table, the sentences, the charts and the downloads."""

from __future__ import annotations

from datetime import datetime, timezone

import streamlit as st

import dpci
import ui.background
import ui.data
import ui.estimand_shown
import ui.layout
import ui.privacy
import ui.state
from dpci.presentation.figures import forest_plot, ledger_plot, plain
from dpci.presentation.odds import readable_odds
from dpci.presentation.report import report_html
from dpci.presentation.tables import escape_markdown, interval_table, plain_summary, release_too_wide
from ui import export, present
from ui.app_state import AppState
from ui.release_desk import OnDesk

PUBLIC, INTERNAL = "Public: private numbers only", "Internal: with non-private comparisons"
BIG = dict(size=17)


def title(desk: OnDesk) -> str:
    model = "model (not private)" if desk.not_private else "private model"
    outcome = present.outcome(desk.settings, desk.upload)
    return f"What the {model} says about {outcome}, with {100 * desk.settings.level:g}% confidence"


def header(desk: OnDesk, current: AppState) -> None:
    """The headline, which release it is, and what the reader must know before any number."""
    st.html(ui.layout.COMPACT)  # the headline and the first odds ratio on a projector's first screen
    st.markdown("# " + escape_markdown(title(desk)))  # the outcome may name an upload's columns
    if desk.stored is None:
        st.warning("Teaching mode: a preview of the sidebar's settings drawn with a public seed; nothing is released.")
    else:
        when = datetime.fromtimestamp(desk.stored.created, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        differ = (
            ""
            if desk.settings == current
            else " The sidebar's settings differ: release those on the Explorer to present them instead."
        )
        st.caption(
            f"Release `{desk.stored.id}`, made {when} ({escape_markdown(ui.privacy.describe(desk.settings))}): "
            f"the stored numbers, the same in any browser and after a restart.{differ}"
        )
    if desk.not_private:  # on the first screen, before any number
        st.error(f"Not private: {escape_markdown(desk.not_private)}")
    for caveat in getattr(desk.release, "caveats", ()):  # the method's own word on its coverage, stored with it
        st.warning(escape_markdown(caveat))


def audience_table(desk: OnDesk):
    """The audience chosen, and the table it sees: (table, internal, the release drawn, its bias bound, the
    symbol of what its intervals are for)."""
    audience = ui.state.kept_widget(
        st.radio,
        "Audience",
        [PUBLIC, INTERNAL],
        "present_audience",
        horizontal=True,
        help="The non-private and variability intervals are computed from the data without "
        "privacy: they help a team judge the price of privacy, but must not be published.",
    )
    internal = audience == INTERNAL and desk.has_data
    if audience == INTERNAL and not desk.has_data:
        st.caption("The non-private comparisons need the data, which is not in this session: the public view is shown.")
    s = desk.settings
    # theta from the release alone, or theta_0(c) widened by a stated bound, or theta_0(c) (post-processing)
    release, bias, symbol, theta_said = ui.estimand_shown.shown_for_table(s, desk.release)
    if theta_said:
        st.info(escape_markdown(theta_said))
    if internal:
        job = ui.background.existing_variability_job(s)
        vi = ui.background.shown_variability(job.latest, s.spec.alpha) if job is not None else None
        nonprivate = ui.data.cached_nonprivate(desk.key, s, symbol)
        table = interval_table(desk.names, release, nonprivate, vi, desk.truth, s.spec.alpha, bias=bias)
        st.warning(
            "Internal view: the green non-private and blue variability intervals, and the width comparison, "
            "are **not private**. Do not publish them: choose *Public* for material that leaves the team."
        )
    else:
        table = interval_table(desk.names, release, alpha=s.spec.alpha, bias=bias)
    if wide := release_too_wide(table):
        st.warning(wide)
    return table, internal, release, bias, symbol


def sentences(desk: OnDesk, table, internal: bool, release, bias) -> list[str]:
    """What the release says, in plain sentences, drawn as a list."""
    s = desk.settings
    said = plain_summary(
        table,
        release.spend,
        s.spec.privacy,
        s.level,
        desk.n,
        s.view.delta,
        seed=s.data.seed if s.teaching else None,
        not_private=desk.not_private,
        accounts_for_privacy_noise=dpci.methods.get(s.spec.method).accounts_for_privacy_noise,
    )
    said.insert(0, ui.estimand_shown.estimand_sentence(s, release, bias))
    said += ui.privacy.release_sentences(desk.stored.id if desk.stored is not None else None)
    if internal:
        said.insert(0, "Internal: this page shows non-private comparisons; do not publish it.")
    for line in said:
        st.markdown(f"- {escape_markdown(line)}")  # plain sentences; an upload's column names among them
    return said


def interval_chart(desk: OnDesk, table):
    """The forest plot in large type, marked with the release's id and, alone, with what is not private."""
    chart = forest_plot(table, level=desk.settings.level)
    chart.update_layout(height=max(420, 90 + 60 * len(desk.names)), font=BIG, legend_font=BIG)
    # long one-hot names on two lines ("workclass=" above "Self-emp-not-inc"): in a narrow window the
    # labels would otherwise take half the chart at this font size
    labels = [plain(f).replace("=", "=<br>", 1) if len(f) > 16 else plain(f) for f in table["feature"]]
    chart.update_xaxes(tickfont=BIG, title_font=BIG).update_yaxes(tickfont=BIG, ticktext=labels)
    if desk.stored is not None:  # the chart carries the release's id, in the page and in its download
        chart.add_annotation(
            text=f"dpci release {desk.stored.id}",
            xref="paper",
            yref="paper",
            x=1,
            y=1.02,
            showarrow=False,
            xanchor="right",
            yanchor="bottom",
            font=dict(size=12, color="#666"),
        )
    if desk.not_private:  # the chart travels alone (its HTML download): it says so itself
        chart.update_layout(title=dict(text="Not private: no privacy guarantee", font=dict(color="#b00020")))
    st.plotly_chart(chart, width="stretch", config={"displaylogo": False})
    return chart


def spend_chart(desk: OnDesk, release):
    """What the release spent, step by step: (its table, the figure)."""
    ledger = release.spend.to_frame()
    teaching = "What a private release would spend (teaching mode: not private, nothing spent)"
    figure = ledger_plot(
        ledger,
        unit=desk.settings.notion.unit,
        title=teaching if desk.settings.teaching else "Privacy spent, step by step",
    )
    st.plotly_chart(figure, width="stretch")
    return ledger, figure


def downloads(desk: OnDesk, table, internal: bool, odds, said, charts, ledger) -> None:
    """What this page shows, as files: the intervals, the chart and the full report."""
    s, provenance = desk.settings, present.provenance(desk.stored)
    st.subheader("Downloads")
    if internal or present.guarantee_void(s, desk.not_private):
        st.caption("What you download is what this page shows: it includes numbers that are not private.")
        name = "intervals-internal" if internal else "intervals-not-private"
    else:
        st.caption("What you download is what this page shows: the private intervals only.")
        name = "private-intervals"
    c1, c2, c3 = st.columns(3)
    csv = present.intervals_csv(table, s, desk.n, desk.d, desk.not_private, odds, provenance, desk.upload)
    # on_click="ignore": a download does not rerun the page, so a second click right after is not cancelled
    c1.download_button("Intervals (CSV)", csv, f"{name}.csv", "text/csv", width="stretch", on_click="ignore")
    # The HTML files embed plotly.js (about 5 MB each): built when clicked, not on every run of the page.
    c2.download_button(
        "Chart (HTML)",
        lambda: charts[0].to_html(include_plotlyjs=True),
        f"{name}-chart.html",
        "text/html",
        width="stretch",
        on_click="ignore",
    )
    words = {**present.settings_in_words(s, desk.n, desk.d, desk.not_private, desk.upload), **provenance}
    odds_read = None if odds is None else readable_odds(odds, s.level)
    c3.download_button(
        "Full report (HTML)",
        lambda: report_html(title(desk), words, said, table, ledger, list(charts), odds_read),
        f"{name}-report.html",
        "text/html",
        width="stretch",
        type="primary",
        on_click="ignore",
    )


def release_as_code(desk: OnDesk) -> None:
    """A stored release's record, and a script and notebook that make one with the same settings."""
    if desk.stored is None:
        return
    stored, s = desk.stored, desk.settings
    st.caption(
        "The release as code: its record (the stored numbers, the settings and what it cost, as JSON), and a "
        "Python script or notebook that makes a release with the same settings on your own copy of the data "
        "(fresh randomness: a new release, on the script's own ledger)."
    )
    files = (
        ("Release record (JSON)", export.release_record(stored), "json", "application/json"),
        ("Python script", export.release_script(s, stored), "py", "text/x-python"),
        ("Notebook", export.release_notebook(s, stored), "ipynb", "application/x-ipynb+json"),
    )
    for column, (label, data, ending, mime) in zip(st.columns(3), files):
        column.download_button(label, data, f"release-{stored.id}.{ending}", mime, width="stretch", on_click="ignore")
