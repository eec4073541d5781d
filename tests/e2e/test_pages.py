"""Every page in Chromium as its users meet it: at 800 px wide, after a reload, a sweep page on an
upload, the repeat-a-release demo to its end, and Present's odds ratios and printed report.

Screenshots (the full height of each page) go to test-artifacts/.
"""

import re

import pytest

from ui import navigation

from .conftest import ARTIFACTS, people_csv, upload, wait_for_app

pytestmark = pytest.mark.browser

PAGES = [(p.title, p.url_path) for p in navigation.PAGES]  # the app's page list (ui/navigation.py)
# the Explorer in the quick run, every other page in the slow one (-m "not slow" stays under 4 minutes)
EVERY_PAGE = [pytest.param(*p, marks=[] if p[1] == "" else [pytest.mark.slow]) for p in PAGES]
# Words of the app's internals that a reader must never meet (settings' field names and columns).
INTERNAL_NAMES = ("vi_replicates", "phi1", "phi2_rest", "n_samples", "private_lower", "odds_ratio", "nonprivate")


def _slider(page, label):
    # .last: while a rerun replaces an element, the old one can stand beside the new one for a moment
    return page.locator('[data-testid="stSlider"]', has_text=label).get_by_role("slider").last


def _slider_value(page, label) -> str:
    box = page.locator('[data-testid="stSlider"]', has_text=label)
    return box.locator('[data-testid="stSliderThumbValue"]').first.inner_text()


def _press(page, label, key, times=1):
    """Move a slider with the keyboard, as a person would, and wait for the page to settle."""
    for _ in range(times):
        _slider(page, label).focus()
        page.keyboard.press(key)
        wait_for_app(page)


def _until_gone(page, button, tries=5):
    """Click ``button`` (a chip's remove button) until it is gone: a click that lands while a rerun
    redraws the widget is lost."""
    for _ in range(tries):
        if button.count() == 0:
            return
        button.first.click()
        wait_for_app(page)
    assert button.count() == 0, button


def _full_height_screenshot(page, path):
    """The whole page: Streamlit scrolls inside its main block, so the window is made as tall as it."""
    width = page.viewport_size["width"]
    height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(max(height, 900), 8000)})
    page.wait_for_function(  # a condition, not a fixed time: every chart has redrawn at its new size
        "() => [...document.querySelectorAll('.js-plotly-plot')].every(c => !c._fullLayout"
        " || c.getBoundingClientRect().width === 0"  # hidden (a closed expander or tab)
        " || Math.abs(c._fullLayout.width - c.getBoundingClientRect().width) < 2)"
    )
    page.screenshot(path=str(path))
    page.set_viewport_size({"width": width, "height": 1000})


@pytest.mark.parametrize("title, path", EVERY_PAGE)
def test_every_page_fits_800_px(app_url, browser, title, path):
    ctx = browser.new_context(viewport={"width": 800, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    page.goto(f"{app_url}/{path}?randomness=teaching")  # Present shows a teaching preview before any release
    page.wait_for_selector("h1")
    _slider(page, "Total budget ε").wait_for()  # the Explorer's settings follow its first chart
    wait_for_app(page)
    if path in ("", "How_it_works", "Present"):
        page.wait_for_selector(".js-plotly-plot")
    assert title.split()[0].lower() in page.inner_text("h1").lower() or path in ("", "Present")
    assert "Traceback" not in page.content()
    assert page.locator('[data-testid="stException"]').count() == 0
    # nothing sticks out sideways: the main block and every chart fit the window
    fits = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
        " const charts = [...document.querySelectorAll('.js-plotly-plot')];"
        " return m.scrollWidth <= m.clientWidth + 1 && charts.every(c => c.getBoundingClientRect().right <= innerWidth + 1); }"
    )
    assert fits, "something is wider than an 800-px window"
    _full_height_screenshot(page, ARTIFACTS / f"800px-{path or 'Explorer'}.png")
    ctx.close()


@pytest.mark.parametrize("title, path", EVERY_PAGE)
def test_a_reload_keeps_the_settings(app_url, page, title, path):
    page.goto(f"{app_url}/{path}?randomness=teaching")
    wait_for_app(page)
    _slider(page, "Total budget ε").wait_for()
    _press(page, "Total budget ε", "ArrowRight")  # 1.0 -> 1.25, the slider's next stop
    page.wait_for_url(re.compile(r"budget=1\.25"))
    page.reload()
    wait_for_app(page)
    _slider(page, "Total budget ε").wait_for()
    assert _slider_value(page, "Total budget ε") == "1.25", title
    assert "budget=1.25" in page.url


@pytest.mark.slow  # over 4 s: the quick run (-m "not slow") stays under 4 minutes
def test_present_states_odds_ratios_keeps_its_audience_on_reload_and_prints_its_report(app_url, page, tmp_path):
    page.goto(f"{app_url}/Present?randomness=teaching")
    page.wait_for_selector(".js-plotly-plot")
    wait_for_app(page)
    assert page.get_by_role("heading", name="Odds of income >50K").count() == 1
    odds = page.locator("table", has_text="Change (public range)").inner_text()
    assert "age 17 → 90" in odds and "higher age: higher odds, interval excludes 1" in odds

    with page.expect_download() as download:
        page.get_by_role("button", name="Full report (HTML)").click()
    report = tmp_path / "report.html"
    download.value.save_as(report)
    printed = page.context.new_page()
    printed.goto(report.as_uri())
    printed.wait_for_selector(".js-plotly-plot")
    printed.emulate_media(media="print")
    text = printed.inner_text("body")
    assert "income >50K" in printed.inner_text("h1") and "Odds ratios" in text and "age 17 → 90" in text
    assert "One public divisor (odds ratios)" in text  # the settings in words
    leaked = [w for w in INTERNAL_NAMES if re.search(rf"\b{w}\b", text)]
    assert not leaked, leaked
    assert not any("_" in h for h in printed.locator("th").all_inner_texts())
    pdf = printed.pdf(format="A4")
    (ARTIFACTS / "present-report-print.pdf").write_bytes(pdf)
    assert pdf.startswith(b"%PDF") and 1 <= len(re.findall(rb"/Type\s*/Page[^s]", pdf)) <= 8
    printed.close()

    page.get_by_text("Internal: with non-private comparisons").click()
    page.wait_for_url(re.compile("present_audience=%22Internal"))
    wait_for_app(page)
    page.reload()
    page.wait_for_selector(".js-plotly-plot")
    wait_for_app(page)
    assert page.get_by_role("radio", name="Internal: with non-private comparisons").is_checked()
    assert page.get_by_text("Internal view").count() >= 1


@pytest.mark.slow  # over 4 s: the quick run (-m "not slow") stays under 4 minutes
def test_the_repeat_demo_finishes_with_a_coverage_count_and_replays_at_another_budget(app_url, page):
    page.goto(f"{app_url}/Repeat_a_release")
    wait_for_app(page)
    _press(page, "Repetitions", "Home")  # 20 repetitions
    _press(page, "Rows per sample n", "Home")  # of 500 rows
    page.get_by_role("button", name="Repeat 20 times").click()
    count = re.compile(r"(\d+) of 20 private intervals \((\d+)%; 95% Wilson interval ([\d.]+)%–([\d.]+)%\)")
    page.get_by_text(count).first.wait_for(timeout=120_000)
    first = page.get_by_text(count).first.inner_text()
    hits, share, low, high = map(float, count.search(first).groups())
    assert 10 <= hits <= 20 and low <= share <= high, first  # x1's 20 intervals at 95%
    assert page.get_by_text("20 of 20 repetitions").count() == 1

    _press(page, "Total budget ε", "ArrowRight")  # replay at ε = 1.25, the slider's next stop
    page.get_by_role("button", name="Repeat 20 times").click()
    page.wait_for_function(  # the new run's chart, with the ε = 1 run kept in grey underneath
        "() => { const p = document.querySelector('.js-plotly-plot'); return !!(p && p.data && p.layout)"
        " && p.data.some(t => t.name === 'earlier run') && (p.layout.title.text || '').includes('ε = 1.25'); }",
        timeout=120_000,
    )
    page.get_by_text(count).first.wait_for(timeout=120_000)
    page.get_by_text("20 of 20 repetitions").wait_for(timeout=120_000)
    _full_height_screenshot(page, ARTIFACTS / "repeat-a-release-replayed.png")


@pytest.mark.slow  # over 4 s: the quick run (-m "not slow") stays under 4 minutes
def test_an_upload_is_what_compare_runs_on(app_url, page, tmp_path):
    csv = people_csv(tmp_path / "staff.csv", 3000, seed=5)
    page.goto(f"{app_url}/?dataset=Uploaded+CSV")
    wait_for_app(page)
    upload(page, csv)
    page.wait_for_selector(".js-plotly-plot")
    wait_for_app(page)
    page.get_by_role("link", name="Compare methods").first.click()
    page.wait_for_url(re.compile("/Compare_methods"))
    wait_for_app(page)
    page.get_by_text("budget ε", exact=True).click()  # vary the budget: ε = 1 only, one method, few repetitions
    wait_for_app(page)
    for chip in ("0.2", "0.5", "2.0", "4.0", "output, pure DP", "objective, zCDP", "output, zCDP"):
        _until_gone(page, page.get_by_role("button", name=f"Remove {chip}"))
    for label, least in (
        ("Repetitions per point", "20"),
        ("Bootstrap replicates", "200"),
        ("Monte Carlo samples", "500"),
        ("Rows n when not varied", "1000"),
    ):
        for _ in range(5):  # a key pressed while a rerun redraws the slider can be lost: again
            if _slider_value(page, label) == least:
                break
            _press(page, label, "Home")
        assert _slider_value(page, label) == least, label
    page.get_by_text("The real data (not private)").click()
    wait_for_app(page)
    assert page.get_by_text("No CSV uploaded").count() == 0
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("Shortest intervals that keep their coverage").wait_for(timeout=180_000)
    assert page.get_by_text("Computed from the real data without privacy").count() == 1
    assert "staff.csv" in page.locator('[data-testid="stSidebar"]').inner_text()  # the odometer's dataset
    _full_height_screenshot(page, ARTIFACTS / "compare-on-an-upload.png")
