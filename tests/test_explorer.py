"""Tables and sentences shown by the app are built from the release's numbers."""

import re

import numpy as np
import pandas as pd
import pytest

from dpci.methods import allocate
from dpci.presentation.tables import markdown_table, method_verdict, narrower_than_variability, plain_summary


def _rows(value, cells):
    return [
        dict(feature="(all)", n=value, mechanism=m, privacy=p, coverage=cov, coverage_se=0.005, length=length)
        for (m, p), cov, length in cells
    ]


def test_verdict_picks_the_shortest_method_that_keeps_its_coverage():
    frame = pd.DataFrame(
        _rows(1000, [(("objective", "pure"), 0.90, 1.0), (("output", "zcdp"), 0.95, 2.0)])
        + _rows(5000, [(("objective", "pure"), 0.945, 0.5), (("output", "zcdp"), 0.96, 0.7)])
        + _rows(9000, [(("objective", "pure"), 0.80, 0.5), (("output", "zcdp"), 0.85, 0.7)])
    )
    lines = method_verdict(frame, "n", alpha=0.05)
    assert len(lines) == 3
    # n = 1000: the shorter method under-covers (0.90 + 2 se < 0.95), so the longer one wins
    assert "n = 1000" in lines[0] and "zCDP" in lines[0] and "no method" not in lines[0]
    # n = 5000: 0.945 is within 2 se of 0.95, so the shorter method wins
    assert "n = 5000" in lines[1] and "zCDP" not in lines[1]
    assert "no method kept its coverage" in lines[2]


def test_markdown_table_keeps_every_number_and_leaves_missing_ones_blank():
    frame = pd.DataFrame(
        {"share": [0.65, 0.35], "rho": [0.325, np.nan]}, index=pd.Index(["φ1: a|b", "total"], name="step")
    )
    lines = markdown_table(frame, fmt=lambda v: f"{v:.3f}").splitlines()
    assert lines[0] == "| step | share | rho |" and set(lines[1]) == {"|", "-"}
    assert lines[2] == "| φ1\\: a\\|b | 0.650 | 0.325 |"  # a pipe in a cell cannot split it (all escaped)
    assert lines[3] == "| total | 0.350 |  |"


def _table(nonprivate=True):
    table = pd.DataFrame(
        {
            "feature": ["a", "b"],
            "private_estimate": [0.5, 0.1],
            "private_lower": [0.1, -0.3],
            "private_upper": [0.9, 0.5],
        }
    )
    if nonprivate:
        table["nonprivate_lower"], table["nonprivate_upper"] = [0.3, -0.1], [0.7, 0.3]
    return table


def test_plain_summary_compares_widths_only_with_non_private_intervals():
    spend = allocate(1.0, (0.65, 0.175, 0.175), "objective", "pure").spend
    lines = plain_summary(_table(), spend, "pure", 0.95, 1000)
    assert "2.0 times as wide" in lines[0]  # widths 0.8 / 0.4 and 0.8 / 0.4
    assert "1 of 2 coefficients" in lines[1]  # b's private interval holds 0
    assert any(line.startswith("Guarantee: ε = 1.") for line in lines)
    public = plain_summary(_table(nonprivate=False), spend, "pure", 0.95, 1000)
    assert not any("times as wide" in line for line in public) and len(public) == len(lines) - 1


def test_plain_summary_warns_of_a_known_seed_and_drops_a_void_guarantee():
    spend = allocate(0.5, (0.9, 0.05, 0.05), "output", "zcdp").spend
    lines = plain_summary(_table(), spend, "zcdp", 0.95, 1000, delta=1e-6, seed=7)
    caveat = next(i for i, line in enumerate(lines) if "seed 7" in line)
    assert "not themselves a private release" in lines[caveat]
    # the guarantee follows, as the method's: these numbers do not have it
    assert lines[caveat + 1].startswith("What the method guarantees with secret randomness: ρ = 0.5")
    assert not any(line.startswith("Guarantee") for line in lines)
    assert any(line.startswith("Guarantee: ρ = 0.5") for line in plain_summary(_table(), spend, "zcdp", 0.95, 1000))
    void = plain_summary(_table(), spend, "zcdp", 0.95, 1000, not_private="the bounds of age came from the data.")
    assert not any(line.startswith("Guarantee") for line in void)
    assert "No privacy guarantee: the bounds of age came from the data." in void


def test_intervals_narrower_than_their_variability_interval_are_named():
    table = _table()
    assert narrower_than_variability(table) == []  # no variability intervals yet
    table["variability_lower"], table["variability_upper"] = [0.2, -0.5], [0.8, 0.6]  # widths 0.6 and 1.1
    assert narrower_than_variability(table) == ["b"]  # private widths 0.8 and 0.8


@pytest.mark.parametrize(
    "hostile",
    [
        "![b](http://host/x.png)",
        "[Log in again](http://evil.example/login)",
        "<http://evil.example>",
        "www.evil.example",
        "**bold** :red[x] $x$",
    ],
)
def test_escaped_text_renders_literally_as_markdown(hostile):
    """Every character that could open a link, an image, an autolink, emphasis, LaTeX or a Streamlit
    directive is backslash-escaped (CommonMark then shows it as itself)."""
    from dpci.presentation.tables import escape_markdown

    escaped = escape_markdown(hostile)
    assert not re.findall(r"(?<!\\)[\[\]()<>*$!:_`.]", escaped), escaped
    # what a reader sees is the text itself (with invisible zero-width spaces that break autolinks)
    assert re.sub(r"\\(.)", r"\1", escaped).replace("\u200b", "") == hostile
    assert not re.search(r"(?i)https?:|www\.|\w@", escaped.replace("\\", ""))  # no autolink pattern left


def test_csv_cells_cannot_run_as_formulas():
    from dpci.presentation.tables import csv_safe

    frame = pd.DataFrame(
        {
            "feature": ['=HYPERLINK("http://x","click")', "+1", "-x", "@s", "\tz", "age"],
            "lower": [-1.5, 0.0, 1.0, 2.0, 3.0, 4.0],
        }
    )
    out = csv_safe(frame)
    assert list(out["feature"]) == ["'" + v for v in frame["feature"][:5]] + ["age"]
    assert out["lower"].tolist() == frame["lower"].tolist()  # numbers stay numbers, negatives too


def test_verdict_never_crowns_intervals_too_wide_to_be_useful():
    """A method that keeps its coverage only because its intervals are wider than twice a typical true
    coefficient is not "the shortest that keeps its coverage": a useful one wins, or the sentence says none is."""

    def rows(n, cells, truth):
        out = []
        for (m, p), cov, length in cells:
            out.append(
                dict(feature="(all)", n=n, mechanism=m, privacy=p, coverage=cov, coverage_se=0.005, length=length)
            )
            out += [dict(feature=f"x{j}", n=n, mechanism=m, privacy=p, theta0=t) for j, t in enumerate(truth)]
        return out

    truth = [1.24, -0.8, 0.5]  # median |theta_0| = 0.8: useful below a length of 1.6
    frame = pd.DataFrame(
        rows(1000, [(("objective", "pure"), 0.99, 21.7), (("output", "zcdp"), 0.95, 1.2)], truth)
        + rows(2000, [(("objective", "pure"), 1.00, 14.0), (("output", "zcdp"), 0.97, 9.0)], truth)
    )
    lines = method_verdict(frame, "n", alpha=0.05)
    assert "n = 1000" in lines[0] and "zCDP" in lines[0] and "too wide" not in lines[0]
    assert "n = 2000" in lines[1] and "too wide to be useful" in lines[1] and "≈ 0.8" in lines[1]
