"""The app's pages, listed once: app.py's navigation, the README's page table and the browser tests
all read :data:`PAGES` (a new page is one entry here and its file in pages/)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PageEntry:
    """A page of the app: its title in the navigation, its script in pages/ and its icon (a Material
    symbol, bundled with Streamlit: no font is fetched). The first entry is the default page."""

    title: str
    script: str
    icon: str

    @property
    def default(self) -> bool:
        return self is PAGES[0]

    @property
    def url_path(self) -> str:
        """Its address below the app's root ("" for the default page, the Explorer): Streamlit's, the
        script's name without its number ("pages/1_Budget_allocation.py" -> "Budget_allocation")."""
        return "" if self.default else Path(self.script).stem.split("_", 1)[1]


PAGES = (
    PageEntry("Explorer", "pages/0_Explorer.py", ":material/search:"),
    PageEntry("Budget allocation", "pages/1_Budget_allocation.py", ":material/balance:"),
    PageEntry("Coverage and sample size", "pages/2_Coverage_and_sample_size.py", ":material/grid_on:"),
    PageEntry("Compare methods", "pages/3_Compare_methods.py", ":material/compare_arrows:"),
    PageEntry("Budget for a target width", "pages/7_Budget_for_a_target_width.py", ":material/straighten:"),
    PageEntry("How it works", "pages/4_How_it_works.py", ":material/school:"),
    PageEntry("Repeat a release", "pages/6_Repeat_a_release.py", ":material/replay:"),
    PageEntry("Present", "pages/5_Present.py", ":material/slideshow:"),
)
