"""The sandbox pipeline: build an artifact, serve it with the tool bridge, wait until it answers, cap logs.

Written once over the isolation interface (isolation.py); `LocalSandbox` (bubblewrap, local.py) and
`DockerSandbox` (docker.py) are this pipeline over their own isolation.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

from runner.browser.confine import ConfinementError, socket_in_namespace
from runner.browser.launch import BrowserSettings
from runner.sandbox import compile_cache
from runner.sandbox.base import NODE, BuildResult, ConfinedCommand, ServedArtifact, ToolBridge
from runner.sandbox.build_output import clean_workspace, describe_removed
from runner.sandbox.isolation import (
    IN_APP,
    IN_BACKENDS,
    IN_BRIDGE_IO,
    IN_COMPILE_CACHE,
    IN_DIST,
    IN_GENUI,
    IN_MODULES,
    BuildTools,
    Isolation,
    Mount,
    PipelineRules,
    RunningServer,
    RunOutcome,
)
from runner.sandbox.spare_build import SpareBuilds, adopt
from runner.sandbox.spare_server import SpareServer, SpareServers, fill
from runner.sandbox.static import build_static
from runner.sandbox.web_template import accept_build_output, prepare_workspace, rejection

log = logging.getLogger(__name__)

SERVER_SCRIPT = Path(__file__).resolve().parent / "server.py"
BRIDGE_RUNTIME = "tool_bridge.py"  # the suite's ToolBridge.runtime, as shipped beside server.py
# A failure while readying the build (template install, workspace copy, the isolation's own tools).
SETUP_ERRORS = (RuntimeError, OSError, ValueError, subprocess.SubprocessError)
BUILD_ENV = {"NODE_ENV": "production", "NO_COLOR": "1"}


def _vite_command(tools: BuildTools) -> list[str]:
    return [tools.node, f"{IN_MODULES}/vite/bin/vite.js", "build", "--configLoader", "native"]


def _build_mounts_and_env(tools: BuildTools, workspace: Path,
                          compile_cache_mount: Mount | None) -> tuple[list[Mount], dict[str, str]]:
    """What a build sees: the workspace, the isolation's tools and, when given, Node's compile cache (read-only
    for a build, writable only for its warm-up; compile_cache.py)."""
    mounts = [Mount(workspace, IN_APP, writable=True), *tools.mounts]
    env = dict(BUILD_ENV)
    if compile_cache_mount is not None:
        mounts.append(compile_cache_mount)
        env[compile_cache.NODE_COMPILE_CACHE_ENV] = compile_cache_mount.target
    return mounts, env


class LogCap:
    """Keeps the head and the tail of a stream, so a huge log stays bounded but its end is kept."""

    def __init__(self, limit: int):
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        excess = len(self.tail) - self.tail_limit
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        middle = f"\n... [{self.dropped} bytes of log dropped] ...\n" if self.dropped else ""
        return bytes(self.head).decode(errors="replace") + middle + bytes(self.tail).decode(errors="replace")


def classify(outcome: RunOutcome) -> BuildResult:
    """The build's status and log from how its command ended: the same buckets for every isolation."""
    if outcome.setup_error is not None:
        return BuildResult("infra", log=outcome.setup_error)
    notes = list(outcome.notes)
    code = outcome.exit_code
    if outcome.timed_out:
        notes.append(f"[sandbox] timeout: killed after {outcome.timeout_s:.1f}s wall clock")
        status = "timeout"
    elif code == 0 and not outcome.oom:
        status = "ok"
    elif outcome.isolation_failed is not None:
        status = "infra"
        if outcome.isolation_failed:
            notes.append(outcome.isolation_failed)
    else:
        status = "build_failed"
        if code is not None and (code < 0 or code > 128):  # killed by a signal (negative: by us; > 128: a shell's)
            with contextlib.suppress(ValueError):
                notes.append(f"[sandbox] killed by signal {signal.Signals(-code if code < 0 else code - 128).name}")
    output = outcome.output
    log_text = output + ("\n" if output and not output.endswith("\n") else "") + "\n".join(notes)
    return BuildResult(status, log=log_text)


def bridge_mounts(bridge: ToolBridge, scratch: Path) -> list[Mount]:
    """Backends read-only, the log and state folders writable, and the bridge config with inside paths."""
    mounts = [Mount(Path(bridge.backends_path).resolve(), IN_BACKENDS)]
    io_dirs: dict[Path, str] = {}
    for path in (bridge.log_out, bridge.state_out):
        folder = Path(path).resolve().parent
        folder.mkdir(parents=True, exist_ok=True)
        if folder not in io_dirs:
            io_dirs[folder] = f"{IN_BRIDGE_IO}/{len(io_dirs)}"
            mounts.append(Mount(folder, io_dirs[folder], writable=True))

    def inner(path: Path) -> str:
        real = Path(path).resolve()
        return f"{io_dirs[real.parent]}/{real.name}"

    state_in = Path(bridge.state_in).resolve()
    if state_in.parent in io_dirs:
        inner_state_in = inner(state_in)
    else:
        inner_state_in = f"{IN_BRIDGE_IO}/in/{state_in.name}"
        if state_in.exists():
            mounts.append(Mount(state_in, inner_state_in))
    config = {
        "backends_path": IN_BACKENDS,
        "fixture_ids": bridge.fixture_ids,
        "state_in": inner_state_in,
        "log_out": inner(bridge.log_out),
        "state_out": inner(bridge.state_out),
        "extra": bridge.extra,
    }
    (scratch / "bridge.json").write_text(json.dumps(config, default=str))
    # A copy beside server.py, like it: a bind source the container engine resolves like the other server files.
    shutil.copy2(bridge.runtime, scratch / BRIDGE_RUNTIME)
    return [*mounts, Mount(scratch / BRIDGE_RUNTIME, f"{IN_GENUI}/{BRIDGE_RUNTIME}"),
            Mount(scratch / "bridge.json", f"{IN_GENUI}/bridge.json")]


def http_status(url: str, netns: str | None = None) -> int | None:
    """HTTP status of GET url (None: no answer yet), asked from inside the network namespace `netns` when
    given. A raw HTTP/1.0 request: an HTTP client would first build a TLS context (about 17 ms a server)."""
    parts = urlsplit(url)
    try:
        probe = socket_in_namespace(netns) if netns else socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with probe:
            probe.settimeout(2.0)
            probe.connect((parts.hostname, parts.port))
            probe.sendall(f"GET / HTTP/1.0\r\nHost: {parts.netloc}\r\n\r\n".encode())
            status_line = probe.recv(64).split(b"\r\n", 1)[0].split()
            return int(status_line[1]) if len(status_line) >= 2 else None
    except (OSError, ValueError, ConfinementError):
        return None


def _server_files(scratch: Path, dist: Path) -> tuple[list[str], list[Mount]]:
    """The artifact server's command and mounts for `dist`, its script copied into `scratch` (a bind source the
    container engine resolves like the server's other files)."""
    shutil.copy2(SERVER_SCRIPT, scratch / "server.py")
    mounts = [Mount(dist, IN_DIST), Mount(scratch / "server.py", f"{IN_GENUI}/server.py")]
    return [f"{IN_GENUI}/server.py", "--root", IN_DIST], mounts


async def wait_ready(server: RunningServer, timeout_s: float) -> None:
    """Return once the server answers GET / below 500; raise its failure when it exits or the time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not await server.running():
            break
        status = await asyncio.to_thread(http_status, server.probe_url, server.probe_namespace)
        if status is not None and status < 500:
            return
        await asyncio.sleep(0.05)
    raise await server.failure()


class PipelineSandbox:
    """The Sandbox protocol (base.py) over one isolation."""

    name: str

    def __init__(self, isolation: Isolation):
        self.isolation = isolation
        self._warming = asyncio.Lock()
        self._cold: set[Path] = set()  # compile caches whose warm-up failed in this run: builds go without
        self._spares: SpareBuilds | None = None  # created with the first build that may use one
        self._spare_serves: SpareServers | None = None  # created with the first serve that may use one

    def _spare_builds(self, rules: PipelineRules) -> SpareBuilds | None:
        """The spare builds (spare_build.py), when the rules ask for them for `vite build` and the isolation can
        start a build ahead."""
        if not rules.spare_build or rules.build_command is not None or not hasattr(self.isolation, "start_waiting"):
            return None
        if self._spares is None:
            self._spares = SpareBuilds(self.isolation, warm_up=rules.spare_build_warm_up)  # type: ignore[arg-type]
        return self._spares

    async def build(self, files: dict[str, str], workspace: Path, *, kind: str = "vite",
                    assets_dir: Path | None = None, template: str | None = None) -> BuildResult:
        """Build `files` into an artifact. kind="static": a page needing no build (vetted and copied).

        `template`: the suite's web template (runner.sandbox.web_template.TEMPLATES); None: the default.
        """
        if kind == "static":
            return await asyncio.to_thread(build_static, files, workspace, assets_dir=assets_dir)
        started = time.monotonic()
        rules = self.isolation.rules()
        rejected = rejection(files, rules.allowed_packages, max_files=rules.max_files,
                             max_file_bytes=rules.max_file_bytes, template=template)
        if rejected is not None:
            return rejected
        try:
            tools = await self.isolation.build_tools(template)
        except SETUP_ERRORS as exc:
            return BuildResult("infra", log=f"sandbox setup failed: {exc}", duration_s=time.monotonic() - started)
        workspace = Path(workspace).resolve()
        command = rules.build_command or _vite_command(tools)
        cache = Mount(tools.compile_cache, IN_COMPILE_CACHE) if await self._warm_compile_cache(tools, template) \
            else None
        spares = self._spare_builds(rules)
        key = (template, tools.node, tools.link, tuple(tools.mounts), cache)
        spare = await spares.take(key) if spares is not None else None
        try:
            await asyncio.to_thread(prepare_workspace, files, spare.staging if spare else workspace, tools.link,
                                    template)
        except SETUP_ERRORS as exc:
            if spares is not None and spare is not None:
                await spares.discard(spare)
            return BuildResult("infra", log=f"sandbox setup failed: {exc}", duration_s=time.monotonic() - started)
        mounts, env = _build_mounts_and_env(tools, workspace, cache)
        outcome = await spare.run.finish(rules.build_timeout_s) if spare is not None else None
        if spare is not None:
            await asyncio.to_thread(adopt, spare.staging, workspace)
        if outcome is None:  # no spare, or one that had ended before its go line: the build starts here
            outcome = await self.isolation.run(command, mounts, cwd=IN_APP, env=env, timeout_s=rules.build_timeout_s)
        if spares is not None:  # the next build's sandbox starts now, while this artifact is served and visited
            spares.start_next(key, command, lambda folder: _build_mounts_and_env(tools, folder, cache)[0], env, IN_APP)
        result = classify(outcome)
        try:  # links the build left (to host files, up into other runs) never reach the run dir
            removed = await asyncio.to_thread(clean_workspace, workspace, Path(tools.link).resolve())
            if removed:
                result.log += ("\n" if result.log and not result.log.endswith("\n") else "") + describe_removed(removed)
        except OSError as exc:
            await asyncio.to_thread(shutil.rmtree, workspace, True)
            result = BuildResult("build_failed", log=f"{result.log}\n[sandbox] the build left links or special files "
                                 f"that could not be removed ({exc}); its workspace was dropped")
        result.duration_s = time.monotonic() - started
        return accept_build_output(result, workspace, max_output_mb=rules.max_output_mb,
                                   expect_index=rules.build_command is None)

    async def run_confined(self, command: ConfinedCommand) -> RunOutcome:
        """`command` confined as a build is: its workspace at /app (writable), the template's node_modules and Node
        as a build sees them, its own mounts; the build's limits unless it brings its own."""
        try:
            tools = await self.isolation.build_tools(command.template)
        except SETUP_ERRORS as exc:
            return RunOutcome(None, "", setup_error=f"sandbox setup failed: {exc}")
        argv = [tools.node if part == NODE else part for part in command.argv]
        mounts = [Mount(Path(command.workspace).resolve(), IN_APP, writable=True), *tools.mounts, *command.mounts]
        return await self.isolation.run(argv, mounts, cwd=IN_APP, env=dict(command.env), timeout_s=command.timeout_s,
                                        image=command.image, limits=command.limits)

    async def _warm_compile_cache(self, tools: BuildTools, template: str | None) -> bool:
        """Whether tools.compile_cache is warm, after warming it first if needed: one build of the template's
        own sources with the cache writable (compile_cache.py). A failed warm-up is logged once and leaves
        this run's builds without the cache; it never fails a build."""
        folder = tools.compile_cache
        if folder is None or folder in self._cold:
            return False
        if compile_cache.is_warm(folder):
            return True
        async with self._warming:
            if compile_cache.is_warm(folder):
                return True
            warming: Path | None = None
            try:  # a read-only cache root, a broken template: builds go without
                warming = await asyncio.to_thread(compile_cache.new_warming_folder, folder)
                workspace, cache = warming / "workspace", warming / "cache"
                cache.mkdir()
                await asyncio.to_thread(prepare_workspace, {}, workspace, tools.link, template)
                mounts, env = _build_mounts_and_env(tools, workspace, Mount(cache, IN_COMPILE_CACHE, writable=True))
                outcome = await self.isolation.run(_vite_command(tools), mounts, cwd=IN_APP, env=env,
                                                   timeout_s=self.isolation.rules().build_timeout_s)
                result = classify(outcome)
                if result.ok and await asyncio.to_thread(compile_cache.publish, cache, folder):
                    return True
                log.warning("warming the build compile cache failed; builds run without it:\n%s", result.log[-2000:])
            except SETUP_ERRORS as exc:
                log.warning("warming the build compile cache failed; builds run without it: %s", exc)
            finally:
                if warming is not None:
                    await asyncio.to_thread(shutil.rmtree, warming, True)
            self._cold.add(folder)
            return False

    def _spare_servers(self, rules: PipelineRules) -> SpareServers | None:
        """The spare artifact servers (spare_server.py), when the rules ask for them and the isolation can start a
        server ahead."""
        if not rules.spare_server or not hasattr(self.isolation, "start_waiting_server"):
            return None
        if self._spare_serves is None:
            self._spare_serves = SpareServers(self.isolation, _server_files)  # type: ignore[arg-type]
        return self._spare_serves

    @staticmethod
    async def _filled_spare(spares: SpareServers, network: str | None, dist: Path) -> SpareServer | None:
        """The spare server for `network` with `dist`'s files in place (None: none was ready, or the files could not
        be laid out there); either way the next serve's spare for that browser starts now, while this one serves."""
        spare = await spares.take(network)
        spares.start_next(network)
        if spare is None:
            return None
        try:
            await asyncio.to_thread(fill, dist, spare)
        except OSError as exc:  # served cold instead, which says why if it fails too
            log.warning("a spare artifact server could not take its files: %s", exc)
            await spares.discard(spare)
            return None
        return spare

    @contextlib.asynccontextmanager
    async def serve(self, dist_dir: Path, *, tool_bridge: ToolBridge | None = None,
                    network: str | None = None) -> AsyncIterator[ServedArtifact]:
        """Serve dist_dir on the browser's 127.0.0.1 from a confined, network-less artifact server.

        `network`: where the browser that will load it lives (BrowserPool.network_namespace: a local browser's
        namespace, or a Docker worker's browser container); only that browser reaches the server.
        """
        rules = self.isolation.rules()
        spares = self._spare_servers(rules) if tool_bridge is None else None
        spare = await self._filled_spare(spares, network, Path(dist_dir).resolve()) if spares is not None else None
        if spares is not None and spare is not None:
            try:
                await spare.server.go()
                await wait_ready(spare.server, rules.server_start_timeout_s)
                yield ServedArtifact(url=spare.server.url)
            finally:
                await spares.discard(spare)
            return
        scratch = self.isolation.scratch_dir(Path(dist_dir))
        try:
            command, mounts = await asyncio.to_thread(_server_files, scratch, Path(dist_dir).resolve())
            if tool_bridge is not None:
                mounts += await asyncio.to_thread(bridge_mounts, tool_bridge, scratch)
                command += ["--bridge", f"{IN_GENUI}/bridge.json", "--bridge-runtime", f"{IN_GENUI}/{BRIDGE_RUNTIME}"]
            async with self.isolation.serve_folder(command, mounts, scratch=scratch, network=network) as server:
                await wait_ready(server, rules.server_start_timeout_s)
                yield ServedArtifact(url=server.url)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    async def browser_settings(self, base: BrowserSettings) -> BrowserSettings:
        return await self.isolation.browser_settings(base)

    async def browser_killed_by_page(self, settings: BrowserSettings, *, lost_at: float) -> bool:
        return await self.isolation.browser_killed_by_page(settings, lost_at=lost_at)

    async def browser_running(self, settings: BrowserSettings) -> bool:
        return await self.isolation.browser_running(settings)

    async def aclose(self) -> None:
        if self._spares is not None:
            await self._spares.aclose()
        if self._spare_serves is not None:
            await self._spare_serves.aclose()
        await self.isolation.aclose()
