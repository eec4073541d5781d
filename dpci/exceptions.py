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
