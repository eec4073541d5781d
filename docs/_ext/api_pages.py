"""A MkDocs hook: the API reference page of the ``dpci`` package is made from ``dpci.__all__``.

``docs/api/dpci.md`` holds the marker ``<!-- dpci.__all__ -->``; this hook replaces it with one
mkdocstrings block per exported name, grouped (functions, classes, errors and warnings,
subpackages), so a name added to ``__all__`` is documented without editing the page.
tests/test_docs_site.py checks that every name is there.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

MARKER = "<!-- dpci.__all__ -->"


def _package():
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)
    return importlib.import_module("dpci")


def identifier(package, name: str) -> str:
    """The path mkdocstrings renders ``name`` under: ``dpci.name`` when it is imported in
    ``dpci/__init__.py`` (griffe follows the import), else (a lazy name, loaded by the package's
    ``__getattr__``) the path where it is defined."""
    if name in vars(package):
        return f"dpci.{name}"
    obj = getattr(package, name)
    return f"{obj.__module__}.{obj.__qualname__}"


def api_blocks(package) -> str:
    groups: dict[str, list[str]] = {"Functions": [], "Classes": [], "Errors and warnings": [], "Subpackages": []}
    for name in package.__all__:
        path = identifier(package, name)
        obj = getattr(package, name)
        if inspect.ismodule(obj):
            page = name.replace("_", "-")
            groups["Subpackages"].append(
                f"### `dpci.{name}`\n\n{(inspect.getdoc(obj) or '').splitlines()[0]} "
                f"Its reference: [dpci.{name}]({page}.md).\n"
            )
            continue
        group = "Errors and warnings" if inspect.isclass(obj) and issubclass(obj, BaseException) else None
        group = group or ("Classes" if inspect.isclass(obj) else "Functions")
        groups[group].append(f"::: {path}\n    options:\n      heading_level: 3\n")
    return "\n".join(f"## {title}\n\n" + "\n".join(blocks) for title, blocks in groups.items() if blocks)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, api_blocks(_package()))
