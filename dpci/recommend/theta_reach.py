"""Where no c gives an interval for theta from the release: the least budget that gives one, from public facts
only (docs/choosing-c.md). Nothing here reads private data, so nothing is charged."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

from .search import recommend_c


def gives_theta(n, d, **facts) -> bool:
    """Whether some c gives an interval for theta from the release (:mod:`dpci.theta`) at these public facts:
    :func:`dpci.recommend_c`'s verdict on its reference. ``facts``: the keywords of :func:`dpci.recommend_c`
    (a stand-in's rows included); settings at which the method does not run give none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the verdict is the answer; its words are recommend_c's
        try:
            rec = recommend_c(n, d, **facts)
        except ValueError:
            return False
    return rec.from_release and math.isfinite(rec.width)


def least_budget_for_theta(n, d, budgets: Sequence[float], **facts) -> float | None:
    """The least of ``budgets`` at which some c gives an interval for theta from the release (:func:`gives_theta`),
    or None where the largest gives none.

    A bisection over the sorted ``budgets`` (about log2 of their number calls of :func:`dpci.recommend_c`): it
    assumes that more budget never takes the interval away, as every noise scale of the release falls with it.
    ``facts``: the keywords of :func:`dpci.recommend_c` but ``budget``.

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> from dpci.recommend import least_budget_for_theta
    >>> X, y = make_synthetic_logistic(4_000, [1.5, -1.0, 0.5, 0.3], random_state=0)  # public rows like yours
    >>> facts = dict(method="objective", privacy="pure", stand_in=(X, y))
    >>> least_budget_for_theta(2_000, 4, [0.1, 0.3, 1, 3, 10], **facts) in (0.3, 1, 3)
    True
    """
    ordered = sorted(float(b) for b in budgets)
    if not ordered or not gives_theta(n, d, budget=ordered[-1], **facts):
        return None
    below, gives = -1, len(ordered) - 1  # ordered[gives] gives one; every budget at or below ordered[below] none
    while gives - below > 1:
        middle = (below + gives) // 2
        if gives_theta(n, d, budget=ordered[middle], **facts):
            gives = middle
        else:
            below = middle
    return ordered[gives]
