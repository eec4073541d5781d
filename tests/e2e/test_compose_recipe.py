"""The classroom recipe (compose.yaml and the Dockerfile, docs/deploy-classroom.md) run without containers:
no Docker engine or base image is available here, so the compose file's own services are started as
processes, each with its ``command`` and its environment as compose.yaml and the image's ``ENV`` lines
give them, from a fresh virtual environment: the Dask scheduler, its workers (``deploy.replicas``) and
the app on a PostgreSQL ledger (a throw-away server, tests/postgres.py; SQLite where PostgreSQL is not
installed). One Chromium session opens the Explorer and waits for its variability interval, which the
scheduler's workers must have computed. Logs go to test-artifacts/compose-recipe/.

What is translated, and only that: a container's host name (a service's name, ``0.0.0.0``) becomes
127.0.0.1, each port it listens on a free local port, a command's program ``X`` becomes
``python -m X`` of the virtual environment, the image's folders (WORKDIR, a volume) local ones, and the
database service the throw-away server (the URL's driver is compose.yaml's).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

from bench.browser import free_port
from tests import postgres

from .conftest import ARTIFACTS, ROOT, app_errors, stop, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # about a minute: -m 'not slow' leaves it out
yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (pip install -e '.[dev]', with mkdocs)")
distributed = pytest.importorskip("distributed", reason="Dask is not installed (pip install -e '.[cluster]')")

LOGS = ARTIFACTS / "compose-recipe"
TEST_SECRETS = {"POSTGRES_PASSWORD": "recipe0test0password", "DPCI_SECRET": "recipe-test-secret"}  # the .env
DONE = re.compile(r"Variability interval \(done\)")
REPLICATES = 2_000  # of the Explorer's bootstrap (10,000 by default): ~30 chunks, a few seconds on two workers


def image_env(dockerfile: Path) -> tuple[dict[str, str], str]:
    """The image's ``ENV`` variables and its ``WORKDIR`` (the forms the Dockerfile uses: ``ENV K=V ...``)."""
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    env, workdir = {}, "/"
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "ENV":
            env.update(word.split("=", 1) for word in words[1:])
        elif words and words[0] == "WORKDIR":
            workdir = words[1]
    return env, workdir


def interpolate(value: str, variables: dict[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:?message}`` and ``${VAR:-default}``, from ``variables`` (the .env file)."""

    def one(match):
        name, op, arg = match.group(1), match.group(2), match.group(3)
        if variables.get(name):
            return variables[name]
        if op == ":-":
            return arg
        raise AssertionError(f"compose.yaml needs {name}: {arg or 'unset'}")

    return re.sub(r"\$\{(\w+)(?:(:[-?])([^}]*))?\}", one, value)


class Localise:
    """Container addresses and folders to this machine's: a service's name as a host (``scheduler:8786``)
    and 0.0.0.0 to 127.0.0.1, each listening port to a free one (the same port everywhere it appears),
    container folders to local ones."""

    def __init__(self, services, folders: dict[str, Path]):
        names = "|".join(map(re.escape, services))  # a service's name as a host: before ":port"
        self.hosts = re.compile(rf"(?<![\w.-])(?:(?:{names})(?=:\d)|0\.0\.0\.0(?![\w.-]))")
        self.ports: dict[str, str] = {}
        self.folders = folders

    def port(self, container_port: str) -> str:
        return self.ports.setdefault(container_port, str(free_port()))

    def __call__(self, text: str) -> str:
        text = self.hosts.sub("127.0.0.1", text)
        text = re.sub(r"(?<=[:= ])(\d{4,5})(?!\d)", lambda m: self.port(m.group(1)), text)
        for inside, outside in self.folders.items():
            text = re.sub(rf"(?<![\w/]){re.escape(inside)}(?=/|$)", str(outside), text)
        return text


@pytest.fixture(scope="module")
def database_url(tmp_path_factory):
    """The ledger's database: a throw-away PostgreSQL server when one can run here, else an SQLite file."""
    why = postgres.unavailable()
    if why is not None:
        print(f"\nno PostgreSQL ({why}): the ledger on SQLite")
        yield f"sqlite:///{tmp_path_factory.mktemp('ledger') / 'ledger.sqlite3'}"
        return
    with postgres.throwaway_server() as new_database:
        yield new_database()


def _venv(folder: Path) -> Path:
    """A fresh virtual environment's python, without pip (so Debian's python3-venv is not needed), that
    sees the packages of the Python running the tests (installing the recipe's requirements afresh would
    download them: minutes, and no network in CI). What the test checks is that the services run from
    their commands and environment alone (no PYTHONPATH or working directory of the test's own), not
    which copy of numpy they import."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    inner = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    # an `import` line of a .pth file runs at start-up: addsitedir also reads the outer folders' .pth files
    lines = [f"import site; site.addsitedir({path!r})" for path in sorted(outer)]
    (Path(inner) / "outer_packages.pth").write_text("\n".join(lines) + "\n")
    return python


def _wait_http(url: str, proc, what: str, seconds: float = 60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        assert proc.poll() is None, f"{what} exited with {proc.returncode} (see {LOGS})"
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"{what} did not answer {url} within {seconds:.0f} s (see {LOGS})")


def _ledger_releases(url: str) -> int:
    import sqlalchemy as sa

    from dpci.ledger.schema import releases

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(releases)).scalar_one()
    finally:
        engine.dispose()


def test_the_compose_services_serve_a_variability_interval(tmp_path, database_url, browser):
    began = time.perf_counter()
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    env_image, workdir = image_env(ROOT / "Dockerfile")
    data = tmp_path / "data"
    data.mkdir()
    folders = {workdir: ROOT, "/data": data}  # the image's code; the app's volume appdata:/data
    assert any(v.endswith(":/data") for v in services["app"]["volumes"])
    local = Localise(services, folders)
    python = _venv(tmp_path / "venv")
    LOGS.mkdir(parents=True, exist_ok=True)

    def environment(name: str) -> dict[str, str]:
        env = {"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
        env.update({k: local(v) for k, v in env_image.items()})
        for key, value in (services[name].get("environment") or {}).items():
            env[key] = local(interpolate(str(value), TEST_SECRETS))
        return env

    def start(name: str, replica: int = 0, env: dict[str, str] | None = None) -> subprocess.Popen:
        """The service's command, ``X args`` run as ``python -m X args``, in the image's WORKDIR."""
        program, *args = shlex.split(local(services[name]["command"]))
        log = open(LOGS / f"{name}{replica or ''}.log", "w")  # noqa: SIM115 - open for the process's life
        return subprocess.Popen(
            [str(python), "-m", program, *args],
            cwd=ROOT,
            env=env or environment(name),
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    procs: list[subprocess.Popen] = []
    client = None
    try:
        procs.append(scheduler := start("scheduler"))
        health = services["scheduler"]["healthcheck"]["test"][-1]  # the compose file's own check
        _wait_http(re.search(r"http://[^'\"]+", local(health)).group(0), scheduler, "the scheduler")
        procs += [start("worker", i + 1) for i in range(services["worker"]["deploy"]["replicas"])]

        app_env = environment("app")
        compose_url = app_env["DPCI_DATABASE_URL"]
        assert compose_url.startswith("postgresql+psycopg://"), compose_url
        if database_url.startswith("postgresql"):
            assert database_url.split("://")[0] == compose_url.split("://")[0]  # the same driver
        app_env["DPCI_DATABASE_URL"] = database_url  # the db service: the throw-away server
        procs.append(app := start("app", env=app_env))
        port = local.port("8501")
        url = f"http://127.0.0.1:{port}"
        address = app_env["DPCI_SCHEDULER"]
        client = distributed.Client(address, timeout=30, set_as_default=False)
        client.wait_for_workers(services["worker"]["deploy"]["replicas"], timeout=60)
        workers = client.scheduler_info()["workers"].values()
        assert all(w["nthreads"] == 1 for w in workers)
        _wait_http(f"{url}/_stcore/health", app, "the app")
        started = time.perf_counter() - began
        opened = time.perf_counter()

        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(90_000)
        try:
            page.goto(f"{url}/?vi_replicates={REPLICATES}")
            page.wait_for_selector(".js-plotly-plot")
            page.get_by_text(DONE).first.wait_for(timeout=90_000)
            done = time.perf_counter() - opened
            wait_for_app(page)
            page.screenshot(path=str(LOGS / "explorer.png"), full_page=True)
        finally:
            context.close()

        def ran_chunks(dask_scheduler) -> int:  # on the scheduler (nested: sent by value, not by module)
            """The bootstrap chunks the workers finished (joblib's tasks, batch_of_...)."""
            prefixes = dask_scheduler.task_prefixes.items()
            return sum(p.state_counts["memory"] for name, p in prefixes if name.startswith("batch_of_"))

        chunks = client.run_on_scheduler(ran_chunks)
        print(
            f"\nservices up in {started:.1f} s; the interval done {done:.1f} s after the page was opened; "
            f"{chunks} chunks on the scheduler's workers; ledger: {database_url.split(':')[0]}"
        )
        assert chunks > 0, "the app's bootstrap did not run on the scheduler"
        assert _ledger_releases(database_url) >= 1  # the Explorer's release, on the recipe's ledger
        app_log = app_errors((LOGS / "app.log").read_text())
        assert "Traceback" not in app_log, app_log[-3000:]
    finally:
        if client is not None:
            client.close()
        for proc in reversed(procs):  # the app, the workers, then the scheduler, as compose stops them
            stop(proc)
