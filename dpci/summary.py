"""A release's results as a statistician publishes them: a header of facts (method, notion and privacy
spent, n, d, c, split, the estimand, the randomness) and the coefficient table (estimate, SE, z, p and
the interval), rendered as text, HTML and LaTeX (statsmodels' ``Summary`` is the model).

Everything shown is post-processing of the release (:mod:`dpci.inference`). Numbers keep four
significant digits, a format that never rounds a non-zero bound to 0 nor across it (the coefficient
table's reference value); this layer cannot use :mod:`dpci.presentation.numbers`, which sits above it.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import methods
from .inference import coefficient_table
from .intervals import too_wide
from .ledger.hooks import is_public_seed
from .recommend import describe_estimand, interval_estimand

NOTION_WORDS = {"pure": "pure epsilon-DP", "zcdp": "rho-zCDP"}
LATEX_SPECIALS = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\^{}", "\\": r"\textbackslash{}"}
LATEX_SPECIALS |= {"θ": r"$\theta$", "‖": r"$\|$", "²": r"$^2$", "₀": r"$_0$", "–": "--", "<": r"$<$"}  # pdflatex-safe


@dataclass(frozen=True, eq=False)
class Summary:
    """A release's header of facts and its coefficient table, with text, HTML and LaTeX renderings.

    ``header``: (fact, value) pairs in words; ``coefficients``: the numeric table (columns estimate,
    SE, z, p, lower, upper; one row per feature); ``notes``: sentences printed below the table.
    """

    title: str
    header: tuple[tuple[str, str], ...]
    coefficients: pd.DataFrame
    notes: tuple[str, ...] = ()

    @property
    def tables(self) -> list[pd.DataFrame]:
        """[the header as a one-column frame indexed by fact, the numeric coefficient table]."""
        facts = pd.DataFrame({"value": [v for _, v in self.header]}, index=pd.Index([k for k, _ in self.header]))
        return [facts, self.coefficients]

    def formatted(self) -> pd.DataFrame:
        """The coefficient table as the renderings show it (strings; p below the Monte Carlo floor as "<floor")."""
        floor = self.coefficients.attrs.get("p_floor", 0.0)
        out = self.coefficients.apply(lambda col: col.map(_number)).astype(object)
        out["p"] = [_p_text(p, floor) for p in self.coefficients["p"]]
        level = 100.0 * (1.0 - self.coefficients.attrs.get("alpha", 0.05))
        return out.rename(columns={"lower": f"lower {level:g}%", "upper": f"upper {level:g}%"})

    def as_text(self) -> str:
        lines = [self.title, *(f"{k}: {v}" for k, v in self.header), ""]
        lines.append(self.formatted().to_string())
        return "\n".join([*lines, *self.notes])

    def as_html(self) -> str:
        rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in self.header)
        head = f'<table class="dpci-summary-header"><caption>{html.escape(self.title)}</caption>{rows}</table>'
        body = self.formatted().to_html(classes="dpci-summary-coefficients", escape=True)
        notes = "".join(f"<p>{html.escape(note)}</p>" for note in self.notes)
        return head + "\n" + body + "\n" + notes

    def as_latex(self) -> str:
        table = self.formatted()
        head = [rf"\multicolumn{{2}}{{l}}{{{_latex(self.title)}}} \\", r"\hline"]
        head += [rf"{_latex(k)} & {_latex(v)} \\" for k, v in self.header]
        columns = " & ".join(_latex(c) for c in [table.index.name or "", *table.columns])
        body = [rf"{_latex(str(i))} & " + " & ".join(_latex(v) for v in row) + r" \\" for i, row in table.iterrows()]
        spec = "l" + "r" * len(table.columns)
        return "\n".join(
            [
                r"\begin{tabular}{ll}",
                *head,
                r"\end{tabular}",
                "",
                rf"\begin{{tabular}}{{{spec}}}",
                r"\hline",
                columns + r" \\",
                r"\hline",
                *body,
                r"\hline",
                r"\end{tabular}",
                *(f"\n{_latex(note)}" for note in self.notes),
            ]
        )

    def __str__(self) -> str:
        return self.as_text()

    def _repr_html_(self) -> str:
        return self.as_html()


def _number(value: float) -> str:
    """Four significant digits (``g`` keeps a non-zero value non-zero and on its side of 0)."""
    return "–" if math.isnan(value) else f"{value:.4g}"


def _p_text(p: float, floor: float) -> str:
    return f"<{floor:.2g}" if floor > 0.0 and p < floor else _number(p)


def _latex(text: str) -> str:
    return "".join(LATEX_SPECIALS.get(ch, ch) for ch in str(text))


def randomness_words(random_state, covered: bool = True) -> str:
    """What the release's randomness makes of its privacy, in words (``covered``: nothing else about the
    release escapes the guarantee)."""
    if random_state is None:
        return "fresh (private)" if covered else "fresh, but the guarantee does not cover everything: see below"
    if is_public_seed(random_state):
        return f"not private: public seed random_state={int(random_state)} (anyone who knows it can remove the noise)"
    return "a Generator the caller passed: private only if its seed was fresh and is kept secret"


def spend_words(spend, delta: float | None = None) -> str:
    """ "epsilon = 1 (pure), rho = 0.5" (and the (epsilon, delta)-DP it implies at ``delta``)."""
    words = f"rho = {spend.rho:.4g}"
    if spend.epsilon is not None:
        words = f"epsilon = {spend.epsilon:.4g} (pure), rho = {spend.rho:.4g}"
    if delta is not None:
        approx = spend.to_approx_dp(delta)
        words += f", ({approx.epsilon:.4g}, {approx.delta:g})-DP"
    return words


def release_summary(release, names, *, title: str, random_state, delta=None, alpha=None, caveats=()) -> Summary:
    """The :class:`Summary` of a :class:`~dpci.methods.PrivateRelease` whose coefficients are ``names``.

    ``title`` names the model; ``random_state`` is the release's randomness (an integer seed is said
    to be not private); ``delta`` adds the (epsilon, delta)-DP the spend implies; ``alpha`` the level
    of the intervals shown (default the release's); ``caveats``: what the guarantee does not cover (then
    fresh randomness is not called private)."""
    alloc = release.allocation
    method = methods.get(alloc.mechanism)
    table = coefficient_table(release, names, alpha)
    m = None if release.offsets is None else release.offsets.shape[0]
    law = "normal, in closed form" if m is None else f"Monte Carlo, m = {m:,} draws (p resolved to 2/m = {2 / m:.2g})"
    allowance = getattr(release, "allowance", None)
    if not getattr(release, "valid", True):  # dpci.theta: no interval for theta (the notes say why)
        law = "none: this release gives no interval for θ (see below)"
    elif allowance is not None:  # dpci.theta: the corrected estimate's law, simulated from the release
        low, high = float(np.min(allowance)), float(np.max(allowance))
        widened = f"{high:.2g}" if f"{low:.2g}" == f"{high:.2g}" else f"{low:.2g} to {high:.2g} by coefficient"
        law = (
            f"the mechanism simulated from the release, m = {m:,} draws, each end widened by {widened} "
            "for the penalty correction's error (p resolved to 2/m)"
        )
    level = 100.0 * (1.0 - table.attrs["alpha"])
    header = (
        ("method", f"{method.label}, {NOTION_WORDS.get(alloc.privacy, alloc.privacy)}"),
        ("data", f"n = {release.n}, d = {len(release.theta)}, c = {release.c:g}"),
        (f"split ({', '.join(method.steps)})", str(tuple(round(s, 4) for s in alloc.shares))),
        ("privacy spent", spend_words(alloc.spend, delta)),
        ("intervals for", describe_estimand(interval_estimand(method, release.estimand))),
        ("randomness", randomness_words(random_state, covered=not caveats)),
        ("interval law", law),
        (
            "SE, z, p",
            f"from the interval's law, no extra privacy; p < {1 - level / 100:g} exactly when the {level:g}% interval excludes 0",
        ),
    )
    notes = list(caveats) + list(release.caveats)
    if not method.accounts_for_privacy_noise:
        notes.append("This interval leaves the privacy noise out: its SE, p-values and bounds are too small.")
    width = float(np.mean(table["upper"] - table["lower"]))
    typical = float(np.median(np.abs(table["estimate"])))
    if too_wide(width / 2.0, typical):
        notes.append(
            f"Too wide to be useful: the intervals are {width:.3g} wide on average, more than twice a typical "
            f"estimated coefficient ({typical:.2g}), so they cannot tell a coefficient of that size from 0. "
            "More budget or more rows narrow them."
        )
    return Summary(title, header, table, tuple(notes))
