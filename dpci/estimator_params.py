"""The estimators' parameter checks: one function ``check(name, value)`` per kind of parameter, raising
``ValueError`` with what is wrong and what is allowed (scikit-learn's ``_parameter_constraints``, as
plain functions: :mod:`dpci.estimators` lists which parameter takes which).
"""

from __future__ import annotations

import numbers

import numpy as np

from . import methods
from .accounting import Split
from .intervals import MAX_SAMPLES, MIN_SAMPLES, check_count
from .losses import coerce_loss
from .noise import check_random_state
from .validation import check_classes


def positive_real(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}.")


def one_of(allowed):
    def check(name, value):
        allowed_now = allowed() if callable(allowed) else allowed
        if value not in allowed_now:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed_now))}; got {value!r}.")

    return check


def open_unit(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (0 < value < 1):
        raise ValueError(f"{name} must lie strictly between 0 and 1 (0.05 gives 95% intervals), got {value!r}.")


RECOMMENDED = "recommended"  # c chosen by dpci.recommend_c from n, d and the settings (public facts only)
PAPER_C = 1e-3  # the paper's c (Section 7): the default where the default estimand is theta_0(c)


def c_value(name, value):
    if value is not None and value != RECOMMENDED:
        positive_real(name, value)


def sample_count(name, value):
    check_count(name, value, MIN_SAMPLES, MAX_SAMPLES, "the paper uses 10,000")


def any_split(name, value):
    if value is not None and not isinstance(value, (str, bytes)) and hasattr(value, "__len__"):
        Split(*value)  # its length is checked against the method's steps in fit; an iterator once, there


def method_name(name, value):
    if value is not None:
        one_of(methods.available)(name, value)


def random_state(name, value):
    check_random_state(value)


def label_set(name, value):
    if value is not None:
        check_classes(value)


def flag(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}.")


def loss_param(name, value):
    try:
        coerce_loss(value)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name}: {err}") from None
