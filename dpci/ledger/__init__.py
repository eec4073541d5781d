"""The privacy ledger: one persistent, proven account of what every result from a dataset spent.

* :class:`Ledger` (``dpci.Ledger``): the database (SQLite by default, any SQLAlchemy URL), datasets
  keyed by a keyed hash of their content, the filter that admits each release before its noise is
  drawn, the store of released outputs.
* :class:`Budget`: a dataset's budget, fixed before its first release (pure epsilon, or zCDP rho at a
  delta); :mod:`dpci.ledger.filter` holds the arithmetic and its references.
* :mod:`dpci.ledger.hooks`: how library functions report to the active ledger.

The argument, with the theorem each step uses, is in docs/privacy-ledger.md.
"""

from .answers import Admission, Practice, Preview, Status, StoredRelease
from .filter import Budget, BudgetExceeded, NotCovered, tight_epsilon, tight_rho
from .hooks import Watch, active, admit_release, is_public_seed, note_not_private

# Ledger loads SQLAlchemy: imported on first use (a bootstrap worker never needs it).

__all__ = [
    "Admission",
    "Budget",
    "BudgetExceeded",
    "Ledger",
    "NotCovered",
    "Practice",
    "Preview",
    "Status",
    "StoredRelease",
    "Watch",
    "active",
    "admit_release",
    "is_public_seed",
    "note_not_private",
    "tight_epsilon",
    "tight_rho",
]


def __getattr__(name):
    if name == "Ledger":
        from . import ledger

        return getattr(ledger, name)
    raise AttributeError(f"module 'dpci.ledger' has no attribute {name!r}")
