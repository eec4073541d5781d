"""CPU time of groups of processes (psutil), to say where a benchmark's wall-clock time goes: the
browser that draws a page, the Streamlit server and the bootstrap's worker processes under it."""

from __future__ import annotations

import os

import psutil

from bench.memory import process_tree


def seconds(procs) -> float:
    """User + system CPU seconds of the live processes among ``procs`` (their own, not their children's)."""
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.Error:  # ended while we looked
            continue
        total += times.user + times.system
    return total


def _is_browser(proc: psutil.Process) -> bool:
    try:
        return "chrom" in proc.name().lower()
    except psutil.Error:
        return False


def usage(server_pid: int) -> dict[str, float]:
    """CPU seconds used so far by "browser" (the Chromium processes this process started, through
    Playwright), "server" (the Streamlit process ``server_pid``) and "workers" (its descendants: the
    bootstrap's worker processes). Take differences between two calls, while the processes measured
    are alive: a process that ends takes its time with it."""
    mine = process_tree(os.getpid())[1:]
    server = process_tree(server_pid)
    return {
        "browser": seconds(p for p in mine if _is_browser(p)),
        "server": seconds(server[:1]),
        "workers": seconds(server[1:]),
    }


def spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds of each group between two :func:`usage` calls."""
    return {k: after[k] - before[k] for k in before}
