"""The two estimands an interval can be for, named (docs/choosing-c.md)."""

from __future__ import annotations

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
