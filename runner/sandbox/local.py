"""LocalSandbox: builds and serves untrusted web artifacts under bubblewrap with resource limits.

Inside the sandbox nothing of the host is visible but read-only system folders (/usr and the
/lib, /bin links), the template's node_modules (read-only, at /node_modules, which Node and Vite
find by walking up from /app) and the workspace (writable, at /app). There is no network: the
artifact server gets its listening socket from the parent as an inherited file descriptor.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, Field

from runner.browser.confine import ConfinementError, socket_in_namespace
from runner.browser.launch import BrowserSettings
from runner.sandbox.base import BuildResult, ServedArtifact, ToolBridge
from runner.sandbox.limits import CgroupSet, ResourceLimits, create_cgroups, limited_command, sweep_stale_cgroups
from runner.sandbox.static import build_static
from runner.sandbox.web_template import (
    ALLOWED_PACKAGES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_TEMPLATE,
    accept_build_output,
    ensure_template_modules,
    prepare_workspace,
    rejection,
)

log = logging.getLogger(__name__)

SERVER_SCRIPT = Path(__file__).resolve().parent / "server.py"
SANDBOX_APP = "/app"
SANDBOX_MODULES = "/node_modules"
SANDBOX_DIST = "/srv/dist"
SANDBOX_GENUI = "/opt/genui"
SANDBOX_PYTHON = "/opt/python"
SANDBOX_NODE = "/opt/node"
SANDBOX_BACKENDS = "/srv/backends"
SANDBOX_BRIDGE_IO = "/srv/bridge"


def _default_server_limits() -> ResourceLimits:
    # The server lives as long as a whole multi-turn session; it needs little memory but more cpu time.
    return ResourceLimits(cpu_seconds=3600, memory_mb=512, max_processes=64, max_output_mb=64, wall_clock_s=3600, nofile=1024)


class LocalSandboxSettings(BaseModel):
    bwrap: str = "bwrap"
    node: str = "node"
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
    # Test-only hook: run this argv inside the build sandbox (cwd /app) instead of `vite build`.
    build_command: list[str] | None = None


class SandboxSetupError(RuntimeError):
    """The sandbox itself could not be set up (status infra, not the artifact's fault)."""


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


def _node_args(node: str) -> tuple[list[str], str]:
    """Binds for the node binary (none if it lives under /usr) and its path inside the sandbox."""
    found = shutil.which(node)
    if found is None:
        raise SandboxSetupError(f"node executable {node!r} not found")
    real = Path(found).resolve()
    if _under(real, "/usr"):
        return [], str(real)
    prefix = real.parent.parent  # e.g. ~/.nvm/versions/node/v20/bin/node -> .../v20
    return ["--ro-bind", str(prefix), SANDBOX_NODE], f"{SANDBOX_NODE}/{real.relative_to(prefix)}"


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


class _CappedLog:
    """Keeps the head and tail of a stream, so huge logs stay bounded but the end is kept."""

    def __init__(self, limit: int):
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        excess = len(self.tail) - self.limit // 2
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        middle = f"\n... [{self.dropped} bytes of log dropped] ...\n" if self.dropped else ""
        return (bytes(self.head).decode(errors="replace") + middle + bytes(self.tail).decode(errors="replace"))


async def _drain(stream: asyncio.StreamReader, sink: _CappedLog) -> None:
    while chunk := await stream.read(65536):
        sink.feed(chunk)


def _status_in_namespace(netns: str, url: str) -> int | None:
    """HTTP status of GET url, asked from inside a network namespace (None: no answer yet)."""
    parts = urlsplit(url)
    try:
        with socket_in_namespace(netns) as probe:
            probe.settimeout(2.0)
            probe.connect((parts.hostname, parts.port))
            probe.sendall(f"GET / HTTP/1.0\r\nHost: {parts.netloc}\r\n\r\n".encode())
            status_line = probe.recv(64).split(b"\r\n", 1)[0].split()
            return int(status_line[1]) if len(status_line) >= 2 else None
    except (OSError, ValueError, ConfinementError):
        return None


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


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


class LocalSandbox:
    name = "local"

    def __init__(self, settings: LocalSandboxSettings | None = None):
        self.settings = settings or LocalSandboxSettings()
        removed = sweep_stale_cgroups()
        if removed:
            log.info("removed %d stale sandbox cgroup(s) left by earlier runs", removed)
        self._node_modules: dict[str, Path] = {}  # template name -> its installed node_modules
        self._modules_lock = asyncio.Lock()

    async def _modules(self, template: str | None = None) -> Path:
        key = template or DEFAULT_TEMPLATE
        async with self._modules_lock:
            if key not in self._node_modules:
                self._node_modules[key] = await asyncio.to_thread(
                    ensure_template_modules, self.settings.cache_root, key)
            return self._node_modules[key]

    def _bwrap(self) -> str:
        found = shutil.which(self.settings.bwrap)
        if found is None:
            raise SandboxSetupError(f"bubblewrap executable {self.settings.bwrap!r} not found")
        return found

    async def build(self, files: dict[str, str], workspace: Path, *, kind: str = "vite",
                    assets_dir: Path | None = None, template: str | None = None) -> BuildResult:
        """Build `files` into an artifact. kind="static": a page needing no build (vetted and copied).

        `template`: the suite's web template (runner.sandbox.web_template.TEMPLATES); None: the default.
        """
        if kind == "static":
            return await asyncio.to_thread(build_static, files, workspace, assets_dir=assets_dir)
        started = time.monotonic()
        settings = self.settings
        rejected = rejection(files, settings.allowed_packages, max_files=settings.max_files,
                             max_file_bytes=settings.max_file_bytes, template=template)
        if rejected is not None:
            return rejected
        try:
            bwrap = self._bwrap()
            node_binds, node_exe = _node_args(settings.node)
            node_modules = await self._modules(template)
            workspace = Path(workspace).resolve()
            await asyncio.to_thread(prepare_workspace, files, workspace, node_modules, template)
        except (SandboxSetupError, RuntimeError, OSError, ValueError, subprocess.SubprocessError) as exc:
            return BuildResult("infra", log=f"sandbox setup failed: {exc}", duration_s=time.monotonic() - started)

        command = settings.build_command or [
            node_exe, f"{SANDBOX_MODULES}/vite/bin/vite.js", "build", "--configLoader", "native"
        ]
        argv = [
            bwrap,
            *_common_args(mount_proc=settings.mount_proc),
            *node_binds,
            "--setenv", "NODE_ENV", "production",
            "--setenv", "NO_COLOR", "1",
            "--ro-bind", str(node_modules), SANDBOX_MODULES,
            "--bind", str(workspace), SANDBOX_APP,
            "--chdir", SANDBOX_APP,
            "--",
            *command,
        ]  # fmt: skip
        timeout = settings.build_timeout_s or settings.limits.wall_clock_s
        result = await self._run_limited(argv, settings.limits, timeout, label="build")
        result.duration_s = time.monotonic() - started
        return accept_build_output(result, workspace, max_output_mb=settings.limits.max_output_mb,
                                   expect_index=settings.build_command is None)

    async def _run_limited(self, argv: list[str], limits: ResourceLimits, timeout: float, *, label: str) -> BuildResult:
        """Run argv in fresh cgroups with rlimits; map the outcome to a BuildResult status."""
        try:
            cgroups = await asyncio.to_thread(create_cgroups, limits, label)
        except OSError as exc:
            return BuildResult("infra", log=f"cgroup setup failed: {exc}")
        notes = [f"[sandbox] warning: {w}" for w in cgroups.warnings]
        sink = _CappedLog(self.settings.max_log_bytes)
        try:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *limited_command(argv, limits, cgroups),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                    env=SCRUBBED_ENV,
                    start_new_session=True,  # its own process group, killed as a whole
                )
            except OSError as exc:
                return BuildResult("infra", log=f"could not start sandbox: {exc}")
            assert proc.stdout is not None
            drain = asyncio.create_task(_drain(proc.stdout, sink))
            timed_out = False
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except asyncio.TimeoutError:
                timed_out = True
                await _stop_tree(proc, cgroups)
            except BaseException:  # cancelled: never leave the tree behind
                _kill_group(proc.pid)
                cgroups.kill_all()
                raise
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(drain, 5)
            return self._classify(proc.returncode, timed_out, timeout, sink.text(), notes, cgroups)
        finally:
            await asyncio.to_thread(cgroups.cleanup)

    @staticmethod
    def _classify(
        rc: int | None, timed_out: bool, timeout: float, output: str, notes: list[str], cgroups: CgroupSet
    ) -> BuildResult:
        oom = cgroups.oom_killed()
        peak = cgroups.max_memory_mb()
        if peak is not None:
            notes.append(f"[sandbox] exit={rc} peak_memory={peak:.0f}MB")
        if oom:
            notes.append("[sandbox] OOM: killed by the memory limit")
        if timed_out:
            notes.append(f"[sandbox] timeout: killed after {timeout:.1f}s wall clock")
            status = "timeout"
        elif rc == 0:
            status = "ok"
        elif rc == 125 and not output.strip():
            status, notes = "infra", notes + ["[sandbox] could not join the cgroups"]
        elif output.lstrip().startswith("bwrap:"):
            status = "infra"  # bubblewrap failed to set the sandbox up
        else:
            status = "build_failed"
            if rc is not None and (rc < 0 or rc > 128):
                sig = -rc if rc < 0 else rc - 128
                with contextlib.suppress(ValueError):
                    notes.append(f"[sandbox] killed by signal {signal.Signals(sig).name}")
        log_text = output + ("\n" if output and not output.endswith("\n") else "") + "\n".join(notes)
        return BuildResult(status, log=log_text)

    @contextlib.asynccontextmanager
    async def serve(self, dist_dir: Path, *, tool_bridge: ToolBridge | None = None,
                    network: str | None = None) -> AsyncIterator[ServedArtifact]:
        """Serve dist_dir on 127.0.0.1 from a sandboxed, network-less server process.

        `network`: the network namespace of the browser that will load it (BrowserPool.network_namespace); the
        listening socket is made there, so only that browser reaches it. None: the host's 127.0.0.1.
        """
        settings = self.settings
        bwrap = self._bwrap()
        py_binds, py_argv = _python_args(settings.python)
        scratch = Path(tempfile.mkdtemp(prefix="genui-serve-"))
        try:
            sock = socket_in_namespace(network) if network else socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        except ConfinementError as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            raise SandboxSetupError(str(exc)) from exc
        cgroups: CgroupSet | None = None
        proc: asyncio.subprocess.Process | None = None
        try:
            sock.bind(("127.0.0.1", 0))
            sock.listen(128)
            sock.set_inheritable(True)
            port = sock.getsockname()[1]
            fd = sock.fileno()
            binds = [
                "--ro-bind", str(Path(dist_dir).resolve()), SANDBOX_DIST,
                "--ro-bind", str(SERVER_SCRIPT), f"{SANDBOX_GENUI}/server.py",
            ]  # fmt: skip
            server_args = ["--root", SANDBOX_DIST, "--fd", str(fd)]
            if tool_bridge is not None:
                binds += self._bridge_binds(tool_bridge, scratch)
                server_args += ["--bridge", f"{SANDBOX_GENUI}/bridge.json"]
            argv = [
                bwrap, *_common_args(mount_proc=settings.mount_proc), *py_binds, "--setenv", "PYTHONUTF8", "1", *binds,
                "--chdir", "/tmp", "--", *py_argv, f"{SANDBOX_GENUI}/server.py", *server_args,
            ]  # fmt: skip
            limits = settings.server_limits
            cgroups = await asyncio.to_thread(create_cgroups, limits, "serve")
            server_log = (scratch / "server.log").open("wb")
            try:
                proc = await asyncio.create_subprocess_exec(
                    *limited_command(argv, limits, cgroups),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=server_log,
                    stderr=server_log,
                    pass_fds=(fd,),
                    env=SCRUBBED_ENV,
                    start_new_session=True,
                )
            finally:
                server_log.close()
            sock.close()  # the server owns it now; a dead server then refuses instead of hanging clients
            url = f"http://127.0.0.1:{port}/"
            await self._wait_ready(url, proc, scratch / "server.log", network)
            yield ServedArtifact(url=url)
        finally:
            sock.close()
            if proc is not None and cgroups is not None:
                await _stop_tree(proc, cgroups)
            elif proc is not None:
                _kill_group(proc.pid)
            if cgroups is not None:
                await asyncio.to_thread(cgroups.cleanup)
            shutil.rmtree(scratch, ignore_errors=True)

    @staticmethod
    def _bridge_binds(bridge: ToolBridge, scratch: Path) -> list[str]:
        """Backends read-only, the log/state folders writable, paths rewritten for the sandbox."""
        binds = ["--ro-bind", str(Path(bridge.backends_path).resolve()), SANDBOX_BACKENDS]
        io_dirs: dict[Path, str] = {}
        for path in (bridge.log_out, bridge.state_out):
            folder = Path(path).resolve().parent
            folder.mkdir(parents=True, exist_ok=True)
            if folder not in io_dirs:
                io_dirs[folder] = f"{SANDBOX_BRIDGE_IO}/{len(io_dirs)}"
                binds += ["--bind", str(folder), io_dirs[folder]]

        def inner(path: Path) -> str:
            real = Path(path).resolve()
            return f"{io_dirs[real.parent]}/{real.name}"

        state_in = Path(bridge.state_in).resolve()
        if state_in.parent in io_dirs:
            inner_state_in = inner(state_in)
        else:
            inner_state_in = f"{SANDBOX_BRIDGE_IO}/in/{state_in.name}"
            if state_in.exists():
                binds += ["--ro-bind", str(state_in), inner_state_in]
        config = {
            "backends_path": SANDBOX_BACKENDS,
            "fixture_ids": bridge.fixture_ids,
            "state_in": inner_state_in,
            "log_out": inner(bridge.log_out),
            "state_out": inner(bridge.state_out),
            "extra": bridge.extra,
        }
        (scratch / "bridge.json").write_text(json.dumps(config, default=str))
        return binds + ["--ro-bind", str(scratch / "bridge.json"), f"{SANDBOX_GENUI}/bridge.json"]

    async def _wait_ready(self, url: str, proc: asyncio.subprocess.Process, log_path: Path,
                          network: str | None = None) -> None:
        deadline = time.monotonic() + self.settings.server_start_timeout_s
        async with httpx.AsyncClient(trust_env=False, timeout=2.0) as client:
            while time.monotonic() < deadline:
                if proc.returncode is not None:
                    break
                if network:
                    status = await asyncio.to_thread(_status_in_namespace, network, url)
                    if status is not None and status < 500:
                        return
                else:
                    with contextlib.suppress(httpx.HTTPError):
                        response = await client.get(url)
                        if response.status_code < 500:
                            return
                await asyncio.sleep(0.05)
        server_log = log_path.read_text(errors="replace") if log_path.exists() else ""
        raise SandboxSetupError(f"artifact server did not become ready (rc={proc.returncode}):\n{server_log}")

    async def browser_settings(self, base: BrowserSettings) -> BrowserSettings:
        """A locally launched browser is confined: its own network namespace and a memory cgroup."""
        if base.connect_url:
            return base
        return base.model_copy(update={"confine": True})

    async def aclose(self) -> None:
        """Nothing long-lived to stop: every build and server is scoped to its own call."""
        return None
