"""Resident memory of a process tree (psutil), for benchmarks and tests that bound the memory of
a server or of the bootstrap's workers."""

from __future__ import annotations

import psutil


def tree_rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` and all its descendants, in MB (0 if it has gone)."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for proc in procs:
        try:
            total += proc.memory_info().rss
        except psutil.Error:  # ended while we looked
            continue
    return total / 2**20
