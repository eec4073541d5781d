"""The loop both method-comparison benches share: one cell after another, the table so far kept on disk."""

from __future__ import annotations

import contextlib
import sys

import pandas as pd


def run_cells(cells, run, log_path=None, out=None, rows_per_cell: int = 1) -> pd.DataFrame:
    """``run(log, *cell)`` for each cell, returning its rows. After each cell the table so far goes to ``out``
    (CSV, if given) and the cell's rows to the log (``log_path``, appended; default stderr), so a long run
    loses nothing when stopped; the whole table is printed at the end and returned."""
    rows: list[dict] = []
    with open(log_path, "a") if log_path else contextlib.nullcontext(sys.stderr) as log:
        for cell in cells:
            rows.extend(run(log, *cell))
            frame = pd.DataFrame(rows)
            if out:
                frame.to_csv(out, index=False)
            print(frame.tail(rows_per_cell).to_string(index=False), file=log, flush=True)
    frame = pd.DataFrame(rows)
    print(frame.to_string(index=False))
    return frame
