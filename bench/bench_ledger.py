"""What the privacy ledger adds to a release: one private interval on Adult with and without an
active ledger (an SQLite file in WAL mode, as the app uses), the admission alone, and showing a
stored release again, against one scikit-learn fit on the same rows in the same run.

    python bench/bench_ledger.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_core import median_seconds
from dpci import LogisticLoss, private_confidence_intervals
from dpci.data import load_adult
from dpci.ledger import Ledger
from dpci.ledger.records import StoredIntervals, release_payload
from dpci.methods import allocate


def median_ms(fn, repeats=15):
    return 1e3 * median_seconds(fn, repeats)


def main():
    data = load_adult(d=10)
    X, y, c = data.X, data.y, 1e-3
    ref = median_ms(lambda: LogisticRegression(C=1 / (2 * c * len(X)), fit_intercept=False).fit(X, y))
    folder = Path(tempfile.mkdtemp(prefix="dpci-bench-"))
    ledger = Ledger(f"sqlite:///{folder / 'ledger.sqlite3'}", budget="epsilon=1000000")
    key = ledger.key_of(b"adult")
    ledger.register(key, "Adult")
    spend = allocate(1.0, None, "output", "pure").spend

    def release():
        return private_confidence_intervals(X, y, LogisticLoss(), "output", "pure", 1.0, c=c)

    def release_on_ledger():
        with ledger.watching(dataset=key):
            return release()

    def release_keyed_by_its_rows():
        with ledger:  # the dataset named by the keyed hash of its rows, as the library does by default
            return release()

    plain = median_ms(release)
    watched = median_ms(release_on_ledger)
    keyed = median_ms(release_keyed_by_its_rows)
    admit = median_ms(lambda: ledger.admit(key, spend, what="bench"), 50)
    stored_id = ledger.store_release(None, key, "bench", {}, release_payload(release()))
    shown = median_ms(lambda: StoredIntervals.from_payload(ledger.release(stored_id).payload), 50)
    print(f"Adult, n = {len(X)}, d = 11; reference: one scikit-learn fit, median {ref:.1f} ms")
    rows = [
        ("one private interval, no ledger", plain),
        ("the same, admitted on an SQLite ledger", watched),
        ("the same, dataset keyed by its rows", keyed),
        ("admission alone (lock, filter, write)", admit),
        ("showing a stored release again", shown),
    ]
    for what, ms in rows:
        print(f"{what:<42}{ms:8.2f} ms {ms / ref:6.2f} x ref")


if __name__ == "__main__":
    main()
