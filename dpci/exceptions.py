"""Warnings and errors shared across dpci.

Errors subclass ``ValueError`` so that callers who catch the usual scikit-learn
exception still catch ours; the message always says what was wrong and how to
fix it.
"""


class PrivacyLeakWarning(UserWarning):
    """A quantity was computed from the private data without privacy protection.

    Example: numeric bounds taken from the observed min/max of an uploaded
    column. The released intervals are then *not* differentially private with
    respect to that column (as diffprivlib warns for data-derived bounds).
    """


class DataValidationError(ValueError):
    """The data cannot be used as given; the message says what to change."""


class UnderCoverageWarning(UserWarning):
    """The settings are valid but the intervals are likely to cover less often than their level says.

    Example: objective perturbation with c just above its bound, where epsilon' = epsilon1 -
    log(1 + t/(2nc)) is a small part of epsilon1 (measured: n = 150, c = 1e-3, epsilon = 1 covers
    0.80 at nominal 0.95). The message gives the c that avoids it.
    """


class RegularisationTooSmall(ValueError):
    """Objective perturbation cannot run with this c (Algorithm 1 needs epsilon' > 0).

    ``smallest_c`` is the bound c must exceed, t / (2 n (e^epsilon1 - 1)); ``suggested_c`` a
    round value at which the intervals keep their coverage (:func:`dpci.mechanisms.safe_c`). Callers use them (the app's "use the smallest valid c" button, sweeps
    that skip a cell) instead of reading the message.
    """

    def __init__(self, message: str, smallest_c: float, suggested_c: float):
        super().__init__(message)
        self.smallest_c = smallest_c
        self.suggested_c = suggested_c

    def __reduce__(self):  # picklable across worker processes (the default passes only the message)
        return type(self), (str(self), self.smallest_c, self.suggested_c)
