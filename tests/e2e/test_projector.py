"""The presentation view reads from the back row: one click on the toggle hides the sidebar at once,
the chart's feature names, ticks and axis title are at least 16 px and dark, and the whole legend lies
inside the figure and the first screen, on a 1280 x 720 and a 1024 x 768 projector; F5 keeps the view.
The screens are saved into docs/screenshots/ (docs/presenting.md shows them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import wait_for_app

pytestmark = pytest.mark.browser

DOCS_SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

_TEXTS = """() => {
    const chart = document.querySelector('.js-plotly-plot');
    const style = el => { const s = getComputedStyle(el); return {text: el.textContent, size: parseFloat(s.fontSize), fill: s.fill}; };
    const box = el => { const r = el.getBoundingClientRect(); return {x: r.left, y: r.top, right: r.right, bottom: r.bottom}; };
    return {texts: [...chart.querySelectorAll('.ytick text, .xtick text, .xtitle')].map(style),
            legend: box(chart.querySelector('.legend')), figure: box(chart)};
}"""


def _dark(fill: str) -> bool:
    """An rgb() fill whose every channel is at most 80 of 255: near black, not the template's light grey."""
    channels = [float(v) for v in fill[fill.index("(") + 1 : fill.index(")")].split(",")[:3]]
    return max(channels) <= 80


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_one_click_makes_a_projector_view_read_from_the_back_row(app_url, browser, size):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.set_default_timeout(90_000)
    try:
        page.goto(f"{app_url}/?randomness=teaching")
        wait_for_app(page)
        page.locator(".js-plotly-plot").first.wait_for()
        page.locator('[data-testid="stSidebar"]').first.wait_for()  # open in the standard view
        page.get_by_text("Presentation", exact=True).first.click()  # one click
        page.locator('[data-testid="stSidebar"]').first.wait_for(state="hidden", timeout=30_000)
        wait_for_app(page)
        page.wait_for_function("() => document.querySelector('.js-plotly-plot')._fullLayout !== undefined")
        page.wait_for_function(
            "() => [...document.querySelectorAll('.js-plotly-plot .ytick text')]"
            ".every(t => parseFloat(getComputedStyle(t).fontSize) >= 16)"
        )
        found = page.evaluate(_TEXTS)
        assert len(found["texts"]) > 10, found
        small = [t for t in found["texts"] if t["size"] < 16]
        light = [t for t in found["texts"] if not _dark(t["fill"])]
        assert not small and not light, f"small: {small}; light: {light}"
        legend, figure = found["legend"], found["figure"]
        assert figure["x"] - 1 <= legend["x"] and legend["right"] <= min(figure["right"], size[0]) + 1, found
        assert figure["y"] - 1 <= legend["y"] and legend["bottom"] <= figure["bottom"] + 1, found
        assert legend["bottom"] <= size[1] - 8, found  # its last row on the first screen, not cut at the edge
        assert page.get_by_text("Presentation", exact=True).first.is_visible()  # the way back, in the main area
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS_SHOTS / f"presentation-{size[0]}x{size[1]}.png"))
        page.reload()  # F5 on the projector: the same view, the sidebar still folded
        wait_for_app(page)
        page.locator(".js-plotly-plot").first.wait_for()
        assert "view=presentation" in page.url
        assert not page.locator('[data-testid="stSidebar"]').first.is_visible()
        assert page.get_by_role("switch", name="Presentation").first.is_checked()
    finally:
        context.close()
