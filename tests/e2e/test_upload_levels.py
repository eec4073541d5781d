"""An Adult-like upload as an analyst meets it: the target starts unchosen and nothing is released
before it is chosen; typing a categorical column's public levels takes that column out of the "not
private" list, and so does a schema file's list for another (an undeclared one stays in it, by name);
then one Release."""

import json

import numpy as np
import pytest

from .conftest import ARTIFACTS, choose, wait_for_app

pytestmark = pytest.mark.browser

WORKCLASS = ("Private", "Self-emp", "Government")
RACE = ["White", "Black", "Other"]


def adult_like_csv(path, n, seed):
    """sex (two values) before income (the outcome), as in Adult; workclass and race categorical."""
    rng = np.random.default_rng(seed)
    rows = [
        f"{rng.integers(17, 91)},{rng.choice(WORKCLASS)},{rng.choice(RACE)},"
        f"{rng.choice(['Female', 'Male'])},{rng.integers(1, 100)},{rng.choice(['<=50K', '>50K'])}"
        for _ in range(n)
    ]
    path.write_text("\n".join(["age,workclass,race,sex,hours-per-week,income", *rows]))
    return path


def _not_private(page) -> str:
    alerts = page.locator('[data-testid="stAlert"]', has_text="Not private")
    return " ".join(alerts.all_inner_texts())


@pytest.mark.slow  # an upload, its preview and a release: over 4 s
def test_an_adult_like_upload_with_declared_levels_is_released_once(app_url, browser, tmp_path):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        csv = adult_like_csv(tmp_path / "adult-like.csv", 800, seed=11)
        page.goto(f"{app_url}/?dataset=Uploaded+CSV")
        wait_for_app(page)
        page.locator('input[type="file"]').set_input_files(str(csv))
        page.get_by_text("Choose the target column").first.wait_for(timeout=60_000)
        wait_for_app(page)
        assert page.get_by_role("button", name="Release", exact=True).count() == 0  # nothing before the target
        assert page.locator(".js-plotly-plot").count() == 0
        page.screenshot(path=str(ARTIFACTS / "upload-target-unchosen.png"))
        choose(page, "Target column", "income")
        page.get_by_text("Preview: not your data").first.wait_for(timeout=60_000)
        wait_for_app(page)
        assert "categories of workclass" in _not_private(page) and "categories of sex" in _not_private(page)
        box = page.get_by_label("Public levels of workclass")
        box.fill(", ".join(WORKCLASS))
        box.press("Enter")
        box.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "upload-declared-levels-typed.png"))
        page.wait_for_function("() => !document.body.innerText.includes('categories of workclass')", timeout=60_000)
        wait_for_app(page)
        flagged = _not_private(page)
        assert "categories of workclass" not in flagged and "categories of race" in flagged, flagged
        schema = tmp_path / "public-levels.json"
        schema.write_text(json.dumps({"race": RACE}))
        page.locator('input[type="file"]').nth(1).set_input_files(str(schema))  # the schema file's box
        page.wait_for_function("() => !document.body.innerText.includes('categories of race')", timeout=60_000)
        wait_for_app(page)
        assert page.get_by_label("Public levels of race").input_value() == ", ".join(RACE)
        flagged = _not_private(page)
        assert "categories of race" not in flagged and "categories of sex" in flagged, flagged
        page.locator('[data-testid="stAlert"]', has_text="Not private").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "upload-declared-levels-warnings.png"))
        buttons = page.get_by_role("button", name="Release", exact=True)
        assert buttons.count() == 1
        buttons.first.click()
        page.get_by_text("Preview: not your data").first.wait_for(state="detached", timeout=120_000)
        wait_for_app(page)
        assert "categories of workclass" not in _not_private(page)
        assert page.get_by_role("button", name="Release", exact=True).count() == 0  # released once
        page.screenshot(path=str(ARTIFACTS / "upload-declared-levels-released.png"))
    finally:
        context.close()
