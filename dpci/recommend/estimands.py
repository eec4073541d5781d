"""The two estimands an interval can be for, named (docs/choosing-c.md)."""

from __future__ import annotations

from .bias import BiasBound, bias_bound

ESTIMANDS = ("regularised", "unregularised")
#: How a page says which estimand an interval is for.
ESTIMAND_WORDS = {
    "regularised": "the coefficients of the model fitted with the penalty c‖θ‖², θ₀(c) (shrunk towards 0)",
    "unregularised": "the coefficients without penalty, θ (penalty bias included)",
}


def describe_estimand(estimand: str) -> str:
    """The estimand in words, for a page, a report or a table's caption."""
    return ESTIMAND_WORDS[check_estimand(estimand)]


def check_estimand(estimand) -> str:
    if estimand not in ESTIMANDS:
        raise ValueError(
            f"estimand must be 'regularised' (theta_0(c), the paper's) or 'unregularised' (theta, penalty bias "
            f"included), got {estimand!r}."
        )
    return estimand


def interval_estimand(method, estimand=None, strict=True) -> str:
    """The estimand a ``method``'s interval is for: ``estimand`` if given (None: the method's own, which
    is theta_0(c) for a method with a c and theta for one without). "regularised" for a method without a c
    is an error when ``strict`` (the estimators), else that method's own (a page's setting)."""
    native = "regularised" if method.uses_c else "unregularised"
    if estimand is None:
        return native
    if check_estimand(estimand) == "regularised" and not method.uses_c:
        if strict:
            raise ValueError(f"{method.label} has no c: its interval is for the unregularised coefficients.")
        return native
    return estimand


def estimand_bias(method, estimand, release, loss, theta_bound=None, alpha=None, strict=True) -> BiasBound | None:
    """How a ``method``'s interval is widened on both sides to be one for ``estimand``: the proven bias bound
    of this release (:func:`~dpci.recommend.bias.bias_bound`: the stated public B and the release's private
    Hessian; post-processing) when theta is asked of a method whose interval is for theta_0(c); None when the
    interval already is for the estimand. Raises ValueError, saying why, when theta cannot be offered (no
    stated ``theta_bound``, or a method that releases no private Hessian)."""
    if interval_estimand(method, estimand, strict) == "regularised" or not method.uses_c:
        return None
    return bias_bound(release, theta_bound, loss, alpha, method=method)
