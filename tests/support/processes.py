"""The Chromium processes a test started (descendants of one pid), to kill them as a crash would."""

from __future__ import annotations

from pathlib import Path


def _ppid_and_name(pid: int) -> tuple[int, str]:
    stat = Path(f"/proc/{pid}/stat").read_text()
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    return int(stat.rsplit(")", 1)[1].split()[1]), name


def browser_pids(root: int) -> list[int]:
    """Main Chromium processes descended from `root` (never anyone else's): a chrom* process whose parent
    is not one (its renderers and helpers are its children)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                table[int(entry.name)] = _ppid_and_name(int(entry.name))
            except (OSError, ValueError):
                continue
    ours = {root}
    changed = True
    while changed:  # transitive closure of children, bounded by the process table size
        changed = False
        for pid, (ppid, _) in table.items():
            if ppid in ours and pid not in ours:
                ours.add(pid)
                changed = True
    return [
        pid
        for pid in ours
        if pid in table and "chrom" in table[pid][1] and "chrom" not in table.get(table[pid][0], (0, ""))[1]
    ]
