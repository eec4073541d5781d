"""Tables and sentences shown by the app are built from the release's numbers."""

import numpy as np
import pandas as pd

from dpci.explorer import markdown_table, method_verdict


def _rows(value, cells):
    return [dict(feature="(all)", n=value, mechanism=m, privacy=p, coverage=cov, coverage_se=0.005, length=length)
            for (m, p), cov, length in cells]


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
    frame = pd.DataFrame({"share": [0.65, 0.35], "rho": [0.325, np.nan]},
                         index=pd.Index(["φ1: a|b", "total"], name="step"))
    lines = markdown_table(frame, fmt=lambda v: f"{v:.3f}").splitlines()
    assert lines[0] == "| step | share | rho |" and set(lines[1]) == {"|", "-"}
    assert lines[2] == "| φ1: a\\|b | 0.650 | 0.325 |"  # a pipe in a cell cannot split it
    assert lines[3] == "| total | 0.350 |  |"
