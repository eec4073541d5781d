"""Resident memory of a process tree (Linux /proc), for benchmarks and tests that bound the
memory of a server or of joblib workers; no UI code and no dependency."""

from __future__ import annotations


def tree_rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` and all its descendants, in MB (0 where /proc is absent)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
            with open(f"/proc/{p}/task/{p}/children") as f:
                stack += [int(c) for c in f.read().split()]
        except (OSError, StopIteration):
            continue
    return total / 1024
