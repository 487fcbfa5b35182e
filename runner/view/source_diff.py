"""A turn's source files against the previous turn's: which files were added, removed or changed, and a
unified diff of each changed file as typed lines (added, removed, context, hunk header) with line numbers,
so the page can colour them without parsing diff text itself."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_CHARS = 400_000  # a file past this is listed, not diffed (a bundled blob is not worth reading line by line)
MAX_DIFF_LINES = 4_000  # lines of one file's diff shown; the rest is counted
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass
class DiffLine:
    kind: str  # "add", "del", "ctx" or "hunk"
    text: str
    old: int | None = None  # line number in the previous turn's file
    new: int | None = None  # line number in this turn's file


@dataclass
class FileDiff:
    name: str
    status: str  # "added", "removed", "changed" or "unchanged"
    text: str = ""  # this turn's full file ("" when removed)
    lines: list[DiffLine] = field(default_factory=list)
    added: int = 0
    removed: int = 0
    lines_cut: int = 0  # diff lines not shown (MAX_DIFF_LINES)
    too_large: bool = False


def read_tree(root: Path | None) -> dict[str, str] | None:
    """The text files under `root` by relative POSIX path; None when there is no such folder. Symlinks are
    skipped (a src/ only ever holds regular files the sandbox accepted)."""
    if root is None or not root.is_dir():
        return None
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            try:
                files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
    return files


def diff_text(old: str, new: str, *, context: int = 3) -> tuple[list[DiffLine], int, int, int]:
    """The unified diff of two texts as typed lines; also the counts of added and removed lines, and how many
    diff lines were left out past MAX_DIFF_LINES."""
    lines: list[DiffLine] = []
    added = removed = cut = 0
    old_no = new_no = 0
    raw = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=context)
    for line in raw:
        if line.startswith(("---", "+++")) and not lines:
            continue  # the two file headers come first; the names are the page's
        if line.startswith("@@"):
            match = _HUNK.match(line)
            if match:
                old_no, new_no = int(match.group(1)), int(match.group(2))
            item = DiffLine("hunk", line)
        elif line.startswith("+"):
            item = DiffLine("add", line[1:], None, new_no)
            new_no += 1
            added += 1
        elif line.startswith("-"):
            item = DiffLine("del", line[1:], old_no, None)
            old_no += 1
            removed += 1
        else:
            item = DiffLine("ctx", line[1:], old_no, new_no)
            old_no += 1
            new_no += 1
        if len(lines) < MAX_DIFF_LINES:
            lines.append(item)
        else:
            cut += 1
    return lines, added, removed, cut


def diff_trees(old: dict[str, str], new: dict[str, str], *, context: int = 3) -> list[FileDiff]:
    """Every file of either tree, by name: added, removed, changed (with its diff) or unchanged."""
    out: list[FileDiff] = []
    for name in sorted(set(old) | set(new)):
        if name not in old:
            status = "added"
        elif name not in new:
            status = "removed"
        else:
            status = "changed" if old[name] != new[name] else "unchanged"
        before, after = old.get(name, ""), new.get(name, "")
        item = FileDiff(name, status, text=after)
        if status != "unchanged":
            if max(len(before), len(after)) > MAX_FILE_CHARS:
                item.too_large = True
            else:
                item.lines, item.added, item.removed, item.lines_cut = diff_text(before, after, context=context)
        out.append(item)
    return out
