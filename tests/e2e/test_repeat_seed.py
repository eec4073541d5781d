"""Repeat a release in Chromium: two presses of Repeat draw two public seeds and two pictures; typing the
first seed in the box and pressing again draws the first picture again.

A screenshot (the full height of the page) goes to test-artifacts/.
"""

import pytest

from .conftest import ARTIFACTS, wait_for_app
from .test_pages import _full_height_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]
expect = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install -e '.[dev]')"
).expect

# The finished run on the page: the seed of its result line ("Seed 812345."), once the chart's title
# names the same seed; with its bars (the earlier run's grey ones left out), trace by trace.
SHOWN = """() => {
    const line = [...document.querySelectorAll('strong')].map(e => e.textContent.match(/^Seed (\\d+)\\.$/)).find(m => m);
    const plot = document.querySelector('.js-plotly-plot');
    if (!line || !plot || !plot.data || !plot.layout) return null;
    if (!(plot.layout.title.text || '').includes('seed ' + line[1] + ':')) return null;
    const bars = plot.data.filter(t => t.name !== 'earlier run' && t.x && t.x.length > 1).map(t => [t.name, t.x, t.y]);
    return {seed: Number(line[1]), bars: JSON.stringify(bars)};
}"""


def _run(page, previous=None):
    """Wait for a finished run whose seed is not ``previous``; return (seed, bars)."""
    page.wait_for_function(
        f"(previous) => {{ const s = ({SHOWN})(); return s && s.seed !== previous; }}", arg=previous, timeout=180_000
    )
    wait_for_app(page)
    shown = page.evaluate(SHOWN)
    return shown["seed"], shown["bars"]


def test_two_presses_draw_two_pictures_and_a_typed_seed_draws_the_first_again(app_url, page):
    page.goto(f"{app_url}/Repeat_a_release?d=2&repeat_k=20&repeat_n=500")
    wait_for_app(page)
    repeat = page.get_by_role("button", name="Repeat 20 times")
    repeat.click()
    first, first_bars = _run(page)
    assert page.get_by_label("Seed (public)", exact=True).input_value() == str(first)  # the seed is in the box

    repeat.click()
    second, second_bars = _run(page, previous=first)
    assert second != first and second_bars != first_bars
    assert page.get_by_label("Seed (public)", exact=True).input_value() == str(second)

    box = page.get_by_label("Seed (public)", exact=True)
    box.fill(str(first))
    box.press("Enter")
    expect(page.get_by_label("the seed in the box (repeats a run exactly)")).to_be_checked()  # typing chose it
    wait_for_app(page)
    repeat.click()
    again, again_bars = _run(page, previous=second)
    assert again == first and again_bars == first_bars
    _full_height_screenshot(page, ARTIFACTS / "repeat-a-release-seed-typed.png")
