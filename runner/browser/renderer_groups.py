"""Each renderer of a browser in a CPU group of its own, so the pages sharing the browser share its CPU.

A confined local browser's cpu cgroup caps the whole browser at `BrowserSettings.cpus` cores
(runner/browser/confine.py), as a docker browser container's cgroup caps it at `browser_cpus`. Inside one cgroup
the kernel's scheduler shares that cap between threads, not pages: a page that starts 500 busy web workers holds
500 threads against a neighbour page's few, and the neighbour's load, for which the browser's own processes need
time too, waits for seconds; on a loaded machine it passes the navigation timeout, and the innocent page is
recorded as a runtime_error (bench/neighbour_load.py, 2-core machine: a page's load took 9 s a median beside such
a page, some past the timeout, against 0.22 s alone). With each renderer process in a child cgroup of its own the
scheduler shares the cap between the children first: however many threads a page starts, its renderer weighs as
much as another page's, and the browser's own processes stay in the parent beside them (the same load: 0.36 s).

Chromium never shares a renderer process between browser contexts, and each session has its own context, so a
renderer is one session's page (or a window it opened). Renderers are forked by the browser's zygote inside the
parent cgroup; a watcher thread moves each new one into its child (a write of its pid to `cgroup.procs` moves
all its threads, and threads it starts later stay with it). A child goes once its renderer has exited.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from pathlib import Path

from runner.sandbox.limits import CGROUP_ROOT

log = logging.getLogger(__name__)

TYPE_SWITCH = re.compile(rb"(?:^|[\s\0])--type=([\w-]+)")
# How often the parent cgroup is read for new renderers: a page's threads run in the shared group at most this
# long after its renderer starts. A sweep took 0.27 ms of CPU with two pages (2-core machine, loaded): 0.3% of
# a core per browser at this rate.
POLL_S = 0.1


def process_type(pid: int, proc: Path = Path("/proc")) -> str | None:
    """The Chromium process type of `pid` (its --type=, "" for the browser process), or None once it has exited."""
    try:
        # Chromium rewrites its command line as one string (spaces, not NULs, between the switches).
        found = TYPE_SWITCH.search((proc / str(pid) / "cmdline").read_bytes())
    except OSError:
        return None
    return found.group(1).decode() if found else ""


def cpu_cgroup_of(pid: int, *, proc: Path = Path("/proc"), root: Path = CGROUP_ROOT) -> Path | None:
    """The cgroup v1 cpu directory `pid` runs in, as this machine mounts it; None where there is none to read."""
    try:
        lines = (proc / str(pid) / "cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            for mount in (root / "cpu", root / "cpu,cpuacct"):
                directory = mount / path.lstrip("/")
                if directory.is_dir():
                    return directory
    return None


class RendererGroups:
    """A thread that keeps every renderer in `cpu_cgroup` (a cgroup v1 cpu directory) in a child of its own,
    named `renderer-<pid>`. `start()` once the cgroup exists; `stop()` removes the children (the parent's owner
    removes the parent afterwards)."""

    def __init__(self, cpu_cgroup: Path, *, poll_s: float = POLL_S, proc: Path = Path("/proc")) -> None:
        self.cpu_cgroup = cpu_cgroup
        self.poll_s = poll_s
        self.proc = proc
        self.moved = 0  # renderers moved so far
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._not_renderers: set[int] = set()  # pids read once and left in the parent (the browser's own)
        self._warned = False

    def start(self) -> None:
        self._thread = threading.Thread(target=self._watch, name="genui-renderer-groups", daemon=True)
        self._thread.start()

    def group_of(self, pid: int) -> Path:
        return self.cpu_cgroup / f"renderer-{pid}"

    def sweep(self) -> None:
        """One pass: move new renderers into their own children, remove the children whose renderer exited."""
        try:
            pids = [int(x) for x in (self.cpu_cgroup / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return  # the cgroup is being removed
        for pid in pids:
            if pid in self._not_renderers:
                continue
            kind = process_type(pid, self.proc)
            if kind == "renderer":
                self._move(pid)
            elif kind not in (None, "zygote"):
                # The zygote's fresh child reads as a zygote until it renames itself: read again next time.
                self._not_renderers.add(pid)
        self._not_renderers.intersection_update(pids)  # a pid reused later is read again
        self._remove_empty()

    def _move(self, pid: int) -> None:
        group = self.group_of(pid)
        try:
            group.mkdir(exist_ok=True)
            (group / "cgroup.procs").write_text(str(pid))
            self.moved += 1
        except ProcessLookupError:  # exited between the read and the move
            with contextlib.suppress(OSError):
                group.rmdir()
        except OSError as error:
            # The page then shares the browser's group as before: fair shares are lost, the cap is not.
            self._not_renderers.add(pid)
            if not self._warned:
                self._warned = True
                log.warning("could not give renderer %s a CPU group of its own in %s: %s", pid, self.cpu_cgroup, error)

    def _remove_empty(self) -> None:
        for child in self._children():
            with contextlib.suppress(OSError):  # EBUSY while its renderer still runs
                if not (child / "cgroup.procs").read_text().strip():
                    child.rmdir()

    def _children(self) -> list[Path]:
        try:
            return [p for p in self.cpu_cgroup.iterdir() if p.is_dir() and p.name.startswith("renderer-")]
        except OSError:
            return []

    def _watch(self) -> None:
        while not self._stopping.wait(self.poll_s):
            try:
                self.sweep()
            except Exception:  # never the browser's end: its pages then share one group, capped all the same
                log.exception("the renderer CPU groups of %s stopped being kept", self.cpu_cgroup)
                return

    def stop(self) -> None:
        """Stop watching and remove every child; a renderer still running is moved back to the parent first."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        for child in self._children():
            with contextlib.suppress(OSError, ValueError):
                for pid in (child / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        (self.cpu_cgroup / "cgroup.procs").write_text(pid)
                child.rmdir()
