"""Resident memory of a process tree (psutil), for benchmarks and tests that bound the memory of
a server or of the bootstrap's workers."""

from __future__ import annotations

import psutil


def process_tree(pid: int) -> list[psutil.Process]:
    """Process ``pid`` and all its descendants (empty if it has gone)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def tree_rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` and all its descendants, in MB (0 if it has gone)."""
    total = 0
    for proc in process_tree(pid):
        try:
            total += proc.memory_info().rss
        except psutil.Error:  # ended while we looked
            continue
    return total / 2**20
