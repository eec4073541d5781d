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
    assert len(_blocks()) >= 1


@pytest.mark.slow
def test_readme_examples_run(capsys):
    namespace = {}
    for block in _blocks():
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "privacy spent" in out and "estimate" in out
    assert namespace["model"].conf_int_.shape == (11, 2)
    status = namespace["watch"].status()
    assert status.releases == 1 and status.spent == pytest.approx(1.0) and "ε = 1 of ε = 3" in out


def test_the_readme_is_a_front_page():
    """What it is, the two commands and the links, read in a few minutes: at most 1,200 words."""
    words = len(README.read_text().split())
    assert words <= 1_200, f"README.md has {words} words"


def _bash_lines(text: str) -> list[str]:
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        lines += [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]
    return lines


def test_ci_runs_the_readmes_test_command_in_a_fresh_venv():
    """.ci/run makes the README's virtual environment, installs what the README installs and runs its
    test command: a README command that fails cannot hide behind a green CI."""
    readme = _bash_lines(README.read_text())
    ci = (README.parent / ".ci" / "run").read_text()
    assert "python3 -m venv .venv" in readme[0] and "python3 -m venv .venv" in ci and "--system-site" not in ci
    test_command = next(line for line in readme if "tests/run.sh" in line)
    install, run = (part.strip() for part in test_command.split("&&"))
    assert install == 'pip install -e ".[dev]"'
    assert re.search(r'^python -m pip install .*-e "\.\[dev\]"$', ci, flags=re.M)
    assert re.search(rf"^{re.escape(run)}\s*(#.*)?$", ci, flags=re.M)


def test_the_readme_lists_the_apps_pages_in_the_navigations_order():
    from ui.navigation import PAGES

    titles = re.findall(r"^\| \*\*(.+?)\*\* \|", README.read_text(), flags=re.M)
    assert titles == [p.title for p in PAGES]
    root = README.parent
    scripts = {str(path.relative_to(root)) for path in root.glob("pages/*.py")}
    assert scripts == {p.script for p in PAGES}  # every page file is in the navigation
