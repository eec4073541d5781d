"""The README's Python examples run as written."""

import re
import textwrap
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    # a block inside a list item is indented: dedented, it runs as written
    return [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)]


def test_readme_has_examples():
    assert len(_blocks()) >= 2


@pytest.mark.slow
def test_readme_examples_run(capsys):
    namespace = {}
    for block in _blocks():
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "privacy spent" in out and "estimate" in out
    assert namespace["model"].conf_int_.shape == (11, 2)
    assert namespace["odds"].loc[0, "change"] == "age 17 → 90" and "odds" in namespace["odds"].loc[0, "in_words"]
    status = namespace["watch"].status()
    assert status.releases == 2 and status.spent == pytest.approx(1.5) and "ε = 1.5 of ε = 3" in out


def test_the_readme_lists_the_apps_pages_in_the_navigations_order():
    from ui.navigation import PAGES

    titles = re.findall(r"^\| \*\*(.+?)\*\* \|", README.read_text(), flags=re.M)
    assert titles == [p.title for p in PAGES]
    root = README.parent
    scripts = {str(path.relative_to(root)) for path in root.glob("pages/*.py")}
    assert scripts == {p.script for p in PAGES if p.script is not None}  # every page file is in the navigation
