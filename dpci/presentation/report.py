"""A one-file HTML report of a release: settings, plain sentences, chart, table, ledger."""

from __future__ import annotations

import html
from datetime import datetime, timezone

import pandas as pd

from .numbers import text_table


def report_html(
    title: str,
    settings: dict,
    sentences: list[str],
    table: pd.DataFrame,
    ledger: pd.DataFrame,
    figures: list,
    odds: pd.DataFrame | None = None,
) -> str:
    """Standalone HTML (plotly.js embedded once, so it opens offline). ``odds``: a readable table of
    odds ratios (:func:`dpci.presentation.odds.readable_odds`), shown before the intervals."""
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>Generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC} by dpci.</p>",
        "<ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in sentences) + "</ul>",
    ]
    for i, fig in enumerate(figures):
        parts.append(fig.to_html(full_html=False, include_plotlyjs=(i == 0)))
    if odds is not None and len(odds):
        parts.append("<h2>Odds ratios</h2>" + odds.to_html(index=False, border=0))
    words = {"epsilon": "ε", "rho": "ρ", "theta0": "θ₀ (truth)"}
    readable = text_table(table).rename(  # a bound never printed as the value it excludes (numbers.py)
        columns=lambda c: words.get(c, c.replace("nonprivate", "non-private").replace("_", " "))
    )
    parts.append("<h2>Intervals</h2>" + readable.to_html(index=False, border=0))
    parts.append(
        "<h2>Privacy spent, step by step</h2>"
        + ledger.rename(columns=words).to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}", border=0)
    )
    rows = "".join(
        f"<tr><td>{html.escape(str(k))}</td><td>{html.escape(str(v))}</td></tr>" for k, v in settings.items()
    )
    parts.append(f"<h2>Settings</h2><table>{rows}</table>")
    style = (
        "body{font-family:Helvetica,Arial,sans-serif;max-width:1000px;margin:2em auto;color:#222}"
        "table{border-collapse:collapse}td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}td:last-child{text-align:left}"
        ".meta{color:#666}"
        # printed (or saved as PDF from the browser): A4, no Plotly toolbar, charts and rows kept whole
        "@page{size:A4;margin:1.5cm}"
        "@media print{body{max-width:none;margin:0}.modebar-container{display:none!important}"
        ".plotly-graph-div{break-inside:avoid;max-width:100%}h2{break-after:avoid}tr{break-inside:avoid}}"
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{style}</style></head><body>{''.join(parts)}</body></html>"
    )
