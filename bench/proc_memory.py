"""Resident memory of a process and of everything below it, read from /proc (the benches' peak-RSS figures)."""

from __future__ import annotations

import os
from pathlib import Path


def _processes() -> tuple[dict[int, int], dict[int, int]]:
    """(pid -> parent pid, pid -> RSS bytes) of every process."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            parents[int(entry.name)] = int(fields[1])
            rss[int(entry.name)] = int(fields[21]) * page
        except (OSError, IndexError, ValueError):
            continue  # the process ended while it was read
    return parents, rss


def process_tree_rss(root: int) -> tuple[int, int]:
    """(RSS of `root`, RSS of all its descendants), in bytes."""
    parents, rss = _processes()
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    below, stack, seen = 0, list(children.get(root, [])), {root}
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        below += rss.get(pid, 0)
        stack += children.get(pid, [])
    return rss.get(root, 0), below
