"""The documentation site (mkdocs.yml, docs/): it builds with warnings as errors, its API
reference documents every name of ``dpci.__all__``, every guide in docs/ is in its navigation, and
every public name has a docstring with its parameters, returns, errors and an example."""

from __future__ import annotations

import dataclasses
import doctest
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dpci

ROOT = Path(__file__).resolve().parents[1]
DOCS_TOOLS = ("yaml", "mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers")

# Public names whose docstring still lacks a section of the standard checked below (parameters,
# returns, raises, an example). The list may only shrink: a name that meets the standard must leave it,
# and a new name in dpci.__all__ must meet it.
STILL_INCOMPLETE: set[str] = set()


def _missing_tools() -> list[str]:
    return [name for name in DOCS_TOOLS if importlib.util.find_spec(name) is None]


def _needs_docs_tools():
    missing = _missing_tools()
    if missing:
        pytest.skip(f"the docs tools are not installed ({', '.join(missing)}): pip install -e '.[dev]'")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built as .ci/run builds it (``mkdocs build --strict``), into a temporary folder."""
    _needs_docs_tools()
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}\n{run.stderr}"
    return out


def _identifiers(name: str) -> set[str]:
    """The anchors an exported name may have: ``dpci.name``, or the path where it is defined (a name the
    package loads lazily, through its ``__getattr__``, is documented there)."""
    obj = getattr(dpci, name)
    if inspect.ismodule(obj):
        return {f"dpci.{name}", obj.__name__}
    return {f"dpci.{name}", f"{obj.__module__}.{obj.__qualname__}"}


def test_the_api_reference_documents_every_name_in_dpci_all(site):
    ids: set[str] = set()
    for page in (site / "api").rglob("*.html"):
        ids |= set(re.findall(r'\bid="([^"]+)"', page.read_text(encoding="utf-8")))
    missing = [name for name in dpci.__all__ if not _identifiers(name) & ids]
    assert not missing, f"dpci.__all__ names without an entry in the API reference (docs/api/): {missing}"
    tutorials = sorted(p.stem for p in (site / "tutorials").iterdir() if (p / "index.html").exists())
    assert tutorials, "no tutorial was built"


def _nav_pages(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return [page for item in nav or [] for page in _nav_pages(item)]


def test_every_guide_in_docs_is_in_the_navigation():
    yaml = pytest.importorskip("yaml", reason="PyYAML (installed with mkdocs) reads mkdocs.yml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = ROOT / config.get("docs_dir", "docs")
    nav = _nav_pages(config["nav"])
    absent = sorted(p.name for p in docs.glob("*.md") if p.name not in nav)
    assert not absent, f"docs/*.md pages missing from mkdocs.yml's nav: {absent}"
    dangling = [page for page in nav if not page.startswith("http") and not (docs / page).is_file()]
    assert not dangling, f"mkdocs.yml's nav names pages that do not exist: {dangling}"
    assert any(page.startswith("tutorials/") for page in nav) and any(page.startswith("api/") for page in nav)


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "docs" / "tutorials").glob("*.md")))
def test_the_tutorials_examples_run(page, capsys):
    """Each tutorial's Python blocks run as written, in order, in one namespace (like tests/test_readme.py)."""
    text = (ROOT / "docs" / "tutorials" / page).read_text(encoding="utf-8")
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)]
    assert blocks, f"{page} has no Python example"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, page, "exec"), namespace)


# --- docstrings --------------------------------------------------------------------------------------

SECTION = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n-{3,}[ \t]*$", re.MULTILINE)
DOCUMENTED = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::|$)", re.MULTILINE)


def _own_docstring(obj) -> str:
    """The object's own docstring (not a base class's, nor the one dataclasses writes from the fields)."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    if not doc:
        return ""
    if dataclasses.is_dataclass(obj) and doc.startswith(f"{obj.__name__}("):
        return ""
    return inspect.cleandoc(doc)


def _sections(doc: str) -> dict[str, str]:
    """numpy-style sections: title -> body (up to the next section)."""
    found = list(SECTION.finditer(doc))
    return {
        m["title"].strip(): doc[m.end() : nxt.start() if nxt else len(doc)] for m, nxt in zip(found, [*found[1:], None])
    }


def _documented_names(body: str) -> set[str]:
    return {part.strip().lstrip("*") for m in DOCUMENTED.finditer(body) for part in m.group(1).split(",")}


def _parameters(obj) -> list[str]:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in signature.parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def docstring_gaps(name: str) -> list[str]:
    """What the docstring of ``dpci.<name>`` lacks: parameters (every one of the signature; for an
    exception, those of its own ``__init__``), returns and raises (functions) and an example. A class
    says what it raises where it has something to say (an estimator's ``fit``, a value's checks)."""
    obj = getattr(dpci, name)
    doc = _own_docstring(obj)
    if not doc:
        return ["a docstring"]
    if inspect.ismodule(obj):
        return []
    sections = _sections(doc)
    gaps = [] if "Examples" in sections else ["Examples"]
    documented = _documented_names(sections.get("Parameters", "")) | _documented_names(sections.get("Attributes", ""))
    exception = inspect.isclass(obj) and issubclass(obj, BaseException)
    own_init = not exception or "__init__" in obj.__dict__
    params = _parameters(obj) if own_init else []
    if undocumented := [p for p in params if p not in documented]:
        gaps.append(f"Parameters ({', '.join(undocumented)})")
    if exception:
        return gaps
    if inspect.isroutine(obj):
        returns_none = inspect.signature(obj).return_annotation in (None, "None")
        if not returns_none and "Returns" not in sections and "Yields" not in sections:
            gaps.append("Returns")
        if params and "Raises" not in sections:
            gaps.append("Raises")
    return gaps


def test_every_public_name_has_a_docstring():
    missing = [name for name in dpci.__all__ if not _own_docstring(getattr(dpci, name))]
    assert not missing, f"names in dpci.__all__ without a docstring of their own: {missing}"


def test_public_names_document_parameters_returns_raises_and_an_example():
    gaps = {name: docstring_gaps(name) for name in dpci.__all__}
    incomplete = {name: gap for name, gap in gaps.items() if gap and name not in STILL_INCOMPLETE}
    assert not incomplete, f"docstrings of dpci.__all__ missing numpy sections: {incomplete}"
    done = sorted(name for name in STILL_INCOMPLETE & set(gaps) if not gaps[name])
    assert not done, f"these docstrings are complete now: remove them from STILL_INCOMPLETE: {done}"


def test_the_examples_in_public_docstrings_run():
    """The Examples sections are doctests: each runs as written (small data, fixed seeds)."""
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    ran = 0
    for name in dpci.__all__:
        obj = getattr(dpci, name)
        globs = dict(vars(inspect.getmodule(obj)))  # as doctest runs them: in the defining module
        for test in finder.find(obj, f"dpci.{name}", module=False, globs=globs):
            if test.examples:
                ran += 1
                runner.run(test, out=report.append)
    assert ran, "no docstring of dpci.__all__ has an example"
    assert not runner.failures, "".join(report)
