"""A griffe extension for the API reference (mkdocs.yml loads it), doing two things griffe's static
reading of the source cannot:

* **Signatures made at import time.** A Huber or generic estimator's parameters are its own and then
  its base class's (the estimators' ``_then``), so they get their signature when the module is
  imported (``__signature__``). Their parameters here are taken from that signature, as ``help()``
  and ``inspect.signature`` show them.
  Likewise a class made by its ``__new__`` (``Split(*shares)``) gets that signature (griffe reads
  only ``__init__``).
* **Sphinx roles.** dpci's docstrings are numpy style and name other objects with Sphinx roles
  (``:class:`Split```, ``:func:`~dpci.release.private_confidence_intervals```, ``:mod:`.sweeps```).
  mkdocstrings reads Markdown, so each role is rewritten to an *optional* cross-reference: a link
  when the object is in the reference, plain code (and no warning) when it is not.
"""

from __future__ import annotations

import html
import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

import griffe

ROOT = str(Path(__file__).resolve().parents[2])  # the repository: dpci is imported from here

ROLE = re.compile(r":(?:py:)?(class|func|meth|attr|mod|data|exc|obj|const):`(~?)([^`<>]+?)`")


def _module_of(obj: griffe.Object) -> griffe.Module:
    while not obj.is_module:
        obj = obj.parent  # type: ignore[assignment]
    return obj  # type: ignore[return-value]


def _find(collection: Any, path: str) -> str | None:
    """The canonical path of ``path`` if griffe knows it (aliases followed), else None."""
    try:
        found = collection[path]
    except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None
    try:
        return found.final_target.path if found.is_alias else found.path
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return found.path


def _candidates(obj: griffe.Object, target: str) -> list[str]:
    module = _module_of(obj)
    package = module.path if module.is_package else module.path.rpartition(".")[0]
    if target.startswith("."):
        base = package
        for _ in range(len(target) - len(target.lstrip(".")) - 1):
            base = base.rpartition(".")[0]
        return [f"{base}.{target.lstrip('.')}"]
    scopes = []
    if obj.is_class:
        scopes.append(obj.path)
    if obj.parent is not None and obj.parent.is_class:
        scopes.append(obj.parent.path)
    scopes += [module.path, package, "dpci"]
    return [target] + [f"{scope}.{target}" for scope in scopes]


def _runtime(obj: griffe.Object) -> Any:
    """The imported object behind ``obj`` (None if it cannot be imported)."""
    module = _module_of(obj)
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    try:
        found: Any = importlib.import_module(module.path)
        for part in obj.path[len(module.path) + 1 :].split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return found


def _set_signature(function: griffe.Function) -> None:
    """Replace ``function``'s parameters by those of its ``__signature__``, if it was given one (only a
    decorated function can have been; only its module is imported, never ``__main__``)."""
    if not function.decorators or _module_of(function).name == "__main__":
        return
    runtime = _runtime(function)
    signature = getattr(runtime, "__dict__", {}).get("__signature__")
    if not isinstance(signature, inspect.Signature):
        return
    static = {p.name: p for p in function.parameters}
    params = []
    for p in signature.parameters.values():
        if p.name in static and static[p.name].kind.value == p.kind.description:
            params.append(static[p.name])
            continue
        default = None if p.default is p.empty else repr(p.default)
        params.append(griffe.Parameter(p.name, kind=griffe.ParameterKind(p.kind.description), default=default))
    function.parameters = griffe.Parameters(*params)


def _init_from_new(cls: griffe.Class) -> None:
    """Give a class whose own ``__new__`` makes it (and no ``__init__``) an ``__init__`` with those parameters."""
    new = cls.members.get("__new__")
    if new is None or new.is_alias or not new.is_function or "__init__" in cls.members:
        return
    self_param = griffe.Parameter("self", kind=griffe.ParameterKind.positional_or_keyword)
    init = griffe.Function(
        "__init__", parameters=griffe.Parameters(self_param, *list(new.parameters)[1:]), lineno=new.lineno
    )
    cls.set_member("__init__", init)


class DpciDocs(griffe.Extension):
    """Signatures from ``__signature__``, and ``:role:`target``` in every docstring as an optional autoref."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        self._walk(pkg, loader.modules_collection, set())

    on_package_loaded = on_package  # the name in griffe 1

    def _walk(self, obj: griffe.Object, collection: Any, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.is_function:
            _set_signature(obj)  # type: ignore[arg-type]
        if obj.is_class:
            _init_from_new(obj)  # type: ignore[arg-type]
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = ROLE.sub(lambda m: self._link(obj, collection, m), obj.docstring.value)
        for member in obj.members.values():
            if not member.is_alias:
                self._walk(member, collection, seen)  # type: ignore[arg-type]

    @staticmethod
    def _link(obj: griffe.Object, collection: Any, match: re.Match[str]) -> str:
        short, target = match.group(2), match.group(3).strip()
        title = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
        for candidate in _candidates(obj, target):
            if path := _find(collection, candidate):
                return f'<autoref optional identifier="{html.escape(path)}"><code>{html.escape(title)}</code></autoref>'
        return f"`{title}`"
