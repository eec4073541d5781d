"""A link shares numbers, in Chromium: the Explorer's address after a release carries it; a second
browser context opening the copied address draws the same private intervals (and after a reload), its
practice ledger charged nothing, and its Present shows the same release. An upload's release, opened
the same way without the file, shows the same numbers and says it is not private."""

import json
import re
from urllib.parse import parse_qs, urlparse

import pytest

from .conftest import ARTIFACTS, people_csv, upload, wait_for_app

pytestmark = pytest.mark.browser
pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

PRIVATE_TRACE = (
    "() => { const p = document.querySelector('.js-plotly-plot'); if (!p || !p.data) return null;"
    " const t = p.data.find(t => (t.name || '').toLowerCase().startsWith('private'));"
    " return t ? JSON.stringify([t.x, t.y, t.error_x || null]) : null; }"
)


def _private(page):
    page.wait_for_function(PRIVATE_TRACE)
    return json.loads(page.evaluate(PRIVATE_TRACE))


def _release_in_address(page) -> str:
    page.wait_for_function("() => new URLSearchParams(location.search).get('release')", timeout=90_000)
    return parse_qs(urlparse(page.url).query)["release"][0]


def _ledger_text(page):
    box = page.locator('[data-testid="stSidebar"] [data-testid="stMarkdownContainer"]', has_text="ledger ·")
    box.first.wait_for()
    return box.first.inner_text()


@pytest.mark.slow  # over 15 s: -m 'not slow' leaves it out (CI runs it)
def test_a_practice_release_link_shows_the_same_numbers_in_a_second_browser(app_url, browser, page):
    page.goto(f"{app_url}/?d=3&n=2000")
    page.wait_for_selector(".js-plotly-plot")
    page.get_by_text(re.compile(r"\b1 release: ε = \S+ at δ = 1e-06 of ε = 10")).first.wait_for(timeout=60_000)
    wait_for_app(page)
    release_id = _release_in_address(page)
    shown = _private(page)
    page.get_by_text("Share these numbers by copying the page address").first.wait_for()
    copied = page.url

    other = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    other.set_default_timeout(90_000)
    other.goto(copied)
    other.get_by_text("A shared release.").first.wait_for(timeout=60_000)
    wait_for_app(other)
    assert _private(other) == shown
    assert "no releases yet" in _ledger_text(other)  # nothing drawn or charged for this visitor
    other.screenshot(path=str(ARTIFACTS / "shared-release-link.png"), full_page=True)
    other.reload()
    other.get_by_text("A shared release.").first.wait_for(timeout=60_000)
    wait_for_app(other)
    assert _private(other) == shown and _release_in_address(other) == release_id
    assert "no releases yet" in _ledger_text(other)

    other.get_by_role("link", name="Present").first.click()
    other.wait_for_url(re.compile(r"/Present\?.*release="))
    other.wait_for_selector(".js-plotly-plot")
    assert parse_qs(urlparse(other.url).query)["release"][0] == release_id
    other.context.close()


@pytest.mark.slow
def test_an_upload_release_link_shows_its_numbers_without_the_file(app_url, browser, page, tmp_path):
    page.goto(app_url + "/?dataset=upload")
    upload(page, people_csv(tmp_path / "shared-people.csv", 1500, seed=41))
    page.get_by_text("Preview: not your data").first.wait_for(timeout=60_000)
    wait_for_app(page)
    page.locator('[data-testid="stButton"]').get_by_role("button", name="Release", exact=True).click()
    page.get_by_text("Preview: not your data").first.wait_for(state="detached", timeout=90_000)
    wait_for_app(page)
    release_id = _release_in_address(page)
    shown = _private(page)

    other = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    other.set_default_timeout(90_000)
    other.goto(page.url)
    other.get_by_text("A shared release.").first.wait_for(timeout=60_000)
    wait_for_app(other)
    assert _private(other) == shown
    other.get_by_text(re.compile(r"^Not private: the")).first.wait_for()  # bounds read from the data
    other.reload()
    other.get_by_text("A shared release.").first.wait_for(timeout=60_000)
    wait_for_app(other)
    assert _private(other) == shown and _release_in_address(other) == release_id
    other.context.close()
