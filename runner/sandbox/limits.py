"""Resource limits for untrusted processes: cgroup v1 memory + pids (+ cpu where asked), rlimits through prlimit.

Why these mechanisms:
- RLIMIT_NPROC is not enforced for root, so the process count goes through the pids cgroup.
- Node/V8 reserves large amounts of virtual memory, so RLIMIT_AS would break node; memory goes
  through the memory cgroup instead (falls back to no memory limit, with a warning, when the
  cgroup tree is not writable).
- cpu time, file size and open files are plain rlimits that survive exec and bubblewrap.
- a CPU share (cores, as a CFS quota of the cpu cgroup) where a long-lived process must not starve the others:
  the confined browser, where one page's busy workers would otherwise take every core of the machine.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

log = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PARENT = "genui-runner"


class ResourceLimits(BaseModel):
    cpu_seconds: int = Field(60, gt=0)
    memory_mb: int = Field(2048, gt=0)
    max_processes: int = Field(256, gt=0)  # pids cgroup; counts threads too
    max_output_mb: int = Field(64, gt=0)  # RLIMIT_FSIZE and a size check of the output folder
    wall_clock_s: float = Field(120, gt=0)
    nofile: int = Field(1024, gt=0)
    cpus: float | None = Field(None, gt=0)  # CFS quota in cores (cpu cgroup); None: not limited


def rlimit_prefix(limits: ResourceLimits) -> list[str]:
    """`prlimit ... --` applying cpu/fsize/nofile to the command that follows (and its children)."""
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        raise FileNotFoundError("prlimit (util-linux) is not installed")
    fsize = limits.max_output_mb * 1024 * 1024
    return [
        prlimit,
        f"--cpu={limits.cpu_seconds}",
        f"--fsize={fsize}",
        f"--nofile={limits.nofile}",
        "--core=0",
        "--",
    ]


@dataclass
class CgroupSet:
    """The memory and pids cgroups of one sandboxed run (either may be missing: fallback)."""

    name: str
    memory: Path | None = None
    pids: Path | None = None
    cpu: Path | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def procs_files(self) -> list[Path]:
        return [d / "cgroup.procs" for d in (self.memory, self.pids, self.cpu) if d is not None]

    def join_prefix(self) -> list[str]:
        """A shell prefix that moves itself into the cgroups, then execs the rest of the argv.

        Joining before exec means every descendant (bwrap, node, its workers) is accounted.
        """
        files = [str(p) for p in self.procs_files]
        if not files:
            return []
        script = 'for f in "$@"; do shift; [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; done; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *files, "--"]

    def oom_killed(self) -> bool:
        """Whether the kernel OOM killer fired inside this memory cgroup."""
        if self.memory is None:
            return False
        try:
            for line in (self.memory / "memory.oom_control").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
            return False
        except (OSError, ValueError):
            return False

    def max_memory_mb(self) -> float | None:
        if self.memory is None:
            return None
        try:
            return int((self.memory / "memory.max_usage_in_bytes").read_text()) / 2**20
        except (OSError, ValueError):
            return None

    def pids_in(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files:
            try:
                found.update(int(x) for x in procs.read_text().split())
            except (OSError, ValueError):
                pass
        return found

    def kill_all(self, timeout_s: float = 5.0) -> None:
        """SIGKILL everything still in the cgroups, until they are empty (bounded)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            pids = self.pids_in()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)
        log.warning("cgroup %s still has processes after %.1fs", self.name, timeout_s)

    def cleanup(self) -> None:
        self.kill_all()
        for directory in (self.memory, self.pids, self.cpu):
            if directory is None:
                continue
            for _ in range(50):  # rmdir fails with EBUSY until the last task is reaped
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
            else:
                log.warning("could not remove cgroup %s", directory)


def _make_cgroup(controller: str, name: str) -> Path:
    parent = CGROUP_ROOT / controller / CGROUP_PARENT
    parent.mkdir(exist_ok=True)
    directory = parent / name
    directory.mkdir()
    return directory


def sweep_stale_cgroups(*, min_age_s: float = 600.0, root: Path = CGROUP_ROOT) -> int:
    """Remove the empty cgroups a killed run left behind; returns how many went.

    Only cgroups with no process and older than `min_age_s` go: a fresh one may belong to a build that
    is just starting in another process.
    """
    removed = 0
    now = time.time()
    for controller in ("memory", "pids", "cpu"):
        parent = root / controller / CGROUP_PARENT
        if not parent.is_dir():
            continue
        for directory in parent.iterdir():
            try:
                if not directory.is_dir() or now - directory.stat().st_mtime < min_age_s:
                    continue
                for child in directory.iterdir():  # a browser's renderer groups (runner/browser/renderer_groups.py)
                    if child.is_dir() and not (child / "cgroup.procs").read_text().strip():
                        child.rmdir()
                if (directory / "cgroup.procs").read_text().strip():
                    continue
                directory.rmdir()
                removed += 1
            except OSError:  # busy, vanished or not ours to remove: leave it
                continue
    return removed


def create_cgroups(limits: ResourceLimits, label: str = "run") -> CgroupSet:
    """Memory and pids cgroups for one run; missing or unwritable controllers are skipped with a warning."""
    cgroups = CgroupSet(name=f"{label}-{uuid.uuid4().hex[:12]}")
    memory_bytes = limits.memory_mb * 1024 * 1024
    try:
        directory = _make_cgroup("memory", cgroups.name)
        cgroups.memory = directory
        (directory / "memory.limit_in_bytes").write_text(str(memory_bytes))
        swap = directory / "memory.memsw.limit_in_bytes"
        if swap.exists():  # memory+swap cap, so the hog cannot escape into swap
            swap.write_text(str(memory_bytes))
        (directory / "memory.swappiness").write_text("0")
    except OSError as exc:
        cgroups.warnings.append(f"memory cgroup unavailable ({exc}); memory is not limited")
    try:
        directory = _make_cgroup("pids", cgroups.name)
        cgroups.pids = directory
        (directory / "pids.max").write_text(str(limits.max_processes))
    except OSError as exc:
        cgroups.warnings.append(f"pids cgroup unavailable ({exc}); process count is not limited")
    if limits.cpus is not None:
        try:
            directory = _make_cgroup("cpu", cgroups.name)
            cgroups.cpu = directory
            period = int((directory / "cpu.cfs_period_us").read_text())
            (directory / "cpu.cfs_quota_us").write_text(str(max(1000, int(period * limits.cpus))))
        except (OSError, ValueError) as exc:
            cgroups.warnings.append(f"cpu cgroup unavailable ({exc}); CPU is not limited")
    for warning in cgroups.warnings:
        log.warning(warning)
    return cgroups


def limited_command(argv: list[str], limits: ResourceLimits, cgroups: CgroupSet) -> list[str]:
    """argv wrapped so it runs inside the cgroups with the rlimits applied."""
    return [*cgroups.join_prefix(), *rlimit_prefix(limits), *argv]


def folder_size_bytes(root: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total
