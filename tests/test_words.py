"""Words a student understands, on every page as a fresh visitor opens it: no code names ('kulkarni',
'huber'), no ASCII Greek (epsilon1, epsilon'), no file paths (docs/…​.md), no equation, lemma or
algorithm numbers a class does not have, no library keywords (estimand='…'), no "dpci warns:" prefix, and
every message (error, warning, note) a sentence that starts with a capital."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["app.py", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))]

CODE_NAME = re.compile(r"'[a-z][a-z0-9_]*'")  # 'kulkarni', 'huber': a registry's key, quoted as in Python
# epsilon, rho, delta… spelt out (LaTeX's \epsilon renders as Greek; ?epsilon= is an address)
ASCII_GREEK = re.compile(r"(?<![\\\w?&])(epsilon|rho|delta|theta|alpha|sigma|lambda)(?![\w=])('|\d)?")
FILE_PATH = re.compile(r"\b[\w-]+/[\w./-]+\.(md|py|csv)\b")
NUMBERED = re.compile(r"\b(Eq\.|Eqs\.|Equation|Lemmas?|Algorithm|Proposition|Theorem)\s*\d")
LIBRARY_KEYWORD = re.compile(r"\b(estimand|theta_bound|stand_in)=")
PREFIX = re.compile(r"dpci warns", re.IGNORECASE)
LOWER_START = re.compile(r"^[^A-Za-z0-9]*[a-z]")  # after markdown marks and symbols, a lower-case letter


def _texts(at) -> tuple[list[str], list[str]]:
    """(every text on the page, the messages among them)."""
    messages = [e.value for kind in ("error", "warning", "info", "success") for e in getattr(at, kind)]
    texts = [
        str(e.value) for kind in ("markdown", "caption", "title", "header", "subheader") for e in getattr(at, kind)
    ]
    return texts + [str(m) for m in messages], [str(m) for m in messages]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_speaks_to_a_student(page):
    at = AppTest.from_file(str(ROOT / page), default_timeout=180)
    at.query_params.update({"randomness": "teaching"})
    at.run()
    if page == "app.py":
        at.run()  # the Explorer draws its settings at its second run
    assert not at.exception, [e.value for e in at.exception]
    texts, messages = _texts(at)
    assert texts, "nothing drawn"
    for pattern in (CODE_NAME, ASCII_GREEK, FILE_PATH, NUMBERED, LIBRARY_KEYWORD, PREFIX):
        found = [t for t in texts if pattern.search(t)]
        assert not found, f"{pattern.pattern} on {page}: {found}"
    lower = [m for m in messages if LOWER_START.match(m)]
    assert not lower, f"messages that are not sentences on {page}: {lower}"


def _pairs():
    from dpci import methods

    return [(m, p, model) for m, p in methods.pairs() for model in ("logistic", "huber")]


@pytest.mark.slow
@pytest.mark.parametrize(("mechanism", "privacy", "model"), _pairs(), ids="-".join)
def test_every_method_model_and_notion_on_the_explorer_speaks_to_a_student(mechanism, privacy, model):
    """The same scan on the Explorer for each registered method, notion and model a visitor can ask for
    in the address (a pair that cannot run is not offered, and says so in words)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params.update(dict(randomness="teaching", mechanism=mechanism, privacy=privacy, model=model))
    at.run()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    texts, messages = _texts(at)
    for pattern in (CODE_NAME, ASCII_GREEK, FILE_PATH, NUMBERED, LIBRARY_KEYWORD, PREFIX):
        found = [t for t in texts if pattern.search(t)]
        assert not found, f"{pattern.pattern}: {found}"
    assert not [m for m in messages if LOWER_START.match(m)], messages
