"""Screenshots of every page of the app at projector and desktop sizes, for docs/ and review.

Starts the app from a checkout (default: this one), opens each page in Debian's Chromium at each size,
waits for its charts, and writes PNGs named <page>-<width>x<height>.png.

    python bench/screenshots.py --out docs/screenshots/after
    python bench/screenshots.py --root /path/to/older/checkout --out docs/screenshots/before
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.browser import CHROMIUM, CHROMIUM_ARGS, free_port

SIZES = ((1280, 720), (1920, 1080))
# (file name, address path and query): the Explorer on Adult in teaching mode (a class's view), the other
# pages with their defaults
PAGES = (
    ("explorer", "/?randomness=teaching"),
    ("budget-allocation", "/Budget_allocation?randomness=teaching"),
    ("coverage-and-sample-size", "/Coverage_and_sample_size?randomness=teaching"),
    ("compare-methods", "/Compare_methods?randomness=teaching"),
    ("budget-for-a-target-width", "/Budget_for_a_target_width?randomness=teaching"),
    ("how-it-works", "/How_it_works?randomness=teaching"),
    ("repeat-a-release", "/Repeat_a_release?randomness=teaching"),
    ("present", "/Present?randomness=teaching"),
)


def serve(root: Path, log):
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(command, cwd=root, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(180):
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2):
                return url, proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the app did not start")


def shoot(url: str, out: Path, pages=PAGES, sizes=SIZES, settle: float = 6.0) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for width, height in sizes:
            page = browser.new_page(viewport={"width": width, "height": height})
            for name, path in pages:
                page.goto(url + path)
                page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=60_000)
                try:
                    page.wait_for_selector(".js-plotly-plot", timeout=30_000)
                except Exception:  # noqa: BLE001 - a page without a chart until its button is pressed
                    pass
                time.sleep(settle)
                target = out / f"{name}-{width}x{height}.png"
                page.screenshot(path=str(target))
                written.append(target)
            page.close()
        browser.close()
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "server.log", "w") as log:
        url, proc = serve(args.root, log)
        try:
            for path in shoot(url, args.out):
                print(path)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    (args.out / "server.log").unlink()


if __name__ == "__main__":
    main()
