"""The runner's scratch folders in the system's temporary folder, and the sweep of those a killed run left behind.

A run removes its scratch folders (a spare build's workspace, an artifact server's, a browser's launcher, an
agent's home, ...) as it ends; a run that was killed (SIGKILL, the OOM killer, a lost node) cannot. Each folder's
name carries its owner: `genui-<kind>-<namespace>.<pid>.<start>-<random>`, where <namespace> is the owner's pid
namespace and <start> its start time (clock ticks after boot, /proc/<pid>/stat field 22), so a pid reused by a later
process is not taken for the owner. `sweep_stale_scratch` removes the folders whose owner has ended. A folder of a
process that still runs is never touched, however old, nor one made in another pid namespace (another container
sharing the folder), where this process cannot tell whether its owner runs.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

_OWNED = re.compile(r"^genui-[a-z]+(?:-[a-z]+)*-(\d+)\.(\d+)\.(\d+)-")


def _start_time(pid: int | str) -> int | None:
    """The process's start time in clock ticks after boot; None when it does not run (or /proc cannot say)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces and parentheses: count after the last one.
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[19])  # field 22 of the line, the 20th after the name


def _pid_namespace() -> int | None:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None


def owner_tag() -> str | None:
    """`<namespace>.<pid>.<start>` of this process; None where /proc does not tell."""
    namespace, start = _pid_namespace(), _start_time("self")
    if namespace is None or start is None:
        return None
    return f"{namespace}.{os.getpid()}.{start}"


def scratch_dir(kind: str) -> Path:
    """A new folder (mode 0700) in the system's temporary folder, named for `kind` (lowercase words joined by
    hyphens) and this process, for the sweep. Where /proc cannot name the owner, the name carries none and no
    sweep removes the folder."""
    if not re.fullmatch(r"[a-z]+(?:-[a-z]+)*", kind):
        raise ValueError(f"scratch folder kind {kind!r}: lowercase words joined by hyphens")
    tag = owner_tag()
    return Path(tempfile.mkdtemp(prefix=f"genui-{kind}-{tag}-" if tag else f"genui-{kind}-"))


def sweep_stale_scratch(root: Path | None = None) -> int:
    """Remove the scratch folders in `root` (default: the system's temporary folder) whose owner process has ended;
    returns how many went. Folders without an owner in their name, of another pid namespace, or of a process that
    still runs stay."""
    namespace = _pid_namespace()
    if namespace is None:
        return 0
    folder = Path(root or tempfile.gettempdir())
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        owned = _OWNED.match(entry.name)
        if owned is None or int(owned[1]) != namespace:
            continue
        if _start_time(owned[2]) == int(owned[3]):
            continue  # its owner still runs
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        if not os.path.lexists(entry.path):
            removed += 1
    if removed:
        log.info("removed %d scratch folder(s) left in %s by runs that were killed", removed, folder)
    return removed
