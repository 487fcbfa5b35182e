"""The Sandbox protocol: build untrusted sources into an artifact and serve it on 127.0.0.1."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from runner.browser.launch import BrowserSettings
from runner.sandbox.isolation import Mount, RunOutcome
from runner.sandbox.limits import ResourceLimits


@dataclass
class BuildResult:
    status: str  # ok | build_failed | timeout | rejected | infra
    log: str = ""
    dist_dir: Path | None = None
    duration_s: float = 0.0
    rejected: list[str] = field(default_factory=list)  # reasons for rejected files

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class ToolBridge:
    """Tool backends reachable from the artifact through `callTool` (tool-grounded suites)."""

    backends_path: Path  # folder of backend modules
    fixture_ids: dict[str, str]  # tool name -> fixture id (module name)
    state_in: Path  # JSON state at the start of the turn
    log_out: Path  # JSONL tool log written by the server
    state_out: Path  # JSON state written after every call
    # The suite's tool semantics: a Python file (standard library plus jsonschema, importing nothing of the
    # project) defining `create_bridge(config)`; the sandbox ships it beside the artifact server (server.py).
    runtime: Path
    extra: dict[str, Any] = field(default_factory=dict)


NODE = "{node}"  # in a ConfinedCommand's argv: the Node executable as the sandbox sees it (the pinned build Node)


@dataclass
class ConfinedCommand:
    """A command run in the sandbox as a build is (no network, a fresh confinement, killed at its wall clock), in a
    workspace mounted writable at /app with the template's node_modules at /node_modules: an agent's command
    (runner/agents/command.py)."""

    argv: list[str]  # NODE ("{node}") in it stands for the sandbox's Node
    workspace: Path
    timeout_s: float
    mounts: list[Mount] = field(default_factory=list)  # more folders or files (a Unix socket, a home folder)
    env: dict[str, str] = field(default_factory=dict)
    image: str | None = None  # sandbox=docker: the image to run it in (None: the build image); sandbox=local: unused
    limits: ResourceLimits | None = None  # None: the build's limits
    template: str | None = None  # whose node_modules are mounted (None: the default template's)


@dataclass
class ServedArtifact:
    url: str  # http://127.0.0.1:PORT/


class Sandbox(Protocol):
    name: str

    async def build(self, files: dict[str, str], workspace: Path, *, kind: str = "vite",
                    assets_dir: Path | None = None, template: str | None = None) -> BuildResult: ...

    # async ctx -> ServedArtifact. `network`: the browser's network namespace to listen in (local sandbox).
    def serve(self, dist_dir: Path, *, tool_bridge: ToolBridge | None = None, network: str | None = None): ...

    async def run_confined(self, command: ConfinedCommand) -> RunOutcome:
        """Run `command` as a build runs (its isolation, no network, its limits or the build's); how it ended."""
        ...

    async def browser_settings(self, base: BrowserSettings) -> BrowserSettings:
        """The settings of one worker's browser; a sandbox may confine it or point it at its own (docker)."""
        return base

    async def browser_killed_by_page(self, settings: BrowserSettings, *, lost_at: float) -> bool:
        """Whether the browser of a worker's `settings` (from browser_settings), whose connection closed at `lost_at`
        (wall-clock seconds), was stopped by its own memory cap, which its page filled: the page's failure, where
        any other loss is the harness's."""
        return False

    async def browser_running(self, settings: BrowserSettings) -> bool:
        """Whether the browser of a worker's `settings` still runs (a sandbox without browsers of its own: yes)."""
        return True

    async def aclose(self) -> None: ...
