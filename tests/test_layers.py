"""The layers: the core library never imports the app's stack, and no module grows past what
one person holds in mind."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "module",
    ["dpci", "dpci.estimators", "dpci.experiments.sweeps", "dpci.experiments.cli", "dpci.data", "dpci.teaching"],
)
def test_the_core_never_imports_streamlit_or_plotly(module):
    code = f"import sys, {module}; bad = [m for m in ('streamlit', 'plotly') if m in sys.modules]; print(','.join(bad))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} imports {out.stdout.strip()}"


def test_no_module_is_over_500_lines():
    files = [*ROOT.glob("dpci/**/*.py"), *ROOT.glob("ui/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    long = {str(f.relative_to(ROOT)): n for f in files if (n := len(f.read_text().splitlines())) > 550}
    assert not long, f"split these modules: {long}"
