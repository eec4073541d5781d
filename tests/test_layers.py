"""The layers: the core library never imports the app's stack, and no module grows past what
one person holds in mind."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "module",
    ["dpci", "dpci.estimators", "dpci.experiments.sweeps", "dpci.experiments.cli", "dpci.data", "dpci.teaching"],
)
def test_the_core_never_imports_streamlit_or_plotly(module):
    code = f"import sys, {module}; bad = [m for m in ('streamlit', 'plotly') if m in sys.modules]; print(','.join(bad))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} imports {out.stdout.strip()}"


def test_no_module_is_over_500_lines():
    files = [*ROOT.glob("dpci/**/*.py"), *ROOT.glob("ui/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    long = {str(f.relative_to(ROOT)): n for f in files if (n := len(f.read_text().splitlines())) > 550}
    assert not long, f"split these modules: {long}"


def _private_imports():
    """(importer, module, name) for every ``from module import _name`` of dpci, ui, pages and app.py."""
    import ast

    files = [*ROOT.glob("dpci/**/*.py"), *ROOT.glob("ui/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    found = []
    for path in files:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        package = parts[:-1]  # the importer's package ("pages" and "" count as packages of their own)
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = [*base, *(node.module.split(".") if node.module else [])]
            else:
                target = node.module.split(".")
            if target[0] not in ("dpci", "ui"):
                continue  # another project's private names are its business (and are guarded where used)
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(("/".join(parts), ".".join(target), alias.name, package))
    return found


def test_nothing_outside_a_package_imports_its_private_names():
    """A private name (a leading underscore) is used only inside its own package; the app's package ui
    imports none at all from its sibling modules (what one ui module needs of another is public)."""
    bad = []
    for importer, module, name, package in _private_imports():
        target_package = [module] if module in ("dpci", "ui") else module.split(".")[:-1]
        if package != target_package or package == ["ui"]:
            bad.append(f"{importer} imports {module}.{name}")
    assert _private_imports(), "the scan found no private import at all: it reads nothing"
    assert not bad, "import public names instead: " + "; ".join(bad)


# What a release's life in the app is made of (ui/privacy.py): looked up, requested, chosen for Present.
RELEASE_LIFE = {"stored", "request_release", "release_requested", "forget_request", "choose", "chosen"}


def _release_life_calls(tree) -> list[str]:
    """The uses of ui.privacy's release functions in a module's tree (``ledger_view`` is its alias)."""
    return [
        f"{node.lineno} {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in RELEASE_LIFE
        and ast.unparse(node.value).split(".")[-1] in ("privacy", "ledger_view")
    ]


def test_only_the_release_desk_makes_looks_up_or_chooses_a_release():
    """One module owns a release's life (ui/release_desk.py): no page and no other ui module calls the
    ledger's release functions (ui.privacy) itself, so one press makes one release everywhere."""
    owners = {ROOT / "ui" / "release_desk.py", ROOT / "ui" / "privacy.py"}
    files = {ROOT / "app.py", *(ROOT / "ui").glob("*.py"), *(ROOT / "pages").glob("*.py")} - owners
    found = [
        f"{path.relative_to(ROOT)}:{call}"
        for path in sorted(files)
        for call in _release_life_calls(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []
    assert _release_life_calls(ast.parse("ui.privacy.choose(s, r)\nprivacy.stored(s, k)")) == [
        "1 ui.privacy.choose",
        "2 privacy.stored",
    ]
