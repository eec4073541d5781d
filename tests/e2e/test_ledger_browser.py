"""The privacy ledger in Chromium: a release survives a reload, a new tab, another browser and a
server restart; the spend is never reset by a reload; on practice data a search past the budget runs
and is marked (tests/e2e/test_practice.py drives the Explorer's slider past it)."""

import json
import re
from urllib.parse import parse_qs, quote, urlparse

import pytest

from .conftest import ARTIFACTS, start_server, stop, wait_for_app

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

PRIVATE_BOUNDS = (
    "() => { const p = document.querySelector('.js-plotly-plot'); if (!p || !p.data) return null;"
    " const t = p.data.find(t => (t.name || '').toLowerCase().startsWith('private')); return t ? t.x : null; }"
)


def _bounds(page):
    page.wait_for_function(PRIVATE_BOUNDS)
    return page.evaluate(PRIVATE_BOUNDS)


def _ledger_text(page):
    box = page.locator('[data-testid="stSidebar"] [data-testid="stMarkdownContainer"]', has_text="ledger ·")
    box.first.wait_for()
    return box.first.inner_text()


def _explorer(page, url):
    page.goto(url)
    page.wait_for_selector(".js-plotly-plot")
    page.get_by_text(re.compile(r"\b1 release: ε = 3\.48 at δ = 1e-06 of ε = 10")).first.wait_for(timeout=60_000)
    wait_for_app(page)
    # the visitor's cookie is set by a script in the page: a reload before it would be a new visitor
    page.wait_for_function("() => document.cookie.includes('dpci_visitor=')", timeout=30_000)


@pytest.mark.slow  # over 15 s: -m 'not slow' leaves it out (CI runs it)
def test_a_release_survives_reloads_tabs_browsers_and_a_restart(app_url, browser, page):
    _explorer(page, f"{app_url}/?d=3")
    first = _bounds(page)
    page.reload()  # a reload: the stored release, not a new one; the spend is not reset
    _explorer(page, f"{app_url}/?d=3")
    assert _bounds(page) == first
    assert re.search(r"\b1 release:", _ledger_text(page))
    tab = page.context.new_page()  # a new tab of the same browser: the same visitor, the same spend
    _explorer(tab, f"{app_url}/?d=3")
    assert _bounds(tab) == first
    tab.close()

    # the Explorer's release is the one Present shows until another is chosen: the panel says so, no press needed
    page.get_by_role("button", name="Released").wait_for()
    assert page.get_by_role("button", name="Present this release", exact=True).count() == 0
    page.get_by_role("link", name="Present").first.click()
    page.wait_for_url(re.compile(r"/Present\?.*release="))
    page.wait_for_selector(".js-plotly-plot")
    wait_for_app(page)
    release_id = parse_qs(urlparse(page.url).query)["release"][0]
    shown = _bounds(page)
    assert page.get_by_text(release_id).count() >= 1
    page.screenshot(path=str(ARTIFACTS / "present-stored-release.png"), full_page=True)
    page.reload()
    page.wait_for_selector(".js-plotly-plot")
    assert _bounds(page) == shown

    other = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()  # another browser
    other.goto(f"{app_url}/Present?release={release_id}")
    other.wait_for_selector(".js-plotly-plot")
    assert _bounds(other) == shown
    assert "no releases yet" in _ledger_text(other)  # nothing drawn for this visitor
    other.context.close()

    url, proc, log = start_server(ARTIFACTS / "streamlit-server-restarted.log")  # same database, new process
    try:
        again = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        again.goto(f"{url}/Present?release={release_id}")
        again.wait_for_selector(".js-plotly-plot")
        assert _bounds(again) == shown
        again.context.close()
    finally:
        stop(proc)
        log.close()


@pytest.mark.slow  # over 4 s: the quick run (-m "not slow") stays under 4 minutes
def test_every_search_on_the_real_data_is_paid_before_it_runs(app_url, browser):
    """The audit's sequence, 0.3 -> 0.5 -> 0.3 on Budget for a target width: every search that runs is
    charged (the third too); Adult is practice data, so one past the budget is marked, not refused."""
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    source = quote(json.dumps("The real data (private releases, on the privacy ledger)"))
    page.goto(f"{app_url}/Budget_for_a_target_width?d=2&n=5000&af_target=0.3&af_max=2.0&sweep_source={source}")
    wait_for_app(page)
    page.get_by_text(re.compile("paid for before it runs, at the most it can spend")).first.wait_for()
    for spent, releases, key in (
        ("2", "1 release", None),
        ("4", "2 releases", "ArrowRight"),
        ("6", "3 releases", "ArrowLeft"),
    ):
        if key is not None:  # the largest width 0.3 -> 0.5, then back to 0.3
            before = page.evaluate("() => location.search")
            page.locator('[data-testid="stSlider"]', has_text="Largest width").get_by_role("slider").focus()
            page.keyboard.press(key)
            # the server has run with the new width once the address says it (a click sent before that
            # rerun could be lost with the machine busy): a condition, not a fixed wait
            page.wait_for_function("before => location.search !== before", arg=before, timeout=90_000)
            wait_for_app(page)
        page.get_by_role("button", name="Find the budget").click()
        page.get_by_text(re.compile(rf"\b{releases}: ε = \S+ at δ = 1e-06 of ε = 10")).first.wait_for(timeout=120_000)
        wait_for_app(page)
    most = page.locator('[data-testid="stSlider"]', has_text="Most ε to spend").get_by_role("slider")
    most.focus()
    page.keyboard.press("ArrowRight")  # at most 5: past the practice budget, marked and not refused
    page.get_by_text(re.compile("a curator would refuse this release")).first.wait_for(timeout=60_000)
    expect(page.get_by_role("button", name="Find the budget")).to_be_enabled(timeout=30_000)
    assert re.search(r"\b3 releases: ε = \S+ at δ = 1e-06 of ε = 10", _ledger_text(page))
    assert page.get_by_text("Refused before it ran").count() == 0
    page.screenshot(path=str(ARTIFACTS / "budget-for-a-target-width-past-the-budget.png"), full_page=True)
    page.context.close()
