"""The isolation interface: what the sandbox pipeline (pipeline.py) asks of bubblewrap or Docker.

An isolation runs one command with its limits and mounts (the build) and starts the artifact server
confined (serve a folder); everything around that (vetting, the template copy, the vite command, the
dist check, the tool bridge's mounts, waiting until the server answers, the build log) is the pipeline's,
written once. The folders the confined processes see are the same in both implementations.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from runner.browser.launch import BrowserSettings
from runner.sandbox.limits import ResourceLimits

# Where things are inside the confined build and server.
IN_APP = "/app"  # the workspace (writable during the build)
IN_MODULES = "/node_modules"  # the template's install (read-only); Node and Vite find it walking up from /app
IN_DIST = "/srv/dist"  # the built artifact (read-only while served)
IN_GENUI = "/opt/genui"  # server.py and the bridge config
IN_BACKENDS = "/srv/backends"  # the tool bridge's backend modules (read-only)
IN_BRIDGE_IO = "/srv/bridge"  # the tool bridge's log and state folders (writable)
IN_COMPILE_CACHE = "/opt/node-compile-cache"  # Node's module compile cache (read-only; compile_cache.py)


class SandboxSetupError(RuntimeError):
    """The sandbox itself could not be set up (status infra, not the artifact's fault)."""


@dataclass(frozen=True)
class Mount:
    source: Path | str  # a folder or file of the runner's; str: a volume of the container engine
    target: str  # the path inside
    writable: bool = False


@dataclass(frozen=True)
class BuildTools:
    """What a build of one template needs from the isolation."""

    node: str  # the node executable, as the build sees it
    link: Path  # what the workspace's node_modules link names
    mounts: list[Mount] = field(default_factory=list)  # the template's install and the node binary, if not built in
    # A folder of the runner's for Node's compile cache of this install and Node (runner/sandbox/compile_cache.py):
    # the pipeline warms it once, then mounts it read-only. None: builds go without.
    compile_cache: Path | None = None


@dataclass(frozen=True)
class PipelineRules:
    """The pipeline's own settings, read from the isolation's settings at every build."""

    allowed_packages: list[str]
    max_files: int
    max_file_bytes: int
    max_output_mb: int
    build_timeout_s: float
    server_start_timeout_s: float
    build_command: list[str] | None  # test-only: run this instead of `vite build`
    spare_build: bool = False  # start the next build's sandbox ahead, with Vite loaded (pipeline.py)
    spare_build_warm_up: bool = True  # and Vite's bundler warmed on a project of its own (spare_build.py)
    spare_server: bool = False  # start the next artifact server ahead, imports done (spare_server.py)


@dataclass
class RunOutcome:
    """How a confined command ended, before the pipeline gives it a status."""

    exit_code: int | None
    output: str  # stdout and stderr, capped (pipeline.LogCap)
    timed_out: bool = False
    timeout_s: float = 0.0
    oom: bool = False  # something in it was killed by the memory limit
    notes: list[str] = field(default_factory=list)  # the isolation's own "[sandbox] ..." lines
    isolation_failed: str | None = None  # the isolation broke, not the command ("" or a note): infra
    setup_error: str | None = None  # the command never started: infra, with this log


class RunningServer(Protocol):
    """An artifact server started by `Isolation.serve_folder`, possibly not answering yet."""

    url: str  # what the browser loads
    probe_url: str  # where the runner asks whether it answers
    probe_namespace: str | None  # the network namespace to ask from (None: the runner's own)

    async def running(self) -> bool: ...

    async def failure(self) -> SandboxSetupError:
        """The error for a server that never answered, with its own log."""
        ...


class WaitingRun(Protocol):
    """A confined command started ahead of its input (StartsAhead.start_waiting), waiting for its go line."""

    def alive(self) -> bool: ...

    async def finish(self, timeout_s: float) -> RunOutcome | None:
        """Send the go line, then as Isolation.run: its wall-clock limit starts now. None: it had ended before
        the go line, having run nothing of the build (its resources are freed)."""
        ...

    async def discard(self) -> None:
        """Stop it unused, with everything it started."""
        ...


class StartsAhead(Protocol):
    """An isolation that can start a build's command before its workspace is filled (spare builds)."""

    async def start_waiting(self, command: list[str], mounts: list[Mount], *, cwd: str,
                            env: dict[str, str]) -> WaitingRun | RunOutcome:
        """`command` confined exactly as Isolation.run would run it, started now; a RunOutcome: it did not start."""
        ...


class WaitingServer(RunningServer, Protocol):
    """An artifact server started ahead of its files (ServesAhead.start_waiting_server), waiting for its go line."""

    def alive(self) -> bool: ...

    async def go(self) -> None:
        """Its go line: it serves from now on (its files are in place)."""
        ...

    async def stop(self) -> None:
        """End it, used or not, with everything it started."""
        ...


class ServesAhead(Protocol):
    """An isolation that can start an artifact server before its files are there (spare servers)."""

    async def start_waiting_server(self, command: list[str], mounts: list[Mount], *, scratch: Path,
                                   network: str | None) -> WaitingServer:
        """`serve_folder`'s server, confined exactly alike, started now; raises SandboxSetupError where it cannot."""
        ...


class Isolation(Protocol):
    name: str

    def rules(self) -> PipelineRules: ...

    async def build_tools(self, template: str | None) -> BuildTools:
        """Ready a build of `template` (its install, the node binary); raises when the isolation cannot."""
        ...

    async def run(self, command: list[str], mounts: list[Mount], *, cwd: str, env: dict[str, str],
                  timeout_s: float, image: str | None = None, limits: ResourceLimits | None = None) -> RunOutcome:
        """Run `command` confined, with the build limits (or `limits`), these mounts and no network. `image`: the
        container image to run it in, where the isolation runs images (else the build's)."""
        ...

    def scratch_dir(self, dist_dir: Path) -> Path:
        """A fresh folder for one served artifact's server files (removed by the pipeline)."""
        ...

    def serve_folder(self, command: list[str], mounts: list[Mount], *, scratch: Path,
                     network: str | None) -> contextlib.AbstractAsyncContextManager[RunningServer]:
        """Start `python3 <command> --fd N` confined, listening where the browser of `network` reaches it.

        `command` names server.py and its arguments as seen inside; the isolation adds the listening socket.
        Leaving the context stops the server and everything it started.
        """
        ...

    async def browser_settings(self, base: BrowserSettings) -> BrowserSettings:
        """The browser the workers use with this isolation (confined, or in a container of its own)."""
        ...

    async def browser_killed_by_page(self, settings: BrowserSettings, *, lost_at: float) -> bool:
        """Whether the browser of `settings` went away because its page filled its memory cap (Sandbox's)."""
        ...

    async def browser_running(self, settings: BrowserSettings) -> bool:
        """Whether the browser of `settings` still runs (Sandbox's)."""
        ...

    async def aclose(self) -> None: ...
