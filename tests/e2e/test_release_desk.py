"""What a visitor meets next, in Chromium: Present shows the release the Explorer made (nothing new is
charged); Kulkarni et al.'s variability bars come within 30 s of the chart in teaching mode; and after
"Use the recommended c" no bars of the old c are drawn beside the new private ones."""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, urlparse

import pytest

from .conftest import wait_for_app
from .test_ledger_browser import _ledger_text

pytestmark = pytest.mark.browser

VARIABILITY = (
    "() => { const p = document.querySelector('.js-plotly-plot'); if (!p || !p.data) return [];"
    " return p.data.filter(t => t.name && t.name.startsWith('variability')).map(t => t.name); }"
)


def test_a_fresh_visitor_goes_from_the_explorer_to_present_and_sees_the_same_release(app_url, page):
    page.goto(app_url)
    page.wait_for_selector(".js-plotly-plot")
    page.get_by_text(re.compile(r"\b1 release: ε = ")).first.wait_for(timeout=60_000)
    wait_for_app(page)
    page.wait_for_url(re.compile(r"release="), timeout=30_000)
    made = parse_qs(urlparse(page.url).query)["release"][0]
    page.get_by_role("link", name="Present").first.click()
    page.wait_for_url(re.compile(r"/Present\?.*release="))
    page.wait_for_selector(".js-plotly-plot")
    wait_for_app(page)
    assert parse_qs(urlparse(page.url).query)["release"][0] == made
    assert page.get_by_text(made).count() >= 1  # "Release <id>, made ...": the Explorer's
    assert page.get_by_text("Nothing has been released").count() == 0
    assert re.search(r"\b1 release:", _ledger_text(page))  # nothing new charged


def test_kulkarni_variability_in_teaching_mode_has_bars_within_30_s(app_url, page):
    page.goto(f"{app_url}/?method=kulkarni&privacy=zcdp&budget=0.5&randomness=teaching")
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    start = time.monotonic()
    page.wait_for_function(f"() => ({VARIABILITY})().length > 0", timeout=30_000)
    assert time.monotonic() - start <= 30.0
    # the progress says how far the bootstrap is (waited for: a fragment's rerun redraws it)
    page.get_by_text(re.compile(r"Variability interval \((computing|done)\)")).first.wait_for(timeout=15_000)


def test_no_bars_of_the_old_c_after_the_recommended_c(app_url, page):
    page.goto(f"{app_url}/?dataset=synthetic&randomness=teaching&c=0.001")
    page.wait_for_selector(".js-plotly-plot")
    page.wait_for_function(f"() => ({VARIABILITY})().length > 0", timeout=60_000)  # the old c's bars, drawn
    wait_for_app(page)
    page.get_by_role("button", name=re.compile(r"^Use the recommended c")).click()
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:  # while the new bootstrap starts: none of the old bars, faded or not
        names = page.evaluate(VARIABILITY)
        assert not [n for n in names if "updating" in n], names
        time.sleep(0.2)
    assert "c=0.001" not in page.url
