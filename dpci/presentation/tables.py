"""Tables and sentences for one release, shared by the Explorer and Present pages and the
HTML report (no UI code)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..intervals import too_wide
from ..recommend.bias import theta_interval

# ASCII punctuation that Markdown, GitHub-flavoured autolinks, LaTeX ($) or Streamlit's directives
# (:red[...], :material/...:) read; CommonMark lets any of it be backslash-escaped.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:/&@])")
ZWSP = "\u200b"
_AUTOLINK = re.compile(r"\\:(?=\\/\\/)|(?<=\w)\\@|(?i:w)(?=ww\\\.)")  # "://", "x@", "www."

# Cells a spreadsheet would read as a formula (OWASP CSV injection): = + - @ and tab/CR first.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def escape_markdown(text) -> str:
    """``text`` (a column name, a file name, an address value, an error quoting either) shown
    literally where Streamlit renders Markdown: no link, image, emphasis or directive can be
    injected, and line breaks become spaces."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", str(text)).replace("\r", " ").replace("\n", " ")
    # GitHub-flavoured autolinks (http://, www., e-mail addresses) survive backslash escapes in
    # Streamlit's renderer (seen in Chromium): an invisible zero-width space breaks each pattern.
    return _AUTOLINK.sub(lambda m: ZWSP + m[0] if m[0].startswith("\\") else m[0] + ZWSP, escaped)


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells (and column names) cannot run as spreadsheet formulas: those starting
    with = + - @, tab or CR get a leading apostrophe (OWASP). Numbers are left as numbers."""

    def cell(v):
        return "'" + v if isinstance(v, str) and v.startswith(_FORMULA_START) else v

    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_object_dtype(out[col]) or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(cell)
    out.columns = [cell(str(c)) for c in out.columns]
    return out


def interval_table(
    names, release, nonprivate=None, variability=None, truth=None, alpha=None, bias=None
) -> pd.DataFrame:
    """One row per coefficient: private, variability and non-private intervals, estimates, truth.

    ``variability`` is a (d, 2) array of variability-interval bounds (or None while none is ready).
    ``bias``: the private interval is for the unregularised coefficients, widened by this proven bound on
    the penalty's bias on both sides (a :class:`dpci.recommend.BiasBound`; post-processing).
    """
    bounds = theta_interval(release, bias, alpha)
    table = pd.DataFrame(
        {
            "feature": list(names),
            "private_estimate": release.theta,
            "private_lower": bounds[:, 0],
            "private_upper": bounds[:, 1],
        }
    )
    if variability is not None:
        table["variability_lower"], table["variability_upper"] = variability[:, 0], variability[:, 1]
    if nonprivate is not None:
        nb = nonprivate.interval(alpha)
        table["nonprivate_estimate"] = nonprivate.theta
        table["nonprivate_lower"], table["nonprivate_upper"] = nb[:, 0], nb[:, 1]
    if truth is not None:
        table["theta0"] = truth
    return table


def markdown_table(frame: pd.DataFrame, fmt=lambda v: f"{v:.4g}") -> str:
    """``frame`` (its index and columns) as a Markdown table; numbers through ``fmt``, NaN left blank.

    Light to draw in a browser, unlike an interactive grid: the Explorer shows its small tables so.
    """

    def cell(v):
        if isinstance(v, (float, np.floating)) and np.isnan(v):
            return ""
        if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
            return fmt(v)
        return escape_markdown(v)  # names come from files and addresses: shown, never interpreted

    header = [escape_markdown(frame.index.name or "")] + [escape_markdown(c) for c in frame.columns]
    rows = [[cell(i)] + [cell(v) for v in row] for i, row in zip(frame.index, frame.itertuples(index=False))]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def narrower_than_variability(table: pd.DataFrame) -> list[str]:
    """The features whose private interval is narrower than their variability interval (none when
    the table has no variability intervals). Such an interval under-covers: it claims less
    uncertainty than the private estimate really has."""
    if "variability_lower" not in table:
        return []
    private = table["private_upper"] - table["private_lower"]
    variability = table["variability_upper"] - table["variability_lower"]
    return list(table["feature"][private < variability])


def width_ratio(table: pd.DataFrame) -> float:
    """Median ratio of private to non-private interval width."""
    private = table["private_upper"] - table["private_lower"]
    nonprivate = table["nonprivate_upper"] - table["nonprivate_lower"]
    return float(np.median(private / nonprivate))


def plain_summary(
    table: pd.DataFrame,
    spend,
    privacy: str,
    level: float,
    n: int,
    delta: float = 1e-6,
    seed: int | None = None,
    not_private: str | None = None,
    accounts_for_privacy_noise: bool = True,
) -> list[str]:
    """A few plain sentences for people who do not know what zCDP is.

    The width comparison is made only if ``table`` has non-private intervals (which are not
    private themselves). ``seed``: the release's fixed random seed, if any: anyone who knows it can
    recompute the noise, so the sentences say the numbers are a demonstration. ``not_private``: why
    the guarantee does not hold (e.g. data-derived bounds); then no guarantee is stated.
    """
    lines = []
    if "nonprivate_lower" in table:
        ratio = width_ratio(table)
        lines.append(
            f"The private {100 * level:g}% intervals are typically {ratio:.1f} times as wide as intervals "
            f"computed without privacy on the same {n:,} rows: that is the price of the guarantee."
        )
    crosses = ((table["private_lower"] < 0) & (table["private_upper"] > 0)).sum()
    lines.append(
        f"{len(table) - crosses} of {len(table)} coefficients have a private interval that excludes zero, "
        "so their sign is clear even after privacy noise."
    )
    if seed is not None:
        # A known seed gives away the noise, and with it the guarantee (the noise must be secret).
        lines.append(
            f"These numbers were drawn with the fixed random seed {seed}, so anyone can recompute the noise: "
            "they demonstrate the method and are not themselves a private release. A real release draws "
            "fresh, secret randomness once (dpci: random_state=None)."
        )
    # With a known seed the guarantee is the method's, not these numbers'.
    guarantee = "Guarantee" if seed is None else "What the method guarantees with secret randomness"
    if not_private:
        lines.append(f"No privacy guarantee: {not_private}")
    elif privacy == "pure":
        lines.append(
            f"{guarantee}: ε = {spend.epsilon:.3g}. Whatever anyone knows in advance, the released numbers "
            f"change the odds of any conclusion about one person by at most a factor e^ε = "
            f"{np.exp(spend.epsilon):.2f}, whether or not that person's row is in the data."
        )
    else:
        approx = spend.to_approx_dp(delta)
        lines.append(
            f"{guarantee}: ρ = {spend.rho:.3g} (zero-concentrated DP), which implies "
            f"(ε = {approx.epsilon:.3g}, δ = {delta:.0e}): one person's row changes the odds of any "
            f"conclusion by at most e^ε = {np.exp(approx.epsilon):.3g}, except with probability δ."
        )
    if accounts_for_privacy_noise:
        lines.append(
            "The intervals account for both sampling noise and privacy noise, and computing them is part "
            "of the same privacy budget."
        )
    else:
        lines.append(
            "These intervals leave the privacy noise out (a naive baseline): they are narrower than honest private "
            "intervals and contain the true coefficients less often than their level says. Do not publish them."
        )
    return lines


def too_wide_sentence(mean_width: float, typical: float, what: str = "The private intervals") -> str:
    """A sentence that calls intervals too wide to be useful (:func:`dpci.intervals.too_wide`), or "" when
    they are not: covering the truth is no achievement for an interval that could not tell a typical
    coefficient from 0."""
    if np.isnan(typical) or not too_wide(mean_width / 2, typical):
        return ""
    return (
        f"**Too wide to be useful:** {what} are {mean_width:.3g} wide on average, more than twice a typical "
        f"coefficient (≈ {typical:.2g}), so they could not tell such a coefficient from 0; containing it says "
        "little. More budget or more rows narrow them."
    )


def release_too_wide(table: pd.DataFrame) -> str:
    """:func:`too_wide_sentence` for one release's table (:func:`interval_table`), judged against its own
    estimates (post-processing: the truth is unknown), or "" when its intervals are useful: when one of them
    excludes 0 (a large effect told apart from 0 beside small ones), or they are narrow beside the estimates."""
    lower, upper = table["private_lower"], table["private_upper"]
    if bool(((lower > 0) | (upper < 0)).any()):  # some effect is told from 0: the chart says something
        return ""
    width = float(np.mean(upper - lower))
    typical = float(np.median(np.abs(table["private_estimate"])))
    return too_wide_sentence(width, typical).replace("a typical coefficient", "a typical estimated coefficient")


def method_verdict(frame: pd.DataFrame, over: str, alpha: float) -> list[str]:
    """Plain sentences (Markdown), one per value of ``over``: the method with the shortest mean interval
    among those whose coverage is within 2 standard errors of 1 - alpha and whose intervals are useful
    (:func:`dpci.intervals.too_wide`: half the mean length below the median |theta_0| of its rows). A
    method that covers only because its intervals are too wide to tell a typical coefficient from 0 is
    never crowned; the sentence says so."""
    from .figures import method_label

    rows = frame[frame["feature"] == "(all)"]
    lines = []
    for value, grp in rows.groupby(over):
        honest = grp[grp["coverage"] + 2 * grp["coverage_se"] >= 1 - alpha]
        typical = {key: _typical_truth(frame, over, value, key) for key in zip(grp["mechanism"], grp["privacy"])}
        useful = honest[[_useful(r.length, typical[(r.mechanism, r.privacy)]) for r in honest.itertuples()]]
        if len(useful):
            best = useful.sort_values("length").iloc[0]
            tail = ""
        else:
            best = (honest if len(honest) else grp).sort_values("length").iloc[0]
            tail = (
                " — no method kept its coverage here"
                if not len(honest)
                else " — too wide to be useful: no method that kept its coverage could tell a typical "
                f"coefficient (≈ {typical[(best['mechanism'], best['privacy'])]:.2g}) from 0 here"
            )
        lines.append(
            f"{over} = {value:g}: **{method_label(best['mechanism'], best['privacy'])}** "
            f"(mean length {best['length']:.3g}, coverage {best['coverage']:.2f})" + tail
        )
    return lines


def _useful(length: float, typical: float) -> bool:
    """Useful by too_wide's rule; where the truth is unknown (no per-coefficient rows), not judged."""
    return bool(np.isnan(typical)) or not too_wide(length / 2, typical)


def _typical_truth(frame: pd.DataFrame, over: str, value, method: tuple[str, str]) -> float:
    """The median |theta_0| of one method's coefficients at one value of the sweep (NaN where unknown)."""
    mine = frame[
        (frame["feature"] != "(all)")
        & (frame[over] == value)
        & (frame["mechanism"] == method[0])
        & (frame["privacy"] == method[1])
    ]
    if "theta0" not in mine or mine["theta0"].isna().all():
        return float("nan")
    return float(np.nanmedian(np.abs(mine["theta0"].to_numpy(dtype=float))))
