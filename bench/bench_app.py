"""Speed of the app in a real browser, against a minimal Streamlit page in the same run.

Starts two Streamlit servers (the app and bench/reference_app.py: a title, a metric and a
Plotly chart), loads each in Debian's Chromium several times, and reports the time from
navigation to the first drawn Plotly chart (cold: first load of a fresh server; warm: later
loads), the time to the first variability interval drawn in the chart, and the time from a
slider key press to the redrawn private intervals, each against issue 5's target (first chart
within 3 s of page load, first variability interval within 2 s more, slider to redraw under
0.5 s). The browser shares the machine with the server. A screenshot goes to bench/results/.

    python bench/bench_app.py
"""

from __future__ import annotations

import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHART_X = "() => document.querySelector('.js-plotly-plot').data[0].x"
VI_DRAWN = ("() => { const p = document.querySelector('.js-plotly-plot'); return !!p && "
            "p.data.some(t => (t.name || '').startsWith('variability')); }")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TARGETS = {"first chart": 3.0, "first variability interval, after the chart": 2.0, "slider to redraw": 0.5}
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(script, port):
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
                             "--server.port", str(port), "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
            return proc
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{script} did not start")


def first_chart(browser, url, loads=4):
    times = []
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    for _ in range(loads):
        page = context.new_page()
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        times.append(time.perf_counter() - start)
        page.close()
    context.close()
    return times


def main():
    app_port, ref_port = free_port(), free_port()
    app, ref = serve("app.py", app_port), serve("bench/reference_app.py", ref_port)
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            ref_times = first_chart(browser, f"http://127.0.0.1:{ref_port}")
            app_times = first_chart(browser, f"http://127.0.0.1:{app_port}")
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            start = time.perf_counter()
            page.goto(f"http://127.0.0.1:{app_port}/?epsilon=0.5")
            page.wait_for_selector(".js-plotly-plot", timeout=120_000)
            chart = time.perf_counter() - start
            page.wait_for_function(VI_DRAWN, timeout=120_000, polling=50)
            preview = time.perf_counter() - start
            page.screenshot(path=str(results / "bench_app_first_vi.png"))
            lags = []
            metric = page.locator('[data-testid="stMetricValue"]').first
            for value in ("0.75", "1", "1.5"):
                page.wait_for_timeout(3000)  # let the previous run settle, so the key goes to the slider
                before = page.evaluate(CHART_X)
                page.locator('[data-testid="stSlider"]', has_text="Total budget ε").get_by_role("slider").focus()
                start = time.perf_counter()
                page.keyboard.press("ArrowRight")
                while metric.inner_text(timeout=5000).strip() != value:
                    if time.perf_counter() - start > 60:
                        raise RuntimeError(f"the metric shows {metric.inner_text()!r}, expected {value!r}")
                    page.wait_for_timeout(20)
                page.wait_for_function(f"before => JSON.stringify(({CHART_X})()) !== JSON.stringify(before)",
                                       arg=before)
                lags.append(time.perf_counter() - start)
            browser.close()
    finally:
        app.terminate()
        ref.terminate()
    cold_ratio = app_times[0] / ref_times[0]
    warm_app, warm_ref = statistics.median(app_times[1:]), statistics.median(ref_times[1:])
    print(f"first chart, cold server: app {app_times[0]:.2f} s, reference page {ref_times[0]:.2f} s "
          f"(ratio {cold_ratio:.1f})")
    print(f"first chart, warm (median of {len(app_times) - 1}): app {warm_app:.2f} s, reference {warm_ref:.2f} s "
          f"(ratio {warm_app / warm_ref:.1f})")
    print(f"new session with other settings: chart {chart:.2f} s, first variability interval drawn "
          f"{preview - chart:.2f} s later")
    print(f"slider key press to redrawn private intervals: {', '.join(f'{v:.2f}' for v in lags)} s")
    measured = {"first chart": max(app_times[0], chart), "first variability interval, after the chart": preview - chart,
                "slider to redraw": statistics.median(lags)}
    for name, target in TARGETS.items():
        verdict = "meets" if measured[name] <= target else "MISSES"
        print(f"target {name} <= {target:g} s: {measured[name]:.2f} s, {verdict}")


if __name__ == "__main__":
    main()
