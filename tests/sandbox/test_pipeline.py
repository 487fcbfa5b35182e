"""The sandbox pipeline (runner/sandbox/pipeline.py) over a recording isolation: no bubblewrap, no engine."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from runner.browser.launch import BrowserSettings
from runner.sandbox.base import ToolBridge
from runner.sandbox.docker import DockerIsolation, DockerSandbox
from runner.sandbox.isolation import (
    IN_APP,
    IN_BACKENDS,
    IN_DIST,
    IN_GENUI,
    IN_MODULES,
    BuildTools,
    Mount,
    PipelineRules,
    RunOutcome,
    SandboxSetupError,
)
from runner.sandbox.local import BubblewrapIsolation, LocalSandbox
from runner.sandbox.pipeline import LogCap, PipelineSandbox, bridge_mounts, classify

FILES = {"src/App.jsx": "export default function App() { return <p>hi</p>; }\n"}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _Server:
    probe_namespace = None

    def __init__(self, url: str, alive: bool):
        self.url = self.probe_url = url
        self.alive = alive

    async def running(self) -> bool:
        return self.alive

    async def failure(self) -> SandboxSetupError:
        return SandboxSetupError("recorded server never answered")


class RecordingIsolation:
    """An isolation that runs nothing: it records what the pipeline asks and answers as told."""

    name = "recording"

    def __init__(self, tmp: Path, outcome: RunOutcome | None = None, *, server_alive: bool = True):
        self.tmp = tmp
        self.outcome = outcome or RunOutcome(0, "built\n")
        self.server_alive = server_alive
        self.runs: list[dict] = []
        self.served: list[dict] = []
        self.scratches: list[Path] = []

    def rules(self) -> PipelineRules:
        return PipelineRules(allowed_packages=["react", "react-dom"], max_files=8, max_file_bytes=4096,
                             max_output_mb=1, build_timeout_s=7.0, server_start_timeout_s=10.0, build_command=None)

    async def build_tools(self, template: str | None) -> BuildTools:
        modules = self.tmp / "modules"
        modules.mkdir(exist_ok=True)
        return BuildTools(node="/opt/node/bin/node", link=modules, mounts=[Mount(modules, IN_MODULES)])

    async def run(self, command: list[str], mounts: list[Mount], *, cwd: str, env: dict[str, str],
                  timeout_s: float) -> RunOutcome:
        workspace = next(m.source for m in mounts if m.target == IN_APP)
        self.runs.append({"command": command, "mounts": mounts, "cwd": cwd, "env": env, "timeout_s": timeout_s,
                          "node_modules": (Path(workspace) / "node_modules").resolve()})
        (Path(workspace) / "dist").mkdir()
        (Path(workspace) / "dist" / "index.html").write_text("<p>hi</p>")
        return self.outcome

    def scratch_dir(self, dist_dir: Path) -> Path:
        scratch = self.tmp / f"scratch-{len(self.scratches)}"
        scratch.mkdir()
        self.scratches.append(scratch)
        return scratch

    @contextlib.asynccontextmanager
    async def serve_folder(self, command: list[str], mounts: list[Mount], *, scratch: Path,
                           network: str | None) -> AsyncIterator[_Server]:
        self.served.append({"command": command, "mounts": mounts, "scratch": scratch, "network": network,
                            "files": sorted(p.name for p in scratch.iterdir())})
        if not self.server_alive:
            yield _Server(f"http://127.0.0.1:{_closed_port()}/", alive=False)
            return
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield _Server(f"http://127.0.0.1:{server.server_address[1]}/", alive=True)
        finally:
            server.shutdown()
            server.server_close()

    async def browser_settings(self, base: BrowserSettings) -> BrowserSettings:
        return base

    async def aclose(self) -> None:
        return None


def test_both_sandboxes_are_the_one_pipeline_over_their_isolation() -> None:
    local, docker = LocalSandbox(), DockerSandbox()
    assert isinstance(local, PipelineSandbox) and isinstance(local.isolation, BubblewrapIsolation)
    assert isinstance(docker, PipelineSandbox) and isinstance(docker.isolation, DockerIsolation)
    assert local.settings is local.isolation.settings and docker.settings is docker.isolation.settings
    for isolation in (local.isolation, docker.isolation):
        for member in ("rules", "build_tools", "run", "scratch_dir", "serve_folder", "browser_settings", "aclose"):
            assert callable(getattr(isolation, member)), member


def test_a_build_runs_vite_in_the_workspace_with_an_environment_of_its_own(tmp_path: Path) -> None:
    isolation = RecordingIsolation(tmp_path)
    sandbox = PipelineSandbox(isolation)
    result = asyncio.run(sandbox.build(FILES, tmp_path / "ws"))
    assert result.status == "ok", result.log
    assert result.dist_dir == (tmp_path / "ws" / "dist").resolve()
    [run] = isolation.runs
    assert run["command"] == ["/opt/node/bin/node", f"{IN_MODULES}/vite/bin/vite.js", "build", "--configLoader", "native"]
    assert run["cwd"] == IN_APP and run["timeout_s"] == 7.0
    assert run["env"] == {"NODE_ENV": "production", "NO_COLOR": "1"}, "nothing of the runner's environment"
    assert run["mounts"][0] == Mount((tmp_path / "ws").resolve(), IN_APP, writable=True)
    assert Mount(tmp_path / "modules", IN_MODULES) in run["mounts"], "the isolation's own mounts are added"
    assert [m for m in run["mounts"] if m.writable] == [run["mounts"][0]], "only the workspace is writable"
    assert run["node_modules"] == (tmp_path / "modules").resolve(), "the build finds the template's install"
    assert not (tmp_path / "ws" / "node_modules").is_symlink(), "and the link out is gone once the build ended"
    assert "removed" not in result.log  # the pipeline's own link is not the build's doing


def test_a_rejected_answer_never_reaches_the_isolation(tmp_path: Path) -> None:
    isolation = RecordingIsolation(tmp_path)
    result = asyncio.run(PipelineSandbox(isolation).build({"src/../../x.js": ""}, tmp_path / "ws"))
    assert result.status == "rejected" and isolation.runs == []
    assert not (tmp_path / "ws").exists()


def test_a_failing_isolation_setup_is_infra(tmp_path: Path) -> None:
    class Broken(RecordingIsolation):
        async def build_tools(self, template: str | None) -> BuildTools:
            raise SandboxSetupError("no engine here")

    result = asyncio.run(PipelineSandbox(Broken(tmp_path)).build(FILES, tmp_path / "ws"))
    assert result.status == "infra" and result.log == "sandbox setup failed: no engine here"


@pytest.mark.parametrize(("outcome", "status", "fragments"), [
    (RunOutcome(0, "fine"), "ok", ["fine"]),
    (RunOutcome(1, "error TS1005"), "build_failed", ["error TS1005"]),
    (RunOutcome(-1, "", timed_out=True, timeout_s=3), "timeout", ["killed after 3.0s wall clock"]),
    (RunOutcome(137, "", oom=True, notes=["[sandbox] OOM: killed"]), "build_failed",
     ["OOM", "killed by signal SIGKILL"]),
    (RunOutcome(0, "", oom=True, notes=["[sandbox] OOM: killed"]), "build_failed", ["OOM"]),
    (RunOutcome(137, ""), "build_failed", ["killed by signal SIGKILL"]),
    (RunOutcome(-24, ""), "build_failed", ["killed by signal SIGXCPU"]),
    (RunOutcome(1, "bwrap: no", isolation_failed=""), "infra", ["bwrap: no"]),
    (RunOutcome(125, "", isolation_failed="[sandbox] could not join the cgroups"), "infra", ["could not join"]),
    (RunOutcome(None, "", setup_error="could not start the build container: gone"), "infra",
     ["could not start the build container: gone"]),
])
def test_how_a_command_ended_is_one_bucket_for_every_isolation(outcome: RunOutcome, status: str,
                                                                fragments: list[str]) -> None:
    result = classify(outcome)
    assert result.status == status, result.log
    for fragment in fragments:
        assert fragment in result.log


def test_the_log_keeps_its_head_and_tail_within_the_cap() -> None:
    cap = LogCap(100)
    for index in range(50):
        cap.feed(f"line {index:03d}\n".encode())
    text = cap.text()
    assert text.startswith("line 000") and text.endswith("line 049\n")
    assert "[350 bytes of log dropped]" in text
    assert len(text.encode()) - len("\n... [350 bytes of log dropped] ...\n") == 100
    whole = LogCap(100)
    whole.feed(b"x" * 100)
    assert whole.text() == "x" * 100, "a log at the cap is kept whole"


def test_the_tool_bridge_gets_its_folders_and_a_config_with_inside_paths(tmp_path: Path) -> None:
    backends, io = tmp_path / "backends", tmp_path / "turn"
    backends.mkdir()
    (tmp_path / "state_in.json").write_text("{}")
    (tmp_path / "runtime.py").write_text("def create_bridge(config):\n    return None\n")
    bridge = ToolBridge(backends_path=backends, fixture_ids={"t": "m"}, state_in=tmp_path / "state_in.json",
                        log_out=io / "tools.jsonl", state_out=io / "state.json", runtime=tmp_path / "runtime.py",
                        extra={"layout": "flat"})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    mounts = bridge_mounts(bridge, scratch)
    assert mounts[0] == Mount(backends.resolve(), IN_BACKENDS)
    assert [m for m in mounts if m.writable] == [Mount(io.resolve(), "/srv/bridge/0", writable=True)]
    assert Mount((tmp_path / "state_in.json").resolve(), "/srv/bridge/in/state_in.json") in mounts
    assert mounts[-1] == Mount(scratch / "bridge.json", f"{IN_GENUI}/bridge.json")
    config = json.loads((scratch / "bridge.json").read_text())
    assert config == {"backends_path": IN_BACKENDS, "fixture_ids": {"t": "m"},
                      "state_in": "/srv/bridge/in/state_in.json", "log_out": "/srv/bridge/0/tools.jsonl",
                      "state_out": "/srv/bridge/0/state.json", "extra": {"layout": "flat"}}


def test_serving_with_a_bridge_ships_the_suites_runtime_beside_the_server(tmp_path: Path) -> None:
    isolation = RecordingIsolation(tmp_path)
    dist, backends = tmp_path / "dist", tmp_path / "backends"
    dist.mkdir()
    backends.mkdir()
    runtime = tmp_path / "suite_runtime.py"
    runtime.write_text("def create_bridge(config):\n    return None\n")
    bridge = ToolBridge(backends_path=backends, fixture_ids={}, state_in=tmp_path / "state_in.json",
                        log_out=tmp_path / "turn" / "tools.jsonl", state_out=tmp_path / "turn" / "state.json",
                        runtime=runtime)

    async def scenario() -> None:
        async with PipelineSandbox(isolation).serve(dist, tool_bridge=bridge):
            pass

    asyncio.run(scenario())
    [served] = isolation.served
    assert served["command"][-4:] == ["--bridge", f"{IN_GENUI}/bridge.json",
                                      "--bridge-runtime", f"{IN_GENUI}/tool_bridge.py"]
    assert served["files"] == ["bridge.json", "server.py", "tool_bridge.py"]
    shipped = next(m for m in served["mounts"] if m.target == f"{IN_GENUI}/tool_bridge.py")
    assert not shipped.writable and shipped.source == served["scratch"] / "tool_bridge.py"


def test_serving_mounts_the_dist_and_server_read_only_and_cleans_up(tmp_path: Path) -> None:
    isolation = RecordingIsolation(tmp_path)
    dist = tmp_path / "dist"
    dist.mkdir()

    async def scenario() -> str:
        async with PipelineSandbox(isolation).serve(dist, network="/run/netns/worker-1") as served:
            assert isolation.scratches[0].is_dir(), "the scratch folder lives while the artifact is served"
            return served.url

    url = asyncio.run(scenario())
    [served] = isolation.served
    assert url.startswith("http://127.0.0.1:")
    assert served["command"] == [f"{IN_GENUI}/server.py", "--root", IN_DIST]
    assert served["network"] == "/run/netns/worker-1" and served["files"] == ["server.py"]
    assert served["mounts"] == [Mount(dist.resolve(), IN_DIST), Mount(served["scratch"] / "server.py",
                                                                      f"{IN_GENUI}/server.py")]
    assert not any(m.writable for m in served["mounts"])
    assert not served["scratch"].exists(), "the scratch folder is removed"


def test_a_server_that_exits_fails_at_once_with_its_own_error(tmp_path: Path) -> None:
    isolation = RecordingIsolation(tmp_path, server_alive=False)
    dist = tmp_path / "dist"
    dist.mkdir()

    async def scenario() -> None:
        async with PipelineSandbox(isolation).serve(dist):
            raise AssertionError("served although the server exited")

    started = time.monotonic()
    with pytest.raises(SandboxSetupError, match="never answered"):
        asyncio.run(scenario())
    assert time.monotonic() - started < 5, "not after the whole start timeout (10 s)"
    assert not isolation.scratches[0].exists()
