"""Process-tree memory (used to bound the app server's and the workers' memory)."""

import os
import subprocess
import sys

import numpy as np
import pytest

from dpci.memory import tree_rss_mb

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")


def test_a_child_process_memory_counts_in_its_parent_tree():
    alone = tree_rss_mb(os.getpid())
    block = np.ones(50_000_000 // 8)  # 50 MB touched in this process
    assert tree_rss_mb(os.getpid()) > alone + 40
    child = subprocess.Popen([sys.executable, "-c", "import numpy as np, time; a = np.ones(80_000_000 // 8); "
                              "print(flush=True); time.sleep(30)"], stdout=subprocess.PIPE)
    try:
        child.stdout.readline()  # the child holds its 80 MB now
        assert tree_rss_mb(os.getpid()) > tree_rss_mb(child.pid) + alone + 40 > alone + 120
    finally:
        child.kill()
    del block
