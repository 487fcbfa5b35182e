"""Confinement of a locally launched Chromium: its own network namespace and a memory cgroup.

Why a network namespace: WebRTC (STUN/TURN over UDP), speculative prefetch/prerender and preconnects are
made by the browser itself, below the per-request filter of PageSession and beside the page's CSP. Only
the kernel stops them for sure: the browser runs in a namespace that has nothing but its own loopback, so
no packet reaches the host's services or leaves the machine. The artifact server of the session listens
inside that namespace (LocalSandbox.serve binds its socket there). Each BrowserPool has its own namespace; the
visits that share its browser (BrowserPools) have their artifact servers there, each on its own port: a page's own
requests to another's are refused by PageSession's request filter, and what the browser sends below that filter
(speculative prefetch, preconnect) is a GET, which no artifact server answers with more than files and tool lists.

Why a memory cgroup: the browser's memory is capped (as the docker sandbox caps its browser container);
the kernel's OOM killer then ends the renderer over the cap (Chromium gives renderers the highest OOM
score), that page crashes and its slot is a runtime_error, and the browser goes on with the next one.

Why a cpu cgroup: a page that starts hundreds of busy web workers would otherwise take every core, and every
other slot's browser, build and the runner itself with them (measured: a load average of 209 on 2 cores). Each
browser gets a CFS quota of `cpus` cores (BrowserSettings.cpus), as the docker sandbox's browser container does.
Inside that quota each renderer has a CPU group of its own (runner/browser/renderer_groups.py): the pages that share
the browser share its cores page by page, not thread by thread, so such a page cannot starve its neighbours' loads.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from runner.browser.launcher import write_launcher
from runner.browser.renderer_groups import RendererGroups
from runner.sandbox.limits import CgroupSet, ResourceLimits, create_cgroups
from runner.sandbox.scratch import scratch_dir

CLONE_NEWNET = 0x40000000
_HOLDER_START_TIMEOUT_S = 10.0


class ConfinementError(RuntimeError):
    """The browser's namespace or cgroup could not be set up (infra, not an artifact's fault)."""


def _setns(path: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


def socket_in_namespace(netns: str, family: int = socket.AF_INET, kind: int = socket.SOCK_STREAM) -> socket.socket:
    """A new socket that lives in the network namespace at `netns` (e.g. /proc/PID/ns/net).

    setns changes the namespace of the calling thread only, so a short-lived thread enters it, makes the
    socket and ends; the socket stays in that namespace wherever it is used from.
    """
    made: list[socket.socket] = []
    failed: list[BaseException] = []

    def enter_and_make() -> None:
        try:
            _setns(netns)
            made.append(socket.socket(family, kind))
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=enter_and_make, name="genui-netns", daemon=True)
    worker.start()
    worker.join()
    if failed:
        raise ConfinementError(f"could not open a socket in {netns}: {failed[0]}") from failed[0]
    return made[0]


class BrowserConfinement:
    """A network namespace held open by a sleeping bubblewrap child, a memory cgroup, and a wrapper
    executable that starts Chromium inside both. Create with `start()`; `close()` removes it all."""

    def __init__(self, *, memory_mb: int, max_processes: int = 2048, cpus: float | None = None,
                 bwrap: str = "bwrap", renderer_groups: bool = True) -> None:
        self.memory_mb = memory_mb
        self.cpus = cpus
        self.renderer_groups = renderer_groups
        self.groups: RendererGroups | None = None  # each renderer's CPU group, within the cpu cgroup
        self.max_processes = max_processes
        self.bwrap = bwrap
        self.netns: str = ""  # /proc/PID/ns/net of the holder
        self.cgroups: CgroupSet | None = None
        self._holder: subprocess.Popen[bytes] | None = None
        self._scratch: Path | None = None

    def start(self) -> None:
        bwrap = shutil.which(self.bwrap)
        if bwrap is None:
            raise ConfinementError(f"bubblewrap executable {self.bwrap!r} not found (needed to confine the browser)")
        # First in a user namespace of its own: there the holder has the capabilities to bring `lo` up even
        # where the runner lacks CAP_NET_ADMIN (a container with Docker's default capabilities), and the
        # sleeping holder has no real privileges. Without one where user namespaces are not allowed.
        failures: list[str] = []
        for own_user_namespace in (True, False):
            try:
                self._start_holder(bwrap, own_user_namespace)
                self._wait_for_loopback()
                break
            except ConfinementError as exc:
                failures.append(f"{'with' if own_user_namespace else 'without'} a user namespace: {exc}")
                self.close()
        else:
            raise ConfinementError("could not create the browser's network namespace: " + "; ".join(failures))
        limits = ResourceLimits(memory_mb=self.memory_mb, max_processes=self.max_processes, cpus=self.cpus)
        self.cgroups = create_cgroups(limits, "browser")
        if self.renderer_groups and self.cgroups.cpu is not None:
            self.groups = RendererGroups(self.cgroups.cpu)
            self.groups.start()

    def _start_holder(self, bwrap: str, own_user_namespace: bool) -> None:
        read_info, write_info = os.pipe()
        try:
            # --unshare-net: a namespace with only loopback (bubblewrap brings `lo` up). The child just sleeps;
            # its namespace is where the browser and the artifact servers meet.
            self._holder = subprocess.Popen(
                [bwrap, *(["--unshare-user"] if own_user_namespace else []), "--unshare-net", "--die-with-parent",
                 "--ro-bind", "/", "/", "--info-fd", str(write_info), "--", "/bin/sleep", "infinity"],
                pass_fds=(write_info,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"}, start_new_session=True,
            )
            os.close(write_info)
            write_info = -1
            with os.fdopen(read_info, "rb") as info:
                read_info = -1
                data = info.read(4096)  # bubblewrap closes the fd once the child runs
            child_pid = int(json.loads(data)["child-pid"])
        except (OSError, ValueError, KeyError) as exc:
            raise ConfinementError(f"{exc} {self._holder_stderr()}".strip()) from exc
        finally:
            for fd in (read_info, write_info):
                if fd >= 0:
                    os.close(fd)
        self.netns = f"/proc/{child_pid}/ns/net"

    def _holder_stderr(self) -> str:
        """What bubblewrap said, once it has exited (reading a live holder's pipe would block)."""
        holder = self._holder
        if holder is None or holder.stderr is None:
            return ""
        with contextlib.suppress(subprocess.TimeoutExpired):
            holder.wait(2)
        if holder.returncode is None:
            return ""
        return holder.stderr.read().decode(errors="replace").strip()

    def _wait_for_loopback(self) -> None:
        """bubblewrap reports the child before it has brought `lo` up; wait until 127.0.0.1 is routable."""
        deadline = time.monotonic() + _HOLDER_START_TIMEOUT_S
        while True:
            if self._holder is not None and self._holder.poll() is not None:
                # bubblewrap gave up after reporting its child (e.g. "loopback: Failed RTM_NEWADDR").
                raise ConfinementError(f"bubblewrap exited with {self._holder.returncode}: {self._holder_stderr()}")
            try:
                with socket_in_namespace(self.netns, socket.AF_INET, socket.SOCK_DGRAM) as probe:
                    probe.connect(("127.0.0.1", 9))  # UDP connect only routes: ENETUNREACH while lo is down
                return
            except (OSError, ConfinementError) as exc:
                if time.monotonic() > deadline:
                    raise ConfinementError(f"the browser's network namespace has no loopback: {exc}") from exc
                time.sleep(0.01)

    def wrapper(self, chromium: str) -> str:
        """An executable that joins the cgroups and the namespace, then execs `chromium` with its arguments
        (feature switches merged: runner/browser/launcher.py)."""
        if not self.netns:
            raise ConfinementError("confinement not started")
        self._scratch = self._scratch or scratch_dir("browser")
        nsenter = shutil.which("nsenter")
        if nsenter is None:
            raise ConfinementError("nsenter (util-linux) is not installed (needed to confine the browser)")
        joins = "".join(f'echo $$ > "{p}" || exit 125\n' for p in (self.cgroups.procs_files if self.cgroups else []))
        return write_launcher(self._scratch / "chromium", chromium, preamble=joins,
                              exec_prefix=[nsenter, f"--net={self.netns}", "--"])

    def alive(self) -> bool:
        """Whether a browser still runs in the cgroup (False once the kernel killed it whole)."""
        return self.cgroups is None or self.cgroups.memory is None or bool(self.cgroups.pids_in())

    def oom_killed(self) -> bool:
        return self.cgroups.oom_killed() if self.cgroups else False

    def close(self) -> None:
        if self._holder is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._holder.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._holder.wait(5)
            if self._holder.stderr:
                self._holder.stderr.close()
            self._holder = None
        if self.netns:
            # The namespace belongs to bubblewrap's inner child, which dies after the holder (die-with-parent), a
            # moment later on a loaded machine: kill it too and wait until it is gone, so the namespace is.
            child = Path(self.netns).parent.parent
            with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                os.kill(int(child.name), signal.SIGKILL)
            deadline = time.monotonic() + 5
            while child.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        if self.groups is not None:  # its children first: a cgroup with children cannot be removed
            self.groups.stop()
            self.groups = None
        if self.cgroups is not None:
            self.cgroups.cleanup()
            self.cgroups = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        self.netns = ""
