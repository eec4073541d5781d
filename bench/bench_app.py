"""Speed of the app in a real browser, against a minimal Streamlit page in the same run.

Starts two Streamlit servers (the app and bench/reference_app.py: a title, a metric and a
Plotly chart, or the title and the metric alone) and loads each in Debian's Chromium, every
load in a fresh browser context (no cached scripts, as for a student's first visit). Reports,
against the targets (first chart within 3 s of page load, first variability interval
within 2 s more, slider to redraw under 0.5 s):

- the first chart of a freshly started server (its first session imports the libraries and
  loads Adult: a one-time cost, reported apart);
- the first chart, the settings sidebar and the first variability interval of later visits, each
  on an idle server (the previous visit's bootstrap stopped: a closed tab's job stops after 15 s);
- the time from a slider key press to the redrawn private intervals.

The browser shares the machine's cores with the server. A screenshot goes to bench/results/.

    python bench/bench_app.py
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.browser import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: E402 - after the path above
from bench.cpu import spent, usage  # noqa: E402

# null while Plotly redraws the chart from scratch (it can for a few milliseconds)
CHART_X = "() => { const p = document.querySelector('.js-plotly-plot'); return p && p.data ? p.data[0].x : null; }"
VI_DRAWN = (
    "() => { const p = document.querySelector('.js-plotly-plot'); return !!p && "
    "p.data.some(t => (t.name || '').startsWith('variability')); }"
)
TARGETS = {
    "first chart": 3.0,
    "first variability interval, after the chart": 2.0,
    "variability interval done, after the chart": 3.0,
    "slider to redraw": 0.5,
}


def serve(script, port, env=None):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            script,
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
            return proc
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{script} did not start")


IDLE = 17  # seconds: a closed tab's bootstrap stops 15 s after its session ends (ui.background.session_alive)
SLIDER = '[data-testid="stSlider"]'
METRIC = '[data-testid="stMetricValue"]'


def load(browser, url, server, app=True, drawn=".js-plotly-plot .main-svg"):
    """One visit in a fresh context: seconds from navigation to the drawn chart (or ``drawn``)
    and, for the app, to the settings sliders and the first variability interval; and the CPU
    seconds of the browser, the server (process ``server``) and its workers up to the chart
    ("cpu chart") and from the chart to the interval done ("cpu done")."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    used = usage(server)
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(drawn, timeout=120_000)
    times = {"chart": time.perf_counter() - start}
    at_chart = usage(server)
    times["cpu chart"] = spent(used, at_chart)
    if app:
        page.wait_for_selector(SLIDER, timeout=120_000)
        times["settings"] = time.perf_counter() - start
        page.wait_for_function(VI_DRAWN, timeout=120_000, polling=50)
        times["variability"] = time.perf_counter() - start
        done = page.get_by_text(re.compile(r"Variability interval \(done\)")).first
        done.wait_for(timeout=120_000)
        times["done"] = time.perf_counter() - start
        times["shared"] = "shared" in done.inner_text()  # shown from a result computed before, not computed now
        times["cpu done"] = spent(at_chart, usage(server))
    return context, page, times


def slider_lags(page):
    lags = []
    # the ε the server ran last: the address it writes (teaching mode's metric says "not private", no number)
    metric = "() => parseFloat(new URLSearchParams(location.search).get('budget'))"
    for value in (0.6, 0.75, 1.0, 1.25, 1.5):  # the slider's next stops from ε = 0.5
        page.wait_for_timeout(3000)  # let the previous run settle, so the key goes to the slider
        page.wait_for_function(f"() => ({CHART_X})() !== null")
        before = page.evaluate(CHART_X)
        page.locator(SLIDER, has_text="Total budget ε").get_by_role("slider").focus()
        start = time.perf_counter()
        page.keyboard.press("ArrowRight")
        while page.evaluate(metric) != value:
            if time.perf_counter() - start > 60:
                raise RuntimeError(f"the metric shows {page.evaluate(metric)!r}, expected {value!r}")
            page.wait_for_timeout(20)
        page.wait_for_function(
            f"before => {{ const x = ({CHART_X})(); "
            f"return x !== null && JSON.stringify(x) !== JSON.stringify(before); }}",
            arg=before,
        )
        lags.append(time.perf_counter() - start)
    return lags


def main(visits=5):
    app_port, ref_port = free_port(), free_port()
    # a database of this run's own: the server keeps finished results in the ledger's database, so a visit on
    # the default one would be shown a result an earlier run computed (the same seed) instead of computing it
    scratch = tempfile.mkdtemp(prefix="bench-app-")
    env = dict(os.environ, DPCI_DATABASE_URL=f"sqlite:///{scratch}/ledger.sqlite3")
    app, ref = serve("app.py", app_port, env), serve("bench/reference_app.py", ref_port)
    results = ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    app_url, ref_url = f"http://127.0.0.1:{app_port}", f"http://127.0.0.1:{ref_port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            ref_times, bare_times = [], []
            for _ in range(visits + 1):
                context, _, times = load(browser, ref_url, ref.pid, app=False)
                ref_times.append(times)
                context.close()
                context, _, times = load(browser, ref_url + "/?chart=no", ref.pid, app=False, drawn=METRIC)
                bare_times.append(times["chart"])
                context.close()
            visits_times = []
            for i in range(visits + 1):
                # the last visit moves a slider five times: in teaching mode, which the odometer does not
                # charge (fresh randomness would reach the default cap of ε = 5 and ask to confirm)
                last = i == visits
                # a bootstrap seed of its own per visit: a result shared from an earlier visit would be shown at once
                address = "/?budget=0.5&randomness=teaching" if last else f"/?seed={100 + i}"
                context, page, times = load(browser, app_url + address, app.pid)
                visits_times.append(times)
                if last:
                    page.screenshot(path=str(results / "bench_app_first_vi.png"))
                    lags = slider_lags(page)
                context.close()
                time.sleep(IDLE)
            browser.close()
    finally:
        app.terminate()
        ref.terminate()
        app.wait(30)
        shutil.rmtree(scratch, ignore_errors=True)
    cold, warm = visits_times[0], visits_times[1:]
    med = {k: statistics.median(t[k] for t in warm) for k in ("chart", "settings", "variability", "done")}
    ref_med = statistics.median(t["chart"] for t in ref_times[1:])
    ref_cpu = statistics.median(t["cpu chart"]["browser"] for t in ref_times[1:])
    print(
        f"reference page, first chart: first visit {ref_times[0]['chart']:.2f} s, then median {ref_med:.2f} s "
        f"({', '.join(format(t['chart'], '.2f') for t in ref_times[1:])}); the browser's CPU to draw it: median "
        f"{ref_cpu:.1f} s"
    )
    print(
        f"reference page without its chart, metric drawn: median {statistics.median(bare_times[1:]):.2f} s "
        f"({', '.join(f'{t:.2f}' for t in bare_times[1:])}): Streamlit's own share"
    )
    print(
        f"app, fresh server's first visit: chart {cold['chart']:.2f} s, settings {cold['settings']:.2f} s, "
        f"first variability interval {cold['variability']:.2f} s "
        f"({cold['variability'] - cold['chart']:.2f} s after the chart; one-time: imports, data loading, workers)"
    )
    for t in warm:
        print(
            f"app visit: chart {t['chart']:.2f} s, settings {t['settings']:.2f} s, "
            f"first variability interval {t['variability']:.2f} s, done {t['done']:.2f} s "
            f"({t['done'] - t['chart']:.2f} s after the chart{'; SHARED: computed before' if t['shared'] else ''})"
        )
    print(
        f"app, median of {len(warm)} visits: chart {med['chart']:.2f} s ({med['chart'] / ref_med:.2f} x the "
        f"reference), settings {med['settings']:.2f} s, first variability interval "
        f"{med['variability'] - med['chart']:.2f} s after the chart, done {med['done'] - med['chart']:.2f} s after it"
    )
    print(f"slider key press to redrawn private intervals: {', '.join(f'{v:.2f}' for v in lags)} s")
    print_cpu(warm, ref_cpu)
    measured = {
        "first chart": max(t["chart"] for t in warm),
        "first variability interval, after the chart": max(t["variability"] - t["chart"] for t in warm),
        "variability interval done, after the chart": max(t["done"] - t["chart"] for t in warm),
        "slider to redraw": statistics.median(lags),
    }
    for name, target in TARGETS.items():
        verdict = "meets" if measured[name] <= target else "MISSES"
        print(f"target {name} <= {target:g} s (worst visit; median for the slider): {measured[name]:.2f} s, {verdict}")


def print_cpu(visits, ref_cpu):
    """Where a visit's time goes, in CPU seconds (medians): the browser up to the chart (against the
    minimal page's), then the browser, the bootstrap's workers and the server from the chart to the
    interval done; their sum over the machine's cores is the least time from the chart to done."""

    def med(phase, group):
        return statistics.median(t[phase][group] for t in visits)

    browser = med("cpu chart", "browser")
    print(
        f"CPU seconds, medians of {len(visits)} visits: the browser to the first chart {browser:.1f} "
        f"({browser / ref_cpu:.2f} x the minimal page's {ref_cpu:.1f}); from the chart to done: the browser "
        f"{med('cpu done', 'browser'):.1f}, the bootstrap's workers {med('cpu done', 'workers'):.1f}, the server "
        f"{med('cpu done', 'server'):.1f}"
    )
    floor = statistics.median(sum(t["cpu done"].values()) for t in visits) / (os.cpu_count() or 1)
    print(f"so on {os.cpu_count()} cores, done cannot come sooner than {floor:.1f} s after the chart")


if __name__ == "__main__":
    main()
