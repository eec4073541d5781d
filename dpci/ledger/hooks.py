"""How library functions report to the active ledger (``with ledger.watching():`` or ``with ledger:``).

Every function that releases (the estimators, :func:`dpci.private_confidence_intervals`,
:func:`dpci.accuracy_first.accuracy_first`, :func:`dpci.methods.wu.tuned_release`,
:func:`dpci.teaching.walkthrough`) calls :func:`admit_release` *before* it draws any noise; every
computation on the data that no guarantee covers (bootstraps, sweeps) calls :func:`note_not_private`.
With no active ledger both do nothing.

A release's identity is its specification *and* its randomness: with fresh randomness (``None``, a
Generator or a SeedSequence the caller keeps secret) every call is a new release and is charged; with
an integer ``random_state`` the noise is a public function of the seed (anyone who knows it can
recompute and remove the noise), so the result is recorded as **not private** and never counted as
privacy.
"""

from __future__ import annotations

import numbers
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..accounting import PrivacySpend

if TYPE_CHECKING:
    from .ledger import Ledger


@dataclass
class Watch:
    """An active ledger for a ``with`` block: ``dataset`` (a registered key, or None to key each call's
    rows), ``session`` (a label stored with each charge), and the ``admissions`` made inside."""

    ledger: Ledger
    dataset: str | None = None
    session: str = ""
    admissions: list = field(default_factory=list)
    _tokens: list[Token] = field(default_factory=list, repr=False)

    def __enter__(self) -> Watch:
        self._tokens.append(_ACTIVE.set(self))
        return self

    def __exit__(self, *exc) -> None:
        _ACTIVE.reset(self._tokens.pop())

    def key_for(self, rows: np.ndarray) -> str:
        """The dataset these rows belong to: the named one, else the keyed hash of the rows (registered
        with the ledger's default budget on first sight)."""
        ledger = self.ledger
        if self.dataset is not None:
            return self.dataset
        key = ledger.key_of(np.ascontiguousarray(rows, dtype=float))
        return ledger.ensure(key, f"{rows.shape[0]} x {rows.shape[1]} rows")

    def status(self):
        """The status of the named dataset, or of the one dataset admitted in this block."""
        keys = {a.dataset for a in self.admissions} if self.dataset is None else {self.dataset}
        if len(keys) != 1:
            raise ValueError(f"this block touched {len(keys)} datasets; ask the ledger for one by its key.")
        return self.ledger.status(keys.pop())


_ACTIVE: ContextVar[Watch | None] = ContextVar("dpci_ledger", default=None)


def active() -> Watch | None:
    """The innermost active :class:`Watch`, or None."""
    return _ACTIVE.get()


def is_public_seed(random_state) -> bool:
    """An integer seed: the noise it draws is public (not private)."""
    return isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool)


def admit_release(rows: np.ndarray, spend: PrivacySpend, spec: dict, random_state, what: str):
    """Admit a release on ``rows`` (the margin rows y_i x_i it reads) before its noise is drawn: charged
    by the filter with fresh randomness, recorded as not private with a public seed. Returns the
    admission, or None with no active ledger. Raises BudgetExceeded (nothing drawn) when refused."""
    watch = active()
    if watch is None:
        return None
    key = watch.key_for(rows)
    ledger = watch.ledger
    if is_public_seed(random_state):
        spec = {**spec, "random_state": int(random_state)}
        admission = ledger.note(
            key, what=f"{what} (public seed {int(random_state)}: not private)", spec=spec, session=watch.session
        )
    else:
        admission = ledger.admit(key, spend, what=what, spec=spec, session=watch.session)
    watch.admissions.append(admission)
    return admission


def note_not_private(rows: np.ndarray, spec: dict, what: str):
    """Record on the active ledger, if any, a computation on the data that no guarantee covers."""
    watch = active()
    if watch is None:
        return None
    admission = watch.ledger.note(watch.key_for(rows), what=what, spec=spec, session=watch.session)
    watch.admissions.append(admission)
    return admission
