"""Process-tree memory (used to bound the app server's and the workers' memory)."""

import subprocess
import sys

from bench.memory import tree_rss_mb

HOLD = "import numpy as np, sys, time; a = np.ones({mb} * 125_000); print({extra}, flush=True); time.sleep(60)"


def test_a_child_process_memory_counts_in_its_parent_tree():
    """An isolated tree: a parent holding 50 MB that starts a child holding 80 MB (this test
    process's own children, such as joblib workers, come and go, so they are left out)."""
    child_code = HOLD.format(mb=80, extra="0")
    parent_code = (
        f"import subprocess, sys; c = subprocess.Popen([sys.executable, '-c', {child_code!r}], "
        "stdout=subprocess.PIPE); c.stdout.readline(); " + HOLD.format(mb=50, extra="c.pid")
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    try:
        child_pid = int(parent.stdout.readline())  # both hold their memory now
        child, tree = tree_rss_mb(child_pid), tree_rss_mb(parent.pid)
        assert child > 80
        assert tree > child + 50
    finally:
        subprocess.run(["pkill", "-P", str(parent.pid)], check=False)
        parent.kill()
