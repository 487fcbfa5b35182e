"""Resident memory of a process and of everything below it, read from /proc (the benches' peak-RSS figures), and
its proportional share (PSS: each shared page divided among the processes that map it); the process table and a
process's descendants those figures sum over (bench/browser_build.py sums CPU over them too)."""

from __future__ import annotations

import os
from pathlib import Path


def process_table() -> tuple[dict[int, int], dict[int, int]]:
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


def descendants(root: int, parents: dict[int, int]) -> list[int]:
    """Every process below `root` in `parents` (pid -> parent pid), children first."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found, stack, seen = [], list(children.get(root, [])), {root}
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        found.append(pid)
        stack += children.get(pid, [])
    return found


def process_tree_rss(root: int) -> tuple[int, int]:
    """(RSS of `root`, RSS of all its descendants), in bytes."""
    parents, rss = process_table()
    return rss.get(root, 0), sum(rss.get(pid, 0) for pid in descendants(root, parents))


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass  # ended while it was read, or not ours to read
    return 0


def process_tree_pss(root: int) -> int:
    """PSS of all of `root`'s descendants, in bytes."""
    parents, _ = process_table()
    return sum(_pss(pid) for pid in descendants(root, parents))
