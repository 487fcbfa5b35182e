"""What a build leaves in its workspace is kept as regular files and folders only.

The answer's build runs its own code (Tailwind's @config, a Vite plugin's output, `public/` copied verbatim), so it
can leave symbolic links in the workspace: to `/proc/self/environ`, `/etc/passwd`, `/`, or up into another
run's folder. Inside the sandbox they point into the sandbox's own view; on the host the same link names the
host's file, and a user's `cp -L` or `tar -h` of the run dir would copy it. FIFOs, sockets and device nodes are
no evidence either (a FIFO blocks whoever reads it). So once a build ends every such entry is removed, before
the output is served or kept, and the build log names what was removed. The artifact server refuses to follow a
link out of its root anyway; this keeps the run dir itself free of them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_LISTED = 20  # removed entries named in the build log; the rest are counted


def remove_links(folder: Path) -> list[str]:
    """Remove every symbolic link and every entry that is neither a regular file nor a folder under `folder`
    (never following a link); return "relative/path -> target" (links) or "relative/path (kind)" for each.
    A folder the build made unwritable is made writable first. OSError: an entry that could not be removed."""
    folder = Path(folder)
    removed: list[str] = []
    if folder.is_symlink() or not folder.is_dir():
        return removed
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            found = _entries(current)
        except PermissionError:  # the build took the read or search permission off its folder
            os.chmod(current, stat.S_IMODE(os.lstat(current).st_mode) | stat.S_IRWXU)
            found = _entries(current)
        for entry in found:
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                pending.append(Path(entry.path))
                continue
            if stat.S_ISREG(mode):
                continue
            relative = Path(entry.path).relative_to(folder).as_posix()
            removed.append(f"{relative} -> {os.readlink(entry.path)}" if stat.S_ISLNK(mode)
                           else f"{relative} ({_kind(mode)})")
            _unlink(Path(entry.path))
    return removed


def clean_workspace(workspace: Path, own_link: Path | None = None) -> list[str]:
    """remove_links over a build's workspace once the build ended. `own_link`: the target of the workspace's
    node_modules link the pipeline itself made for the build (prepare_workspace): removed too, not listed."""
    modules = Path(workspace) / "node_modules"
    if own_link is not None and modules.is_symlink() and os.readlink(modules) == str(own_link):
        modules.unlink()
    return remove_links(Path(workspace))


def describe_removed(removed: list[str]) -> str:
    """The build log's line about what remove_links took out ("" when nothing)."""
    if not removed:
        return ""
    shown = ", ".join(removed[:MAX_LISTED]) + (f", ... ({len(removed) - MAX_LISTED} more)"
                                               if len(removed) > MAX_LISTED else "")
    return (f"[sandbox] removed {len(removed)} links or special files the build left (evidence holds regular "
            f"files only): {shown}")


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as entries:
        return list(entries)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except PermissionError:  # the build took the write permission off its folder
        parent = path.parent
        os.chmod(parent, stat.S_IMODE(os.lstat(parent).st_mode) | stat.S_IRWXU)
        path.unlink()


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"
