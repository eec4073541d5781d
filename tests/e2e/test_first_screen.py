"""What the first screen shows, on a projector (1280 x 720) and a desktop (1920 x 1080): the Explorer's
chart with every coefficient of Adult, Present's headline and first odds ratio, every page's title.
Each screen is written to test-artifacts/first-screen/ (CI keeps them).
"""

from __future__ import annotations

import re

import pytest

from ui import navigation

from .conftest import ARTIFACTS, wait_for_app

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (1920, 1080)]
SCREENS = ARTIFACTS / "first-screen"
ADULT_ROWS = 11  # d = 10 features and the constant


def _open(browser, url, size):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(url)
    wait_for_app(page)
    return context, page


def _inside(page, locator) -> bool:
    """On the first screen and not under Streamlit's header bar, which is opaque and lies over the page's
    top (a title there showed only its lower half)."""
    box = locator.bounding_box()
    size = page.viewport_size
    bar = page.locator('[data-testid="stHeader"]').first.bounding_box()
    top = 0 if bar is None else bar["y"] + bar["height"]
    return box is not None and box["y"] >= top - 1 and box["y"] + box["height"] <= size["height"] + 1


# The chart redraws while its bootstrap runs, replacing its tick labels: their boxes are read in one go, in
# the page, where no redraw can come between two of them.
_CHART_BOXES = """() => {
    const chart = document.querySelector('.js-plotly-plot');
    const boxes = el => { const r = el.getBoundingClientRect(); return {y: r.top, height: r.height}; };
    return {ticks: [...chart.querySelectorAll('.ytick text')].map(boxes),
            title: [...chart.querySelectorAll('.xtitle')].map(boxes)};
}"""


def _fits(page, box) -> bool:
    return box["height"] > 0 and box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"] + 1


def _cut_off(page, selector) -> list[str]:
    """The texts of the elements matching ``selector`` that their box cuts (to "…" or hidden overflow)."""
    return page.evaluate(
        "s => [...document.querySelectorAll(s)].filter(e => e.innerText && e.scrollWidth > e.clientWidth + 1)"
        ".map(e => e.innerText)",
        selector,
    )


def _shot(page, name, size):
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / f"{name}-{size[0]}x{size[1]}.png"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", ["standard", "presentation"])
def test_the_explorers_chart_with_every_coefficient_is_on_the_first_screen(app_url, browser, size, view):
    context, page = _open(browser, f"{app_url}/?randomness=teaching&view={view}", size)
    try:
        chart = page.locator(".js-plotly-plot").first
        chart.wait_for()
        page.wait_for_function("() => document.querySelector('.js-plotly-plot')._fullLayout !== undefined")
        boxes = page.evaluate(_CHART_BOXES)
        assert len(boxes["ticks"]) == ADULT_ROWS, boxes
        assert all(_fits(page, box) for box in boxes["ticks"]), f"a coefficient's row is below the fold: {boxes}"
        assert boxes["title"] and _fits(page, boxes["title"][0]), boxes  # the axis under them too
        assert page.get_by_text("What am I looking at?").first.is_visible()
        assert _inside(page, page.locator("h1").first), "the title is under the header bar"
        if view == "presentation":  # the page keeps the chart alone: no metrics, no ledger table
            assert page.locator('[data-testid="stMetric"]').count() == 0
        else:  # teaching mode (a public seed): no spend and no guarantee shown as a number
            page.locator('[data-testid="stMetric"]', has_text="Teaching mode").first.wait_for()
            metrics = page.locator('[data-testid="stMetric"]').all_inner_texts()
            assert not any("spent" in m or "(ε, δ)" in m for m in metrics), metrics
            assert "not private" in metrics[0], metrics
            # every metric's value whole, not cut to "…" by its column (a quarter of the page)
            cut = _cut_off(page, '[data-testid="stMetricValue"], [data-testid="stMetricValue"] *')
            assert not cut, f"metric values cut off: {cut}"
        _shot(page, f"explorer-{view}", size)
    finally:
        context.close()


def test_the_explorers_header_is_whole_on_a_1024_px_projector(app_url, browser):
    """On a narrow screen the button and the toggle go under the title, whole: columns had cut them to
    "What am I looki…" and "Pr…" at 1024 px, and the toggle's label at 1200."""
    for size in ((1024, 768), (1200, 900)):
        context, page = _open(browser, f"{app_url}/?randomness=teaching", size)
        try:
            page.locator('[data-testid="stSlider"]').first.wait_for()  # the whole page, after the first paint
            page.locator(".js-plotly-plot").first.wait_for()
            wait_for_app(page)
            cut = _cut_off(page, 'h1, [data-testid="stPopover"] *, [data-testid="stCheckbox"] *')
            assert not cut, f"cut off at {size}: {cut}"
            assert page.get_by_text("What am I looking at?").first.is_visible()
            _shot(page, "explorer-header", size)
        finally:
            context.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_presents_headline_and_first_odds_ratio_are_on_the_first_screen(app_url, browser, size):
    context, page = _open(browser, f"{app_url}/Present?randomness=teaching", size)
    try:
        headline = page.get_by_text("What the private model says about income >50K").first
        first_odds = page.locator("table tbody tr").first
        first_odds.wait_for()
        assert _inside(page, headline) and _inside(page, first_odds)
        assert "age 17 → 90" in first_odds.inner_text()
        # numbers agree with their words: a row that says its interval excludes 1 never prints a bound as 1
        for row in page.locator("table tbody tr").all_inner_texts():
            if "excludes 1" in row:
                low, high = (float(v) for v in re.search(r"\(([\d.e+-]+) – ([\d.e+-]+)\)", row).groups())
                assert low > 1 or high < 1, row
        _shot(page, "present", size)
    finally:
        context.close()


@pytest.mark.slow  # 14 page loads
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_page_opens_with_its_title_on_the_first_screen(app_url, browser, size):
    context, page = _open(browser, f"{app_url}/?randomness=teaching", size)
    try:
        for p in navigation.PAGES:
            if p.url_path == "" or p.title == "Present":
                continue  # the Explorer's and Present's first screens are tested above
            page.goto(f"{app_url}/{p.url_path}?randomness=teaching")
            wait_for_app(page)
            heading = page.locator("h1").first
            assert _inside(page, heading), p.title
            assert "Traceback" not in page.content()
            _shot(page, p.url_path.lower(), size)
    finally:
        context.close()
