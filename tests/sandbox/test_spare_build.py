"""Spare builds (runner/sandbox/spare_build.py): over a recording isolation, then with real bubblewrap and Vite."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from runner.sandbox import scratch, spare_build
from runner.sandbox.build_node import ensure_build_node
from runner.sandbox.isolation import IN_APP, IN_MODULES, BuildTools, Mount, PipelineRules, RunOutcome
from runner.sandbox.local import LocalSandbox, LocalSandboxSettings
from runner.sandbox.pipeline import PipelineSandbox
from runner.sandbox.spare_build import SCRIPT
from runner.sandbox.web_template import ensure_template_modules
from tests.support.cgroups import leftover_cgroups
from tests.support.components import missing

FILES = {"src/App.jsx": "export default function App() { return <p>hi</p>; }\n"}
OTHER = {"src/App.jsx": "export default function App() { return <h2>other</h2>; }\n"}
VITE = [f"{IN_MODULES}/vite/bin/vite.js", "build", "--configLoader", "native"]


class _Waiting:
    """A started spare of the recording isolation: `finish` builds like RecordingIsolation.run."""

    def __init__(self, owner: "AheadIsolation", mounts: list[Mount]) -> None:
        self.owner, self.mounts, self.dead, self.finished, self.discarded = owner, mounts, False, False, False
        self.ends_before_go = False

    def alive(self) -> bool:
        return not self.dead

    async def finish(self, timeout_s: float) -> RunOutcome | None:
        if self.ends_before_go:
            return None
        self.finished = True
        workspace = Path(next(m.source for m in self.mounts if m.target == IN_APP))
        self.owner.seen_at_go.append(sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*")))
        (workspace / "dist").mkdir()
        (workspace / "dist" / "index.html").write_text("<p>hi</p>")
        return RunOutcome(0, "built by the spare\n", timeout_s=timeout_s)

    async def discard(self) -> None:
        self.discarded = True


class AheadIsolation:
    """Records cold runs and spares started ahead; runs nothing."""

    name = "recording"

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.node = tmp, "/opt/node/bin/node"
        self.runs: list[list[Mount]] = []
        self.started: list[tuple[list[str], list[Mount], str, dict[str, str], _Waiting]] = []
        self.seen_at_go: list[list[str]] = []

    def rules(self) -> PipelineRules:
        return PipelineRules(allowed_packages=["react", "react-dom"], max_files=8, max_file_bytes=4096,
                             max_output_mb=1, build_timeout_s=7.0, server_start_timeout_s=10.0, build_command=None,
                             spare_build=True)

    async def build_tools(self, template: str | None) -> BuildTools:
        modules = self.tmp / "modules"
        modules.mkdir(exist_ok=True)
        return BuildTools(node=self.node, link=modules, mounts=[Mount(modules, IN_MODULES)])

    async def run(self, command: list[str], mounts: list[Mount], *, cwd: str, env: dict[str, str],
                  timeout_s: float) -> RunOutcome:
        self.runs.append(mounts)
        workspace = Path(next(m.source for m in mounts if m.target == IN_APP))
        (workspace / "dist").mkdir()
        (workspace / "dist" / "index.html").write_text("<p>hi</p>")
        return RunOutcome(0, "built cold\n")

    async def start_waiting(self, command: list[str], mounts: list[Mount], *, cwd: str,
                            env: dict[str, str]) -> _Waiting:
        waiting = _Waiting(self, mounts)
        self.started.append((command, mounts, cwd, env, waiting))
        return waiting

    async def aclose(self) -> None:
        return None


async def _settled() -> None:
    for _ in range(5):  # the spare starts in a background task
        await asyncio.sleep(0)


def test_the_next_build_runs_in_a_spare_started_with_the_builds_own_sandbox(tmp_path: Path) -> None:
    isolation = AheadIsolation(tmp_path)

    async def scenario():
        sandbox = PipelineSandbox(isolation)
        first = await sandbox.build(FILES, tmp_path / "a" / "ws")
        await _settled()
        second = await sandbox.build(OTHER, tmp_path / "b" / "ws")
        await _settled()
        await sandbox.aclose()
        return first, second

    first, second = asyncio.run(scenario())
    assert first.ok and second.ok, first.log + second.log
    assert first.log.startswith("built cold") and second.log.startswith("built by the spare")
    [cold] = isolation.runs
    (command, mounts, cwd, env, used), (_, _, _, _, refill) = isolation.started
    # The cold build's sandbox, command and environment; only the workspace folder differs until the go line.
    assert command == [isolation.node, "--input-type=module", "-e", SCRIPT.read_text(), "warm-up", *VITE]
    assert cwd == IN_APP and env == {"NODE_ENV": "production", "NO_COLOR": "1"}
    assert [m for m in mounts if m.target != IN_APP] == [m for m in cold if m.target != IN_APP]
    [staging] = [m for m in mounts if m.target == IN_APP]
    assert staging.writable and [m for m in mounts if m.writable] == [staging]
    # The model's files were in place when the go line came; the folder became the build's workspace.
    assert "src/App.jsx" in isolation.seen_at_go[0] and "dist" not in isolation.seen_at_go[0]
    workspace = (tmp_path / "b" / "ws").resolve()
    assert second.dist_dir == workspace / "dist" and (workspace / "dist" / "index.html").is_file()
    assert (workspace / "src" / "App.jsx").read_text() == OTHER["src/App.jsx"]
    assert not Path(staging.source).exists()
    # Each spare serves one build; the one started after it is stopped, and its folder removed, on close.
    assert used.finished and not used.discarded and refill.discarded and not refill.finished
    assert not [Path(m.source) for m in refill.mounts if m.target == IN_APP][0].exists()


def test_a_dead_spare_or_one_for_other_tools_is_never_used(tmp_path: Path) -> None:
    isolation = AheadIsolation(tmp_path)

    async def scenario():
        sandbox = PipelineSandbox(isolation)
        await sandbox.build(FILES, tmp_path / "a")
        await _settled()
        isolation.started[-1][4].dead = True
        dead = await sandbox.build(FILES, tmp_path / "b")
        await _settled()
        isolation.started[-1][4].ends_before_go = True  # alive when taken, gone when its go line is sent
        ended = await sandbox.build(OTHER, tmp_path / "c")
        await _settled()
        isolation.node = "/opt/other-node/bin/node"  # the tools changed: the spare made for the old ones stays
        other = await sandbox.build(FILES, tmp_path / "d")
        await _settled()
        await sandbox.aclose()
        return dead, ended, other

    dead, ended, other = asyncio.run(scenario())
    assert all(result.ok and result.log.startswith("built cold") for result in (dead, ended, other))
    assert len(isolation.runs) == 4 and not any(s[4].finished for s in isolation.started)
    # The sources laid out in the ended spare's folder are the cold build's workspace.
    assert Mount((tmp_path / "c").resolve(), IN_APP, writable=True) in isolation.runs[2]
    assert (tmp_path / "c" / "src" / "App.jsx").read_text() == OTHER["src/App.jsx"]
    assert all(s[4].discarded for s in isolation.started if not s[4].ends_before_go)


def test_a_spare_without_its_warm_up_is_started_cold(tmp_path: Path) -> None:
    class Cold(AheadIsolation):
        def rules(self) -> PipelineRules:
            return PipelineRules(**{**super().rules().__dict__, "spare_build_warm_up": False})

    isolation = Cold(tmp_path)

    async def scenario():
        sandbox = PipelineSandbox(isolation)
        await sandbox.build(FILES, tmp_path / "a")
        await _settled()
        await sandbox.aclose()

    asyncio.run(scenario())
    [(command, *_)] = isolation.started
    assert command == [isolation.node, "--input-type=module", "-e", SCRIPT.read_text(), "cold", *VITE]
    assert LocalSandbox(LocalSandboxSettings(spare_build=True)).isolation.rules().spare_build_warm_up
    assert not LocalSandbox(LocalSandboxSettings(spare_build=True, spare_build_warm_up=False)).isolation.rules() \
        .spare_build_warm_up


def test_no_spares_unless_asked_or_for_a_test_command(tmp_path: Path) -> None:
    class Off(AheadIsolation):
        def __init__(self, tmp: Path, **rules: object) -> None:
            super().__init__(tmp)
            self.overrides = rules

        def rules(self) -> PipelineRules:
            base = super().rules()
            return PipelineRules(**{**base.__dict__, **self.overrides})

    for isolation in (Off(tmp_path / "off", spare_build=False), Off(tmp_path / "cmd", build_command=["node", "x"])):
        isolation.tmp.mkdir()

        async def scenario(isolation=isolation):
            sandbox = PipelineSandbox(isolation)
            for name in ("a", "b"):
                await sandbox.build(FILES, isolation.tmp / name)
                await _settled()
            await sandbox.aclose()

        asyncio.run(scenario())
        assert len(isolation.runs) == 2 and isolation.started == []


# --- real bubblewrap and Vite ----------------------------------------------------------------------


@pytest.mark.sandbox
@pytest.mark.build
@pytest.mark.skipif(shutil.which("bwrap") is None, reason=missing("bubblewrap", "bubblewrap is not installed"))
def test_a_spare_build_makes_the_cold_builds_artifact_and_leaves_nothing_behind(tmp_path, created_cgroups,
                                                                               monkeypatch):
    spares_dir = tmp_path / "spares"
    spares_dir.mkdir()
    make = tempfile.mkdtemp

    def in_spares_dir(suffix=None, prefix=None, dir=None):  # the spares' folders, where the test can see them
        return make(suffix, prefix, spares_dir if (prefix or "").startswith("genui-spare-build-") else dir)

    monkeypatch.setattr(scratch.tempfile, "mkdtemp", in_spares_dir)

    async def scenario():
        cold = LocalSandbox(LocalSandboxSettings())
        spared = LocalSandbox(LocalSandboxSettings(spare_build=True))
        try:
            reference = await cold.build(FILES, tmp_path / "cold")
            await spared.build(OTHER, tmp_path / "first")
            for _ in range(200):  # the spare is up once its Node waits for the go line
                if spared._spares is not None and spared._spares._spares:
                    break
                await asyncio.sleep(0.05)
            [spare] = spared._spares._spares.values()
            built = await spared.build(FILES, tmp_path / "spare")
            return reference, built, spare
        finally:
            await cold.aclose()
            await spared.aclose()

    reference, built, spare = asyncio.run(scenario())
    assert reference.ok and built.ok, reference.log + built.log
    assert "built in" in built.log and built.log.splitlines()[0].startswith("vite v")
    assert built.dist_dir == (tmp_path / "spare" / "dist").resolve()
    files = sorted(p.relative_to(reference.dist_dir) for p in reference.dist_dir.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(built.dist_dir) for p in built.dist_dir.rglob("*") if p.is_file())
    for name in files:  # the same artifact, byte for byte
        assert (reference.dist_dir / name).read_bytes() == (built.dist_dir / name).read_bytes()
    assert not spare.staging.exists() and spare.run.proc.returncode is not None
    assert leftover_cgroups(created_cgroups) == []
    assert list(spares_dir.iterdir()) == []  # the spare started after the last build was stopped on close


# What a script run after the go line sees of the warm-up (spare-build.mjs keeps it in a global the build ignores).
_REPORT_WARM_UP = "console.log(JSON.stringify({warmUp: globalThis.__genuiSpareWarmUp ?? null}));\n"


def _launch(tmp_path: Path, mode: str, *, tmpdir: Path) -> dict:
    """spare-build.mjs with the pinned build Node and the template's Vite, as a spare runs it, with a script after
    the go line that prints what the warm-up left; its first output line, parsed."""
    node = ensure_build_node()
    app = tmp_path / "app"
    if not app.is_dir():
        app.mkdir()
        (app / "node_modules").symlink_to(ensure_template_modules())
    report = app / "report.mjs"
    report.write_text(_REPORT_WARM_UP)
    done = subprocess.run([*spare_build.spare_command([str(node), str(report)], warm_up=mode == "warm-up")],
                          input="go\n", capture_output=True, text=True, cwd=app, timeout=120,
                          env={"PATH": os.environ.get("PATH", ""), "TMPDIR": str(tmpdir), "NODE_ENV": "production"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[0])


@pytest.mark.build
def test_the_warm_up_builds_a_project_of_its_own_in_tmp_and_leaves_nothing_there(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    warmed = _launch(tmp_path, "warm-up", tmpdir=scratch)["warmUp"]
    assert warmed is not None and "error" not in warmed, warmed
    assert warmed["ms"] > 0 and list(scratch.iterdir()) == []
    assert _launch(tmp_path, "cold", tmpdir=scratch)["warmUp"] is None
    # A warm-up that cannot make its project (no /tmp to write) costs the script after the go line nothing.
    failed = _launch(tmp_path, "warm-up", tmpdir=scratch / "missing")["warmUp"]
    assert failed is not None and "missing" in failed["error"]
