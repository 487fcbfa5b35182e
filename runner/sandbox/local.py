"""LocalSandbox: the sandbox pipeline over bubblewrap, with cgroup and rlimit limits (BubblewrapIsolation).

Inside the sandbox nothing of the host is visible but read-only system folders (/usr and the
/lib, /bin links), the pinned build Node (read-only, at /opt/node; runner/sandbox/build_node.py), the
template's node_modules (read-only, at /node_modules, which Node and Vite find by walking up from /app) and
the workspace (writable, at /app). There is no network: the artifact server gets its listening socket from
the parent as an inherited file descriptor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from runner.browser.confine import ConfinementError, socket_in_namespace
from runner.browser.launch import BrowserSettings
from runner.sandbox.build_node import ensure_build_node
from runner.sandbox.compile_cache import compile_cache_dir
from runner.sandbox.isolation import (
    IN_MODULES,
    BuildTools,
    Mount,
    PipelineRules,
    RunOutcome,
    SandboxSetupError,
)
from runner.sandbox.limits import CgroupSet, ResourceLimits, create_cgroups, limited_command, sweep_stale_cgroups
from runner.sandbox.pipeline import LogCap, PipelineSandbox
from runner.sandbox.scratch import scratch_dir
from runner.sandbox.web_template import (
    ALLOWED_PACKAGES,
    DEFAULT_CACHE_ROOT,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_TEMPLATE,
    ensure_template_modules,
)

log = logging.getLogger(__name__)

SANDBOX_PYTHON = "/opt/python"
SANDBOX_NODE = "/opt/node"


def _default_server_limits() -> ResourceLimits:
    # The server lives as long as a whole multi-turn session; it needs little memory but more cpu time.
    return ResourceLimits(cpu_seconds=3600, memory_mb=512, max_processes=64, max_output_mb=64, wall_clock_s=3600, nofile=1024)


class LocalSandboxSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt option fails validation instead of being ignored

    bwrap: str = "bwrap"
    # The Node that runs builds: None is the project's pinned one (runner/sandbox/build_node.py), else a command
    # on PATH or a path (e.g. "node" for the host's own).
    node: str | None = None
    python: str | None = None  # interpreter for the artifact server; None = the one running us
    limits: ResourceLimits = Field(default_factory=ResourceLimits)
    build_timeout_s: float | None = None  # None = limits.wall_clock_s
    server_limits: ResourceLimits = Field(default_factory=_default_server_limits)
    server_start_timeout_s: float = 10.0
    cache_root: Path | None = None  # None = <repo>/.cache
    max_files: int = DEFAULT_MAX_FILES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    allowed_packages: list[str] = Field(default_factory=lambda: list(ALLOWED_PACKAGES))
    max_log_bytes: int = 1024 * 1024
    mount_proc: bool = False  # a fresh /proc of the sandbox's own pid namespace (mountinfo names host paths)
    # Builds load Vite from a module compile cache warmed once per template install and Node, read-only
    # (runner/sandbox/compile_cache.py); false: every build compiles Vite afresh.
    compile_cache: bool = True
    # Test-only hook: run this argv inside the build sandbox (cwd /app) instead of `vite build`.
    build_command: list[str] | None = None
    # Keep the next build's sandbox started ahead, Vite loaded, waiting for its sources (pipeline.py): the same
    # sandbox, limits and command, one per build, started while the runner waits elsewhere.
    spare_build: bool = False
    # While it waits, the spare warms Vite's bundler with one small build of its own project in the sandbox's /tmp
    # (runner/sandbox/spare-build.mjs): the first build in a Node process pays for that once.
    spare_build_warm_up: bool = True
    # Keep the next artifact server for each browser started ahead, its imports done, waiting for its files
    # (runner/sandbox/spare_server.py): the same sandbox, limits and socket; a serve with a tool bridge starts cold.
    spare_server: bool = False


def _root_layout_args() -> list[str]:
    """Read-only system folders; merged-/usr links are recreated as links."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    if os.path.exists("/etc/ld.so.cache"):
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return args


# The environment bubblewrap itself (and the cgroup/prlimit shims before it) starts with. Inside the
# sandbox --clearenv gives the child a fresh one, but bubblewrap's own process stays visible to it (it is
# pid 1 of the sandbox's pid namespace), so the runner's environment, API keys included, never reaches it.
SCRUBBED_ENV: dict[str, str] = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def _common_args(*, mount_proc: bool = False) -> list[str]:
    # No /proc by default: a fresh procfs still shows bind-mount sources (host paths) in mountinfo, and
    # neither Node/Vite nor the artifact server needs it.
    proc = ["--proc", "/proc"] if mount_proc else []
    return [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        *_root_layout_args(),
        "--tmpfs",
        "/tmp",
        "--dev",
        "/dev",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/local/bin:/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "LANG",
        "C.UTF-8",
        *proc,
    ]


def _under(path: Path, root: str) -> bool:
    return path == Path(root) or Path(root) in path.parents


def _node_mounts(node: str) -> tuple[list[Mount], str]:
    """The mount for the node binary (none if it lives under /usr) and its path inside the sandbox."""
    found = shutil.which(node)
    if found is None:
        raise SandboxSetupError(f"node executable {node!r} not found")
    real = Path(found).resolve()
    if _under(real, "/usr"):
        return [], str(real)
    prefix = real.parent.parent  # e.g. ~/.nvm/versions/node/v20/bin/node -> .../v20
    return [Mount(prefix, SANDBOX_NODE)], f"{SANDBOX_NODE}/{real.relative_to(prefix)}"


def _mount_args(mounts: list[Mount]) -> list[str]:
    args: list[str] = []
    for mount in mounts:
        if not isinstance(mount.source, Path):
            raise SandboxSetupError(f"bubblewrap mounts folders, not engine volumes ({mount.source!r})")
        args += ["--bind" if mount.writable else "--ro-bind", str(mount.source), mount.target]
    return args


def _python_args(python: str | None) -> tuple[list[str], list[str]]:
    """Binds and argv prefix for a Python that can run server.py (stdlib + jsonschema)."""
    if python is not None:
        exe, base, paths = Path(python).resolve(), Path(python).resolve().parent.parent, []
    else:
        exe, base = Path(os.path.realpath(sys.executable)), Path(sys.base_prefix).resolve()
        paths = [Path(p) for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
    args: list[str] = []
    env: dict[str, str] = {}
    if _under(exe, "/usr"):
        inner_exe = str(exe)
    else:
        if not _under(exe, str(base)):
            base = exe.parent.parent
        args += ["--ro-bind", str(base), SANDBOX_PYTHON]
        inner_exe = f"{SANDBOX_PYTHON}/{exe.relative_to(base)}"
        env["LD_LIBRARY_PATH"] = f"{SANDBOX_PYTHON}/lib"
    inner_paths = []
    for index, path in enumerate(dict.fromkeys(p.resolve() for p in paths)):
        if _under(path, "/usr") or _under(path, str(base)):
            continue  # already visible through /usr or the relocated prefix
        inner = f"/opt/site/{index}"
        args += ["--ro-bind", str(path), inner]
        inner_paths.append(inner)
    if inner_paths:
        env["PYTHONPATH"] = ":".join(inner_paths)
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args, [inner_exe, "-B", "-s"]


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _new_cgroups(limits: ResourceLimits, label: str) -> CgroupSet:
    """create_cgroups off the event loop. A caller cancelled meanwhile (a spare build stopped while it starts)
    leaves none behind: the thread creates them whatever, so they are removed once it has."""
    creating = asyncio.ensure_future(asyncio.to_thread(create_cgroups, limits, label))
    try:
        return await asyncio.shield(creating)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await asyncio.to_thread((await creating).cleanup)
        raise


async def _stop_tree(proc: asyncio.subprocess.Process, cgroups: CgroupSet) -> None:
    """Kill the sandboxed processes innermost-first, then bubblewrap itself, then any stragglers.

    Killing the outer bwrap first would orphan its in-namespace child to the host's init
    (which here reaps lazily); killing the inside first lets bwrap reap it and exit by itself.
    """
    for pid in cgroups.pids_in() - {proc.pid}:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), 2)
    _kill_group(proc.pid)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), 5)
    await asyncio.to_thread(cgroups.kill_all)


async def _drain(stream: asyncio.StreamReader, sink: LogCap) -> None:
    while chunk := await stream.read(65536):
        sink.feed(chunk)


# A build started ahead waits at this niceness until its go line, so that starting it takes only CPU time the
# runner's current work leaves idle; its go line puts every thread of it back to 0, a cold build's.
SPARE_NICE = 19


def _nice_prefix(cgroups: CgroupSet) -> list[str]:
    """`nice -n SPARE_NICE` where the runner may take that back later (root, and cgroups that list the processes)."""
    nice = shutil.which("nice")
    if os.geteuid() != 0 or nice is None or not cgroups.procs_files:
        return []
    return [nice, "-n", str(SPARE_NICE)]


def _renice(cgroups: CgroupSet, value: int) -> None:
    """Every thread of every process in the cgroups to niceness `value` (each thread carries its own)."""
    for _ in range(2):  # a thread started meanwhile by one not yet reniced is caught by the second pass
        for pid in cgroups.pids_in():
            with contextlib.suppress(OSError):
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with contextlib.suppress(OSError, ValueError):
                        os.setpriority(os.PRIO_PROCESS, int(tid), value)


async def _send_go(proc: asyncio.subprocess.Process, cgroups: CgroupSet, *, niced: bool) -> None:
    """A process started ahead gets its go line: back to niceness 0 first (a cold one's), then the line."""
    if niced:
        await asyncio.to_thread(_renice, cgroups, 0)
    if proc.stdin is not None:
        with contextlib.suppress(OSError):  # it died meanwhile: its exit and log say why
            proc.stdin.write(b"go\n")
            await proc.stdin.drain()
        proc.stdin.close()


async def _stop_started(proc: asyncio.subprocess.Process, cgroups: CgroupSet) -> None:
    """Stop a started process, used or not, with everything it started, and remove its cgroups."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()  # end of input: one still waiting for its go line exits without doing anything
        await _stop_tree(proc, cgroups)
    finally:
        await asyncio.to_thread(cgroups.cleanup)


def _outcome(rc: int | None, timed_out: bool, timeout_s: float, output: str, notes: list[str],
             cgroups: CgroupSet) -> RunOutcome:
    oom = cgroups.oom_killed()
    peak = cgroups.max_memory_mb()
    if peak is not None:
        notes.append(f"[sandbox] exit={rc} peak_memory={peak:.0f}MB")
    if oom:
        notes.append("[sandbox] OOM: killed by the memory limit")
    failed: str | None = None
    if rc == 125 and not output.strip():
        failed = "[sandbox] could not join the cgroups"  # the cgroup shim's own exit code
    elif output.lstrip().startswith("bwrap:"):
        failed = ""  # bubblewrap failed to set the sandbox up
    return RunOutcome(rc, output, timed_out=timed_out, timeout_s=timeout_s, oom=oom, notes=notes,
                      isolation_failed=failed)


class _WaitingRun:
    """A confined command already started in its own cgroups (BubblewrapIsolation.run, start_waiting).

    One that waits (its stdin is a pipe) gets its go line from `finish`; its wall-clock limit starts then.
    `discard` stops one that is never used. Either way its processes and cgroups are gone afterwards."""

    def __init__(self, proc: asyncio.subprocess.Process, cgroups: CgroupSet, sink: LogCap,
                 drain: asyncio.Task[None], *, niced: bool = False) -> None:
        self.proc, self.cgroups, self.sink, self.drain, self.niced = proc, cgroups, sink, drain, niced

    def alive(self) -> bool:
        return self.proc.returncode is None

    async def finish(self, timeout_s: float) -> RunOutcome | None:
        """Send the go line (to a waiting run), then wait at most `timeout_s` for the command to end. None: a
        waiting run had ended before its go line (it ran nothing of the build; stopped and cleared)."""
        proc, cgroups = self.proc, self.cgroups
        notes = [f"[sandbox] warning: {w}" for w in cgroups.warnings]
        try:
            if proc.stdin is not None and proc.returncode is not None:
                return None
            await _send_go(proc, cgroups, niced=self.niced)
            timed_out = False
            try:
                await asyncio.wait_for(proc.wait(), timeout_s)
            except asyncio.TimeoutError:
                timed_out = True
                await _stop_tree(proc, cgroups)
            except BaseException:  # cancelled: never leave the tree behind
                _kill_group(proc.pid)
                cgroups.kill_all()
                raise
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.drain, 5)
            return _outcome(proc.returncode, timed_out, timeout_s, self.sink.text(), notes, cgroups)
        finally:
            await asyncio.to_thread(cgroups.cleanup)

    async def discard(self) -> None:
        """Stop a run that never got its go line, and everything it started."""
        try:
            await _stop_started(self.proc, self.cgroups)
        finally:
            self.drain.cancel()


class _BwrapServer:
    """The artifact server under bubblewrap (isolation.RunningServer), in cgroups of its own.

    One started ahead (`BubblewrapIsolation.start_waiting_server`) waits for its go line at SPARE_NICE; `stop` ends
    either kind with everything it started."""

    def __init__(self, url: str, namespace: str | None, proc: asyncio.subprocess.Process, log_path: Path,
                 cgroups: CgroupSet, *, niced: bool = False):
        self.url = self.probe_url = url
        self.probe_namespace = namespace
        self.proc = proc
        self.log_path = log_path
        self.cgroups = cgroups
        self.niced = niced

    async def running(self) -> bool:
        return self.alive()

    def alive(self) -> bool:
        return self.proc.returncode is None

    async def failure(self) -> SandboxSetupError:
        server_log = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return SandboxSetupError(f"artifact server did not become ready (rc={self.proc.returncode}):\n{server_log}")

    async def go(self) -> None:
        """A waiting server's go line: it serves from then on, at a cold server's niceness."""
        await _send_go(self.proc, self.cgroups, niced=self.niced)

    async def stop(self) -> None:
        await _stop_started(self.proc, self.cgroups)


class BubblewrapIsolation:
    """Builds and the artifact server under bubblewrap, each in fresh cgroups with rlimits (isolation.Isolation)."""

    name = "local"

    def __init__(self, settings: LocalSandboxSettings):
        self.settings = settings
        removed = sweep_stale_cgroups()
        if removed:
            log.info("removed %d stale sandbox cgroup(s) left by earlier runs", removed)
        self._node_modules: dict[str, Path] = {}  # template name -> its installed node_modules
        self._build_node: str | None = settings.node  # resolved on the first build when None (the pinned Node)
        self._modules_lock = asyncio.Lock()

    def rules(self) -> PipelineRules:
        settings = self.settings
        return PipelineRules(
            allowed_packages=settings.allowed_packages, max_files=settings.max_files,
            max_file_bytes=settings.max_file_bytes, max_output_mb=settings.limits.max_output_mb,
            build_timeout_s=settings.build_timeout_s or settings.limits.wall_clock_s,
            server_start_timeout_s=settings.server_start_timeout_s, build_command=settings.build_command,
            spare_build=settings.spare_build, spare_build_warm_up=settings.spare_build_warm_up,
            spare_server=settings.spare_server)

    def _bwrap(self) -> str:
        found = shutil.which(self.settings.bwrap)
        if found is None:
            raise SandboxSetupError(f"bubblewrap executable {self.settings.bwrap!r} not found")
        return found

    async def _modules(self, template: str | None = None) -> Path:
        key = template or DEFAULT_TEMPLATE
        async with self._modules_lock:
            if key not in self._node_modules:
                self._node_modules[key] = await asyncio.to_thread(
                    ensure_template_modules, self.settings.cache_root, key)
            return self._node_modules[key]

    async def _node(self) -> str:
        async with self._modules_lock:
            if self._build_node is None:
                self._build_node = str(await asyncio.to_thread(ensure_build_node, self.settings.cache_root))
            return self._build_node

    async def build_tools(self, template: str | None) -> BuildTools:
        self._bwrap()
        node = await self._node()
        node_mounts, node_exe = _node_mounts(node)
        modules = await self._modules(template)
        cache = None
        if self.settings.compile_cache:
            cache = compile_cache_dir(self.settings.cache_root or DEFAULT_CACHE_ROOT, modules,
                                      Path(shutil.which(node) or node))
        return BuildTools(node=node_exe, link=modules, mounts=[Mount(modules, IN_MODULES), *node_mounts],
                          compile_cache=cache)

    async def run(self, command: list[str], mounts: list[Mount], *, cwd: str, env: dict[str, str],
                  timeout_s: float, image: str | None = None, limits: ResourceLimits | None = None) -> RunOutcome:
        """Run command in fresh cgroups with rlimits (the build's, or `limits`), under bubblewrap. `image` is a
        container engine's: here the command's own files come as mounts."""
        started = await self._start(command, mounts, cwd=cwd, env=env, waits=False, limits=limits)
        if isinstance(started, RunOutcome):
            return started
        return await started.finish(timeout_s)

    async def start_waiting(self, command: list[str], mounts: list[Mount], *, cwd: str,
                            env: dict[str, str]) -> "_WaitingRun | RunOutcome":
        """`run`'s command, confined and limited alike, started now with a pipe for its stdin: it prepares what
        needs no input, then waits for its go line (`finish`). A RunOutcome: it could not start."""
        return await self._start(command, mounts, cwd=cwd, env=env, waits=True)

    async def _start(self, command: list[str], mounts: list[Mount], *, cwd: str, env: dict[str, str],
                     waits: bool, limits: ResourceLimits | None = None) -> "_WaitingRun | RunOutcome":
        settings = self.settings
        try:
            argv = [
                self._bwrap(), *_common_args(mount_proc=settings.mount_proc),
                *(arg for key, value in env.items() for arg in ("--setenv", key, value)),
                *_mount_args(mounts), "--chdir", cwd, "--", *command,
            ]
        except SandboxSetupError as exc:
            return RunOutcome(None, "", setup_error=f"sandbox setup failed: {exc}")
        limits = limits or settings.limits
        try:
            cgroups = await _new_cgroups(limits, "build")
        except OSError as exc:
            return RunOutcome(None, "", setup_error=f"cgroup setup failed: {exc}")
        sink = LogCap(settings.max_log_bytes)
        nice = _nice_prefix(cgroups) if waits else []
        try:
            proc = await asyncio.create_subprocess_exec(
                *nice, *limited_command(argv, limits, cgroups),
                stdin=asyncio.subprocess.PIPE if waits else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=SCRUBBED_ENV,
                start_new_session=True,  # its own process group, killed as a whole
            )
        except OSError as exc:
            await asyncio.to_thread(cgroups.cleanup)
            return RunOutcome(None, "", setup_error=f"could not start sandbox: {exc}")
        except BaseException:
            await asyncio.to_thread(cgroups.cleanup)
            raise
        assert proc.stdout is not None
        return _WaitingRun(proc, cgroups, sink, asyncio.create_task(_drain(proc.stdout, sink)), niced=bool(nice))

    def scratch_dir(self, dist_dir: Path) -> Path:
        return scratch_dir("serve")

    @contextlib.asynccontextmanager
    async def serve_folder(self, command: list[str], mounts: list[Mount], *, scratch: Path,
                           network: str | None) -> AsyncIterator[_BwrapServer]:
        """The server, network-less, on a socket made here and passed in as a file descriptor.

        `network`: the network namespace of the browser that will load it (BrowserPool.network_namespace); the
        listening socket is made there, so only that browser reaches it. None: the host's 127.0.0.1.
        """
        server = await self._launch_server(command, mounts, scratch=scratch, network=network, waits=False)
        try:
            yield server
        finally:
            await server.stop()

    async def start_waiting_server(self, command: list[str], mounts: list[Mount], *, scratch: Path,
                                   network: str | None) -> _BwrapServer:
        """`serve_folder`'s server, confined and limited alike, started now: it imports and takes its socket, then
        waits for its go line (`go`) before it serves; `stop` ends it (runner/sandbox/spare_server.py)."""
        return await self._launch_server([*command, "--wait-go"], mounts, scratch=scratch, network=network,
                                         waits=True)

    async def _launch_server(self, command: list[str], mounts: list[Mount], *, scratch: Path, network: str | None,
                             waits: bool) -> _BwrapServer:
        settings = self.settings
        bwrap = self._bwrap()
        py_binds, py_argv = _python_args(settings.python)
        try:
            sock = socket_in_namespace(network) if network else socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        except ConfinementError as exc:
            raise SandboxSetupError(str(exc)) from exc
        cgroups: CgroupSet | None = None
        proc: asyncio.subprocess.Process | None = None
        try:
            sock.bind(("127.0.0.1", 0))
            sock.listen(128)
            sock.set_inheritable(True)
            port = sock.getsockname()[1]
            fd = sock.fileno()
            argv = [
                bwrap, *_common_args(mount_proc=settings.mount_proc), *py_binds, "--setenv", "PYTHONUTF8", "1",
                *_mount_args(mounts), "--chdir", "/tmp", "--", *py_argv, *command, "--fd", str(fd),
            ]  # fmt: skip
            limits = settings.server_limits
            cgroups = await _new_cgroups(limits, "serve")
            nice = _nice_prefix(cgroups) if waits else []
            log_path = scratch / "server.log"
            server_log = log_path.open("wb")
            try:
                proc = await asyncio.create_subprocess_exec(
                    *nice, *limited_command(argv, limits, cgroups),
                    stdin=asyncio.subprocess.PIPE if waits else asyncio.subprocess.DEVNULL,
                    stdout=server_log,
                    stderr=server_log,
                    pass_fds=(fd,),
                    env=SCRUBBED_ENV,
                    start_new_session=True,
                )
            finally:
                server_log.close()
            return _BwrapServer(f"http://127.0.0.1:{port}/", network, proc, log_path, cgroups, niced=bool(nice))
        except BaseException:
            if proc is not None and cgroups is not None:
                await _stop_tree(proc, cgroups)
            elif proc is not None:
                _kill_group(proc.pid)
            if cgroups is not None:
                await asyncio.to_thread(cgroups.cleanup)
            raise
        finally:
            sock.close()  # the server owns it now; a dead server then refuses instead of hanging clients

    async def browser_settings(self, base: BrowserSettings) -> BrowserSettings:
        """A locally launched browser is confined: its own network namespace and a memory cgroup."""
        if base.connect_url:
            return base
        return base.model_copy(update={"confine": True})

    async def browser_killed_by_page(self, settings: BrowserSettings, *, lost_at: float) -> bool:
        """A confined local browser's pool reads its own cgroup's OOM count (runner/browser/confine.py)."""
        return False

    async def browser_running(self, settings: BrowserSettings) -> bool:
        """A local browser is the pool's own process: the pool watches it (runner/browser/confine.py)."""
        return True

    async def aclose(self) -> None:
        """Nothing long-lived to stop: every build and server is scoped to its own call."""
        return None


class LocalSandbox(PipelineSandbox):
    """The sandbox pipeline under bubblewrap."""

    name = "local"

    def __init__(self, settings: LocalSandboxSettings | None = None):
        self.settings = settings or LocalSandboxSettings()
        super().__init__(BubblewrapIsolation(self.settings))
