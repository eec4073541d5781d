"""A real Streamlit server and a real Chromium, for end-to-end tests.

Chromium comes from Debian (``apt-get install -y chromium``; .ci/run installs it);
``playwright install`` cannot download browsers here. Without Chromium or Playwright
the tests skip and say why.
"""

import os
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path

import numpy as np
import pytest

from bench.browser import CHROMIUM, CHROMIUM_ARGS, free_port
from bench.memory import tree_rss_mb

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def start_server(log_path, env=None):
    """A Streamlit server running app.py on a free port, writing to ``log_path``: (url, process, log);
    ``env``: its environment (default: this process's). Fails the test if it does not answer within 90 s."""
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(log_path, "w")  # noqa: SIM115 - open for the server's whole life
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    command += ["--server.fileWatcherType", "none"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return url, proc, log
        except OSError:
            time.sleep(0.5)
    proc.kill()
    pytest.fail("the Streamlit server did not start within 90 s")


def stop(proc, timeout=20.0) -> bool:
    """SIGTERM, then SIGKILL if ``proc`` has not exited within ``timeout`` seconds; True if it stopped
    by itself."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return False


# Streamlit 1.67 on Starlette 1.x: when a browser leaves while the server is sending to it, the stream
# endpoint's receive raises Starlette's WebSocketDisconnected (a RuntimeError), which the endpoint takes for
# a text frame and answers with a close, which raises again; uvicorn logs the pair as "Exception in ASGI
# application". The browser is gone and nothing of the app ran: upstream's race, not an error of the app.
CLIENT_LEFT = "starlette.websockets.WebSocketDisconnected"
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")


def _traceback_end(lines, start):
    """Index after the last line of the (possibly chained) traceback that starts at ``lines[start]``, and
    that line (the exception raised last)."""
    i = start + 1
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line[0] in " \t" or line.startswith(("Traceback", *_CHAINED)):
            i += 1
            continue
        following = next((later for later in lines[i + 1 :] if later.strip()), "")
        if following.startswith(_CHAINED):
            i += 1
            continue
        return i + 1, line
    return i, ""


def app_errors(log: str) -> str:
    """The server's log without the tracebacks of browsers that left mid-message (:data:`CLIENT_LEFT`):
    what a test asserts holds no exception. Any other traceback, chained or not, is kept whole."""
    lines, kept, i = log.splitlines(keepends=True), [], 0
    while i < len(lines):
        if lines[i].startswith("Exception in ASGI application"):
            end, last = _traceback_end(lines, i)
            if last.startswith(CLIENT_LEFT + ":"):
                i = end
                continue
        kept.append(lines[i])
        i += 1
    return "".join(kept)


@pytest.fixture(scope="session")
def server():
    """(url, function returning the server's resident memory in MB, children included)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # pytest -n: a server, and a log, per test process
    log = ARTIFACTS / ("streamlit-server.log" if worker is None else f"streamlit-server-{worker}.log")
    url, proc, _ = start_server(log)
    yield url, lambda: tree_rss_mb(proc.pid)
    if not stop(proc):  # reported, not failed: the tests themselves are over
        warnings.warn(
            f"the Streamlit server did not stop within 20 s of SIGTERM and was killed (see {log})",
            stacklevel=1,
        )


@pytest.fixture(scope="session")
def app_url(server):
    return server[0]


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install -e '.[dev]')"
    )
    if not Path(CHROMIUM).exists():
        message = f"Chromium not found at {CHROMIUM}: install Debian's chromium (apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI installs it (.ci/run); a silent skip there would hide a broken setup
        pytest.skip(message)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember each phase's outcome on the test item, so the page fixture can tell a failure."""
    outcome = yield
    setattr(item, f"rep_{call.when}", outcome.get_result())


@pytest.fixture
def page(browser, request):
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(90_000)
    yield pg
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:  # what the page showed when the test failed
        pg.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"), full_page=True)
    context.close()


def wait_for_app(page):
    """Until the app is drawn and no script runs (Streamlit's status widget gone)."""
    page.wait_for_selector('[data-testid="stApp"]')
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=90_000)


def choose(page, label, option):
    """Pick an option of a select box, again if a rerun closed its list before the click landed."""
    for _ in range(5):
        page.locator('[data-testid="stSelectbox"]', has_text=label).first.click()
        try:
            page.get_by_role("option", name=option).click(timeout=10_000)
            return
        except Exception:  # noqa: BLE001 - a rerun redrew the page under the click: try again
            wait_for_app(page)
    raise AssertionError(f"could not choose {option!r} in {label!r}")


def upload(page, path, target="label"):
    """Upload the CSV at ``path`` on the Explorer and choose its target (the select starts empty)."""
    page.locator('input[type="file"]').set_input_files(str(path))
    page.locator('[data-testid="stSelectbox"]', has_text="Target column").first.wait_for(timeout=60_000)
    wait_for_app(page)
    choose(page, "Target column", target)


def people_csv(path, n, seed, region=False):
    """A CSV of n people (age, hours, label yes/no, older people more often yes) at ``path``, to upload;
    ``region``: with a categorical column ``region`` (north, south, east) last."""
    rng = np.random.default_rng(seed)
    age, hours = rng.uniform(18, 80, n), rng.uniform(1, 80, n)
    label = np.where(rng.random(n) < 1 / (1 + np.exp(-(age - 45) / 10)), "yes", "no")
    rows = [f"{a:.0f},{h:.0f},{v}" for a, h, v in zip(age, hours, label)]
    if region:
        rows = [f"{r},{p}" for r, p in zip(rows, rng.choice(REGIONS, n))]
    path.write_text(("age,hours,label,region\n" if region else "age,hours,label\n") + "\n".join(rows))
    return path


REGIONS = ("north", "south", "east")
