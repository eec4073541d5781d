"""Present: the current release, cleanly, for stakeholders; with downloads."""

from datetime import datetime, timezone

import streamlit as st

import dpci
import ui.background
import ui.choice_of_c
import ui.data
import ui.layout
import ui.privacy
import ui.shared
import ui.sidebar
import ui.state
import ui.upload
from dpci.ledger.records import StoredIntervals, not_private_reason
from dpci.presentation.figures import forest_plot, ledger_plot, plain
from dpci.presentation.odds import readable_odds
from dpci.presentation.report import report_html
from dpci.presentation.tables import escape_markdown, interval_table, plain_summary, release_too_wide
from ui import export, present
from ui.settings import settings_from_spec

st.set_page_config(page_title="dpci: present", page_icon="🔒", layout="wide")
current = ui.sidebar.sidebar(show_vi=False)
asked = st.query_params.get("release")  # a link to a stored release: exactly its numbers, never new noise
shared = ui.shared.active(current)  # a release opened from the Explorer's link, while its settings stay
# a link's release, else the one chosen, else the one the Explorer made with the sidebar's settings
release_id = (
    asked
    or (shared.id if shared is not None else None)
    or ui.privacy.chosen(current)
    or ui.data.current_release_id(current)
)
stored = ui.privacy.ledger().release(release_id) if release_id else None
if asked and stored is None:
    st.title("Present a release")
    st.error(
        f"There is no release `{escape_markdown(asked[:40])}` on this server: the link may be mistyped, or "
        "from another server. Make a release on the Explorer and present it from there."
    )
    st.stop()
if stored is None and not current.teaching:
    st.title("Present a release")
    real = ui.privacy.needs_explicit_release(current)  # an upload: released on the Explorer only, its cost said first
    st.info(
        f"Nothing has been released from {escape_markdown(ui.privacy.dataset_label(current))} with the sidebar's "
        "settings yet. Present "
        "shows the one release you make: press *Release* on the Explorer once the settings are "
        "chosen (ideally on the stand-in of the sweep pages, which costs no privacy)"
        + ("." if real else ", or release the sidebar's settings here.")
    )
    if not real and st.button("Release the sidebar's settings", type="primary"):
        try:
            made = ui.data.cached_release(ui.data.dataset_key(current), current, "Present")
        except (ui.data.Refused, ValueError) as err:
            ui.data.explain_error(err)
            st.stop()
        ui.privacy.choose(current, made.release_id)
        st.rerun()
    st.stop()
if stored is not None:
    try:
        settings = settings_from_spec(stored.spec)
    except (ValueError, TypeError, KeyError) as err:  # e.g. a loss or method this server has not registered
        st.error(
            f"Release `{stored.id}` cannot be shown here: {escape_markdown(str(err))} It was made with a "
            "method or loss this server does not have; open it where it was made, or read its record."
        )
        st.stop()
    release = StoredIntervals.from_payload(stored.payload, stored.id)
    st.query_params["release"] = stored.id  # a reload or a copied address shows the same release
else:  # teaching mode without a release: the sidebar's settings, drawn from the public seed
    settings = current
has_data = True
try:
    try:
        X, y, names, truth = ui.data.load_data(settings)
    except ValueError:  # a stored release whose data is not in this session (an upload, the command line)
        if stored is None:
            raise
        has_data, names, truth = False, None, None
    key = ui.data.dataset_key(settings)
    if stored is None:
        problem = ui.data.c_problem(settings, len(X))
        if problem is not None:
            raise ValueError(problem[0] + " Fix c in the sidebar.")
        release = ui.data.cached_release(key, settings, "Present")
except (ui.data.Refused, ValueError) as err:
    ui.data.explain_error(err)
    st.stop()
if stored is not None:  # the stored release says its own size and names: nothing read from the data
    n, d = release.n, len(release.theta)
    names = stored.payload.get("feature_names") or names or [f"x{j + 1}" for j in range(d)]
else:
    n, d = X.shape

upload = stored.spec.get("upload") if stored is not None else None  # what the release says of its file
# What is not private is the stored release's own record (made with it), so a reload, another browser
# and every download say the same; only a teaching-mode preview (nothing stored) reads this session.
not_private = not_private_reason(stored) if stored is not None else ui.upload.upload_not_private(settings)
model = "model (not private)" if not_private else "private model"
title = f"What the {model} says about {present.outcome(settings, upload)}, with {100 * settings.level:g}% confidence"
st.html(ui.layout.COMPACT)  # the headline and the first odds ratio on a projector's first screen
st.markdown("# " + escape_markdown(title))  # the outcome may name an upload's columns
if stored is None:
    st.warning("Teaching mode: a preview of the sidebar's settings drawn with a public seed; nothing is released.")
else:
    when = datetime.fromtimestamp(stored.created, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    differ = (
        ""
        if settings == current
        else " The sidebar's settings differ: release those on the Explorer to present them instead."
    )
    st.caption(
        f"Release `{stored.id}`, made {when} ({escape_markdown(ui.privacy.describe(settings))}): the stored "
        f"numbers, the same in any browser and after a restart.{differ}"
    )
if not_private:  # on the first screen, before any number
    st.error(f"Not private: {escape_markdown(not_private)}")
for caveat in getattr(release, "caveats", ()):  # the method's own word on this release's coverage, stored with it
    st.warning(escape_markdown(caveat))
headline = st.container()  # the odds ratios, drawn here once the audience has chosen the table
PUBLIC, INTERNAL = "Public: private numbers only", "Internal: with non-private comparisons"
audience = ui.state.kept_widget(
    st.radio,
    "Audience",
    [PUBLIC, INTERNAL],
    "present_audience",
    horizontal=True,
    help="The non-private and variability intervals are computed from the data without "
    "privacy: they help a team judge the price of privacy, but must not be published.",
)
internal = audience == INTERNAL and has_data
if audience == INTERNAL and not has_data:
    st.caption("The non-private comparisons need the data, which is not in this session: the public view is shown.")
# theta from the release alone, or theta_0(c) widened by a stated bound, or theta_0(c) (post-processing)
release, bias, _, theta_said = ui.choice_of_c.shown_for_table(settings, release)
if theta_said:
    st.info(escape_markdown(theta_said))
if internal:
    vi_job = ui.background.existing_variability_job(settings)
    vi = ui.background.shown_variability(vi_job.latest, settings.spec.alpha) if vi_job is not None else None
    table = interval_table(
        names, release, ui.data.cached_nonprivate(key, settings), vi, truth, settings.spec.alpha, bias=bias
    )
    st.warning(
        "Internal view: the green non-private and blue variability intervals, and the width comparison, "
        "are **not private**. Do not publish them: choose *Public* for material that leaves the team."
    )
else:
    table = interval_table(names, release, alpha=settings.spec.alpha, bias=bias)
if wide := release_too_wide(table):
    st.warning(wide)

sentences = plain_summary(
    table,
    release.spend,
    settings.spec.privacy,
    settings.level,
    n,
    settings.view.delta,
    seed=settings.data.seed if settings.teaching else None,
    not_private=not_private,
    accounts_for_privacy_noise=dpci.methods.get(settings.spec.method).accounts_for_privacy_noise,
)
sentences.insert(0, ui.choice_of_c.estimand_sentence(settings, release, bias))
sentences += ui.privacy.release_sentences(stored.id if stored is not None else None)
if internal:
    sentences.insert(0, "Internal: this page shows non-private comparisons; do not publish it.")
for line in sentences:
    st.markdown(f"- {escape_markdown(line)}")  # plain sentences; an upload's column names among them
chart = forest_plot(table, level=settings.level)
big = dict(size=17)
chart.update_layout(height=max(420, 90 + 60 * len(names)), font=big, legend_font=big)
# long one-hot names on two lines ("workclass=" above "Self-emp-not-inc"): in a narrow window the
# labels would otherwise take half the chart at this font size
labels = [plain(f).replace("=", "=<br>", 1) if len(f) > 16 else plain(f) for f in table["feature"]]
chart.update_xaxes(tickfont=big, title_font=big).update_yaxes(tickfont=big, ticktext=labels)
provenance = present.provenance(stored)
if stored is not None:  # the chart carries the release's id, in the page and in its download
    chart.add_annotation(
        text=f"dpci release {stored.id}",
        xref="paper",
        yref="paper",
        x=1,
        y=1.02,
        showarrow=False,
        xanchor="right",
        yanchor="bottom",
        font=dict(size=12, color="#666"),
    )
if not_private:  # the chart travels alone (its HTML download): it says so itself
    chart.update_layout(title=dict(text="Not private: no privacy guarantee", font=dict(color="#b00020")))
st.plotly_chart(chart, width="stretch", config={"displaylogo": False})
with headline:
    odds = present.odds_ratios(table, settings, not_private, stored, upload)
ledger = release.spend.to_frame()
ledger_fig = ledger_plot(
    ledger,
    unit=settings.notion.unit,
    title="What a private release would spend (teaching mode: not private, nothing spent)"
    if settings.teaching
    else "Privacy spent, step by step",
)
st.plotly_chart(ledger_fig, width="stretch")

st.subheader("Downloads")
if internal or present.guarantee_void(settings, not_private):
    st.caption("What you download is what this page shows: it includes numbers that are not private.")
    name = "intervals-internal" if internal else "intervals-not-private"
else:
    st.caption("What you download is what this page shows: the private intervals only.")
    name = "private-intervals"
c1, c2, c3 = st.columns(3)
# on_click="ignore": a download does not rerun the page, so a second click right after is not cancelled
c1.download_button(
    "Intervals (CSV)",
    present.intervals_csv(table, settings, n, d, not_private, odds, provenance, upload),
    f"{name}.csv",
    "text/csv",
    width="stretch",
    on_click="ignore",
)
# The HTML files embed plotly.js (about 5 MB each): built when clicked, not on every run of the page.
c2.download_button(
    "Chart (HTML)",
    lambda: chart.to_html(include_plotlyjs=True),
    f"{name}-chart.html",
    "text/html",
    width="stretch",
    on_click="ignore",
)
c3.download_button(
    "Full report (HTML)",
    lambda: report_html(
        title,
        {**present.settings_in_words(settings, n, d, not_private, upload), **provenance},
        sentences,
        table,
        ledger,
        [chart, ledger_fig],
        None if odds is None else readable_odds(odds, settings.level),
    ),
    f"{name}-report.html",
    "text/html",
    width="stretch",
    type="primary",
    on_click="ignore",
)
if stored is not None:
    st.caption(
        "The release as code: its record (the stored numbers, the settings and what it cost, as JSON), and a "
        "Python script or notebook that makes a release with the same settings on your own copy of the data "
        "(fresh randomness: a new release, on the script's own ledger)."
    )
    downloads = (
        ("Release record (JSON)", export.release_record(stored), "json", "application/json"),
        ("Python script", export.release_script(settings, stored), "py", "text/x-python"),
        ("Notebook", export.release_notebook(settings, stored), "ipynb", "application/x-ipynb+json"),
    )
    for column, (label, data, ending, mime) in zip(st.columns(3), downloads):
        column.download_button(label, data, f"release-{stored.id}.{ending}", mime, width="stretch", on_click="ignore")
