"""An upload's bounds table as a newcomer fills it: every edit stays, and a feature with only
one typed bound (the other still the data's own) is named as not private, in words that point to the
table the user is in."""

import pytest

from .conftest import ARTIFACTS, people_csv, upload, wait_for_app
from .test_browser import CELL, _choose, _type_cell

pytestmark = pytest.mark.browser


@pytest.mark.slow  # an upload and its preview: over 4 s
def test_a_feature_with_only_one_typed_bound_is_named_not_private(app_url, page, tmp_path):
    csv = people_csv(tmp_path / "people.csv", 600, seed=5)
    page.goto(app_url)
    wait_for_app(page)
    _choose(page, "Dataset", "Uploaded CSV")
    upload(page, csv)
    page.wait_for_selector(".js-plotly-plot")
    wait_for_app(page)
    for row in (0, 1):  # the lower bounds of age and hours only; the upper bounds stay the data's maxima
        _type_cell(page, row, 1, 0)
    page.get_by_role("button", name="Use these bounds").click()
    wait_for_app(page)
    warning = page.locator('[data-testid="stAlert"]', has_text="the bounds of").first
    warning.wait_for(timeout=60_000)
    text = warning.inner_text()
    assert text.startswith("Not private") and "age" in text and "hours" in text, (
        text
    )  # both features, though each has one public bound
    assert "the table above" in text and "upload panel" not in text, text  # it points where the user is
    assert page.evaluate(CELL, [0, 1]) == "0" and page.evaluate(CELL, [1, 1]) == "0"  # the edits stayed
    page.screenshot(path=str(ARTIFACTS / "upload-one-bound-typed.png"), full_page=True)
