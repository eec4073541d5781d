"""Code, the README and the guides state what must hold, not the history behind it: no issue numbers
and no dates (history lives in git and in bench/history.md, the benchmarks' dated log)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HISTORY = re.compile(r"\b[Ii]ssue #?\d+\b|\b20\d\d-[01]\d-[0-3]\d\b")
LOGS = {"bench/history.md"}  # the dated measurement log, outside the documentation site
GENERATED = ("docs/figures/",)  # the reproduction's own record of its run


def _files():
    for pattern in ("*.py", "*.md", "*.sh", "*.toml", "*.yml", "*.yaml", "Dockerfile"):
        for path in ROOT.rglob(pattern):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith((".venv", "site/", "test-artifacts/", ".git/", *GENERATED)) or rel in LOGS:
                continue
            if "/." in "/" + rel or "node_modules" in rel:
                continue
            yield rel


def test_no_issue_numbers_or_dates():
    found = {}
    for rel in _files():
        hits = [m.group(0) for m in HISTORY.finditer((ROOT / rel).read_text(errors="replace"))]
        if hits:
            found[rel] = hits[:3]
    assert not found, f"say what must hold and why instead of: {found}"


def test_the_pattern_finds_what_it_forbids():
    date, issue = "-".join(("2026", "11", "27")), " ".join(("issue", "26"))  # written apart, or this file would match
    assert HISTORY.search(f"a race met on {date}") and HISTORY.search(f"({issue})")
    assert not HISTORY.search("Section 7.1, Eq. 3.2, 10,000 replicates")
