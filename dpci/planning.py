"""Before any data are read: how much wider a private interval is expected to be than a non-private one,
and whether it could tell a typical coefficient from 0 (public facts only; docs/inference.md).

Both widths come from :func:`dpci.recommend.predict` on the public reference (docs/choosing-c.md): the
private interval's expected width (the method's noise law and its Monte Carlo interval, Eq. 4.1 for
Algorithm 3, Eq. 5.2 for Algorithm 5, averaged over draws of the private matrices), and the non-private
sandwich interval's at the same c, 2 z_{1-alpha/2} sd(H^-1 G / sqrt(n)) (Section 4.3).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import methods
from .recommend import predict, recommend_c

#: The verdict's second half, when the interval would be too wide to use.
TOO_WIDE = "too wide to tell a typical coefficient from 0: raise the budget or n"
#: The verdict where most releases would give no interval for theta (dpci.theta).
NO_THETA = (
    "no interval for θ expected: the private Hessian would be too noisy to undo the penalty; raise the budget or n"
)


@dataclass(frozen=True)
class Feasibility:
    """What :func:`feasibility` predicts: the expected widths (means over the coefficients), their
    ``ratio``, the predicted ``coverage`` (lowest over the coefficients), the ``typical`` coefficient of
    the public reference, ``useful`` (half the private width below it) and the ``verdict`` in words."""

    n: int
    d: int
    method: str
    privacy: str
    budget: float
    c: float
    private_width: float
    nonprivate_width: float
    coverage: float
    typical: float

    @property
    def ratio(self) -> float:
        """How many times wider than the non-private interval the private one is expected to be."""
        return self.private_width / self.nonprivate_width

    @property
    def useful(self) -> bool:
        """Whether a typical coefficient would lie outside an interval centred on 0 (half-width below it)."""
        return self.private_width / 2.0 < self.typical

    @property
    def verdict(self) -> str:
        if self.private_width == float("inf"):
            return NO_THETA
        wider = f"about {float(f'{self.ratio:.2g}'):g}x wider than a non-private interval"  # two digits: 1.3x, 350x
        return f"{wider}: useful" if self.useful else f"{wider}, {TOO_WIDE}"

    def __str__(self) -> str:
        return (
            f"{self.verdict} (n = {self.n:,}, d = {self.d}, {methods.describe(self.method, self.privacy)}, "
            f"budget {self.budget:g}, c = {self.c:.2g}: expected width {self.private_width:.3g} against "
            f"{self.nonprivate_width:.3g}; a typical coefficient {self.typical:.2g}; public facts only)"
        )


def feasibility(
    n, d, *, method, privacy, budget, c=None, loss="logistic", split=None, alpha=0.05, estimand=None
) -> Feasibility:
    """How much wider a private interval is expected to be than a non-private one, from public facts only.

    Parameters
    ----------
    n : int
        The number of rows (at least 2).
    d : int
        The number of coefficients, the constant included.
    method : str
        A registered method that takes a c (:func:`dpci.methods.available`; not Kulkarni et al.'s).
    privacy : {"pure", "zcdp"}
        The privacy notion; ``budget`` is epsilon or rho.
    budget : float
        The release's total budget.
    c : float, optional
        The regulariser; None uses :func:`dpci.recommend_c`'s.
    loss : str or Loss, default "logistic"
        The loss with its parameters.
    split : sequence of float, optional
        One share per step of the method (default: the method's, the paper's Table 2).
    alpha : float, default 0.05
        1 - the confidence level.
    estimand : {"unregularised", "regularised"}, optional
        The interval's estimand, as :func:`dpci.recommend_c`'s (default: theta where the method and loss
        give an interval for it from the release, else theta_0(c)).

    Returns
    -------
    Feasibility
        ``.ratio`` (private width over non-private width, each a mean over the coefficients),
        ``.private_width``, ``.nonprivate_width``, ``.coverage``, ``.useful`` and ``.verdict``: "about 3x
        wider than a non-private interval: useful", or "..., too wide to tell a typical coefficient from
        0: raise the budget or n". Computed on the public reference; costs no privacy.

    Raises
    ------
    ValueError
        n below 2, d not matching the reference, an unknown method or notion, a method without c, a
        budget, split, alpha or c out of range (``RegularisationTooSmall`` where the method cannot run at c).

    Examples
    --------
    >>> import dpci
    >>> shape = dpci.feasibility(30_162, 11, method="objective", privacy="zcdp", budget=0.5)  # Adult's n and d
    >>> shape.useful, shape.ratio < 2  # at the recommended c, for theta, on the public reference
    (True, True)
    >>> dpci.feasibility(300, 11, method="output", privacy="pure", budget=0.1, c=1e-3, estimand="regularised").verdict
    'about 350x wider than a non-private interval, too wide to tell a typical coefficient from 0: raise the budget or n'
    >>> dpci.feasibility(300, 11, method="output", privacy="pure", budget=0.1, c=1e-3).verdict
    'no interval for θ expected: the private Hessian would be too noisy to undo the penalty; raise the budget or n'
    """
    facts = dict(method=method, privacy=privacy, budget=budget, loss=loss, split=split, alpha=alpha, estimand=estimand)
    if c is None:
        c = recommend_c(n, d, **facts).c
    seen = predict(n, d, c, **facts)
    return Feasibility(
        int(n),
        int(d),
        methods.get(method).name,
        privacy,
        float(budget),
        float(seen.c),
        seen.width,
        float(seen.nonprivate_widths.mean()),  # type: ignore[union-attr]
        seen.coverage,
        seen.typical,
    )
