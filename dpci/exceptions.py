"""Warnings and errors shared across dpci.

Errors subclass ``ValueError`` so that callers who catch the usual scikit-learn
exception still catch ours; the message always says what was wrong and how to
fix it.

dpci's own warnings (the classes below) are raised with :func:`warn`: outside a
:func:`collect_warnings` block they go to Python's ``warnings`` module as usual; inside one they are
kept for the thread that raised them. Python's warning filters, ``showwarning`` and
``catch_warnings`` are one per process, so an application that serves several users from threads
(a web app's background jobs) cannot tell from them which thread a warning came from, and another
thread's ``catch_warnings`` block takes or drops it meanwhile.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

_SINK = threading.local()  # .warnings: the list of the innermost collect_warnings block of this thread


@contextmanager
def collect_warnings() -> Iterator[list[Warning]]:
    """Within this block, the warnings dpci raises in this thread (through :func:`warn`) are appended to
    the list it yields, in order, instead of going to the ``warnings`` module.

    Thread-safe: other threads' warnings, and their ``catch_warnings`` blocks, neither reach nor take
    these. Blocks nest (the innermost one collects).

    Examples
    --------
    >>> with collect_warnings() as said:
    ...     warn("c is small", UnderCoverageWarning)
    >>> [(type(w).__name__, str(w)) for w in said]
    [('UnderCoverageWarning', 'c is small')]
    """
    previous = getattr(_SINK, "warnings", None)
    sink: list[Warning] = []
    _SINK.warnings = sink
    try:
        yield sink
    finally:
        _SINK.warnings = previous


def warn(message: str, category: type[Warning], stacklevel: int = 1) -> None:
    """Warn as ``warnings.warn(message, category, stacklevel)`` does, or, inside a :func:`collect_warnings`
    block of this thread, append the warning to its list."""
    sink = getattr(_SINK, "warnings", None)
    if sink is not None:
        sink.append(category(message))
    else:
        warnings.warn(message, category, stacklevel=stacklevel + 1)


class PrivacyLeakWarning(UserWarning):
    """A quantity was computed from the private data without privacy protection.

    Example: numeric bounds taken from the observed min/max of an uploaded
    column. The released intervals are then *not* differentially private with
    respect to that column (as diffprivlib warns for data-derived bounds).

    Examples
    --------
    An estimator without ``classes=`` learns the label set from y, which the guarantee does not cover:

    >>> import warnings
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(2_000, [1.0, -0.5], random_state=0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     model = dpci.PrivateLogisticRegression(random_state=0).fit(X, y)  # no classes=(-1, 1)
    >>> [w.category.__name__ for w in caught]
    ['PrivacyLeakWarning']
    """


class DataValidationError(ValueError):
    """The data cannot be used as given; the message says what to change.

    Raised before anything is computed (so before any budget is spent) by the estimators' ``fit``,
    :func:`~dpci.release.private_confidence_intervals` and the checks of :mod:`dpci.validation`: a
    row outside the unit ball, NaN or infinite values, labels outside the public ``classes``,
    sparse or complex X. With ``private_errors=True`` the message does not quote the data.

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(200, [1.0, -0.5], random_state=0)
    >>> model = dpci.PrivateLogisticRegression(classes=(-1, 1), private_errors=True)
    >>> try:
    ...     model.fit(2 * X, y)  # rows outside the unit ball
    ... except dpci.DataValidationError as error:
    ...     print(str(error).split(".")[0])
    a row has L2 norm > 1
    """


class UnderCoverageWarning(UserWarning):
    """The settings are valid but the intervals are likely to cover less often than their level says.

    Example: objective perturbation with c just above its bound, where epsilon' = epsilon1 -
    log(1 + t/(2nc)) is a small part of epsilon1 (measured: n = 150, c = 1e-3, epsilon = 1 covers
    0.80 at nominal 0.95). The message gives the c that avoids it.

    Examples
    --------
    >>> import warnings
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(150, [1.0, -0.5], random_state=0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     model = dpci.PrivateLogisticRegression(c=2e-3, classes=(-1, 1), random_state=0).fit(X, y)
    >>> [w.category.__name__ for w in caught]
    ['UnderCoverageWarning']
    """


class WideIntervalWarning(UserWarning):
    """No regulariser c gives a useful interval with these public facts: even at the best c, the expected
    half-width exceeds a typical coefficient, so the interval cannot tell such a coefficient from 0
    (:func:`dpci.recommend_c`). The message says what to change (more budget, more rows, another method).

    Examples
    --------
    >>> import warnings
    >>> import dpci
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     rec = dpci.recommend_c(200, 11, method="output", privacy="pure", budget=0.1)
    >>> rec.useful, [w.category.__name__ for w in caught]
    (False, ['ReferenceWarning', 'WideIntervalWarning'])
    """


class ReferenceWarning(UserWarning):
    """A prediction made on the default public reference, a design that knows nothing of the user's data
    (:func:`dpci.recommend_c` without ``stand_in``). Data whose rows concentrate in a few directions get much
    wider intervals than it predicts; the message says which public fact would make it a prediction of
    the data: a public stand-in with the same columns and scaling.

    Examples
    --------
    >>> import warnings
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     rec = dpci.recommend_c(5_000, 3, method="objective", privacy="pure", budget=1.0)
    >>> [w.category.__name__ for w in caught]
    ['ReferenceWarning']
    >>> X, y = make_synthetic_logistic(2_000, [1.0, -0.5, 0.2], random_state=0)  # public rows like yours
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     rec = dpci.recommend_c(5_000, 3, method="objective", privacy="pure", budget=1.0, stand_in=(X, y))
    >>> caught
    []
    """


class RegularisationTooSmall(ValueError):
    """Objective perturbation cannot run with this c (Algorithm 1 needs epsilon' > 0).

    ``smallest_c`` is the bound c must exceed, t / (2 n (e^epsilon1 - 1)); ``suggested_c`` a
    round value at which the intervals keep their coverage (:func:`dpci.mechanisms.safe_c`). Callers use them (the app's "use the smallest valid c" button, sweeps
    that skip a cell) instead of reading the message.

    Parameters
    ----------
    message : str
        What is wrong and what to change.
    smallest_c : float
        The bound c must exceed (:func:`dpci.mechanisms.smallest_valid_c`).
    suggested_c : float
        A round c at which the intervals keep their coverage.

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(150, [1.0, -0.5], random_state=0)
    >>> try:
    ...     dpci.PrivateLogisticRegression(c=1e-5, classes=(-1, 1)).fit(X, y)
    ... except dpci.RegularisationTooSmall as error:
    ...     print(f"c must exceed {error.smallest_c:.2g}; use {error.suggested_c:g}")
    c must exceed 0.00091; use 0.0022
    """

    def __init__(self, message: str, smallest_c: float, suggested_c: float):
        super().__init__(message)
        self.smallest_c = smallest_c
        self.suggested_c = suggested_c

    def __reduce__(self):  # picklable across worker processes (the default passes only the message)
        return type(self), (str(self), self.smallest_c, self.suggested_c)
