"""Spare artifact servers (runner/sandbox/spare_server.py): over a recording isolation, then with real bubblewrap."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

import httpx
import pytest

from runner.compose import compose
from runner.run.validation import validate_config
from runner.sandbox import local, scratch, spare_server
from runner.sandbox.base import ToolBridge
from runner.sandbox.isolation import IN_DIST, Mount, PipelineRules
from runner.sandbox.local import LocalSandbox, LocalSandboxSettings
from runner.sandbox.pipeline import PipelineSandbox
from runner.sandbox.registry import build_sandbox
from tests.conftest import REPO_ROOT
from tests.support.cgroups import leftover_cgroups
from tests.support.components import missing


class _Server:
    """A started server of the recording isolation: it serves nothing; it records what it was given."""

    def __init__(self, command: list[str], mounts: list[Mount], network: str | None) -> None:
        self.command, self.mounts, self.network = command, mounts, network
        self.url = self.probe_url = "http://127.0.0.1:9/"
        self.probe_namespace = network
        self.dead = self.went = self.stopped = False
        self.dist_at_go: list[str] | None = None

    def alive(self) -> bool:
        return not self.dead

    async def running(self) -> bool:
        return not self.dead

    async def failure(self) -> Exception:
        return RuntimeError("never answers")

    async def go(self) -> None:
        self.went = True
        dist = Path(next(m.source for m in self.mounts if m.target == IN_DIST))
        self.dist_at_go = sorted(p.relative_to(dist).as_posix() for p in dist.rglob("*"))

    async def stop(self) -> None:
        self.stopped = True


class AheadIsolation:
    """Records cold serves and servers started ahead; runs nothing (readiness is stubbed out below)."""

    name = "recording"

    def __init__(self, *, spare_server: bool = True) -> None:
        self.spare_server = spare_server
        self.cold: list[tuple[list[str], str | None]] = []
        self.started: list[_Server] = []

    def rules(self) -> PipelineRules:
        return PipelineRules(allowed_packages=[], max_files=8, max_file_bytes=4096, max_output_mb=1,
                             build_timeout_s=7.0, server_start_timeout_s=10.0, build_command=None,
                             spare_server=self.spare_server)

    def scratch_dir(self, dist_dir: Path) -> Path:
        return Path(tempfile.mkdtemp(prefix="genui-test-serve-"))

    def serve_folder(self, command, mounts, *, scratch, network):
        isolation = self

        class _Context:
            async def __aenter__(self):
                isolation.cold.append((command, network))
                return _Server(command, mounts, network)

            async def __aexit__(self, *exc):
                return False

        return _Context()

    async def start_waiting_server(self, command, mounts, *, scratch, network) -> _Server:
        server = _Server(command, mounts, network)
        self.started.append(server)
        return server

    async def aclose(self) -> None:
        return None


async def _ready(server, timeout_s):
    return None


async def _settled() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def _dist(tmp_path: Path) -> Path:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<p>hi</p>")
    (dist / "assets" / "app.js").write_text("1")
    return dist


def test_each_serve_starts_the_next_for_its_browser_and_takes_the_one_started_before(tmp_path, monkeypatch):
    """The first serve for a browser starts cold and starts that browser's spare; the next takes it (its files in
    its dist folder before its go line) and starts another; a tool bridge's serve starts cold and takes none."""
    monkeypatch.setattr("runner.sandbox.pipeline.wait_ready", _ready)
    isolation = AheadIsolation()
    dist = _dist(tmp_path)
    (tmp_path / "backends").mkdir()
    (tmp_path / "runtime.py").write_text("")
    bridge = ToolBridge(backends_path=tmp_path / "backends", fixture_ids={}, state_in=tmp_path / "io" / "in.json",
                        log_out=tmp_path / "io" / "tools.jsonl", state_out=tmp_path / "io" / "out.json",
                        runtime=tmp_path / "runtime.py")

    async def scenario():
        sandbox = PipelineSandbox(isolation)
        urls = []
        for network in ("/ns/a", "/ns/a", "/ns/b", "/ns/a"):
            async with sandbox.serve(dist, network=network) as served:
                urls.append(served.url)
            await _settled()
        spare_count = len(isolation.started)
        async with sandbox.serve(dist, network="/ns/a", tool_bridge=bridge):
            pass
        await _settled()
        await sandbox.aclose()
        return spare_count

    spare_count = asyncio.run(scenario())
    assert [network for _, network in isolation.cold] == ["/ns/a", "/ns/b", "/ns/a"]  # the last: the bridge's
    assert "--bridge" in isolation.cold[-1][0]
    assert spare_count == 4 and [s.network for s in isolation.started] == ["/ns/a", "/ns/a", "/ns/b", "/ns/a"]
    used = [s for s in isolation.started if s.went]
    assert len(used) == 2 and all(s.dist_at_go == ["assets", "assets/app.js", "index.html"] for s in used)
    assert all(s.stopped for s in isolation.started)  # used ones after their serve, the rest on close
    assert all(not Path(next(m.source for m in s.mounts if m.target == IN_DIST)).exists() for s in isolation.started)


def test_a_dead_spare_is_stopped_and_the_serve_starts_cold(tmp_path, monkeypatch):
    monkeypatch.setattr("runner.sandbox.pipeline.wait_ready", _ready)
    isolation = AheadIsolation()
    dist = _dist(tmp_path)

    async def scenario():
        sandbox = PipelineSandbox(isolation)
        async with sandbox.serve(dist):
            pass
        await _settled()
        isolation.started[0].dead = True
        async with sandbox.serve(dist):
            pass
        await sandbox.aclose()

    asyncio.run(scenario())
    assert len(isolation.cold) == 2 and not isolation.started[0].went and isolation.started[0].stopped


def test_no_spares_unless_asked(tmp_path, monkeypatch):
    monkeypatch.setattr("runner.sandbox.pipeline.wait_ready", _ready)
    isolation = AheadIsolation(spare_server=False)

    async def scenario():
        sandbox = PipelineSandbox(isolation)
        for _ in range(2):
            async with sandbox.serve(_dist(tmp_path) if not (tmp_path / "dist").exists() else tmp_path / "dist"):
                pass
        await sandbox.aclose()

    asyncio.run(scenario())
    assert len(isolation.cold) == 2 and isolation.started == []


def test_spares_are_bounded_oldest_first(tmp_path, monkeypatch):
    monkeypatch.setattr(spare_server, "MAX_SPARES", 2)
    isolation = AheadIsolation()

    async def scenario():
        spares = spare_server.SpareServers(isolation, lambda scratch, dist: (["server.py"], [Mount(dist, IN_DIST)]))
        for network in ("/ns/1", "/ns/2", "/ns/3"):
            spares.start_next(network)
            await _settled()
        kept = sorted(str(n) for n in spares._spares)
        await spares.aclose()
        return kept

    assert asyncio.run(scenario()) == ["/ns/2", "/ns/3"]
    assert isolation.started[0].stopped and all(s.stopped for s in isolation.started)


@pytest.mark.parametrize(("overrides", "expected"), [
    ([], (True, True)),
    (["+sandbox.local.spare_server=false"], (True, False)),
    (["+sandbox.local.spare_build=false"], (False, True)),
])
def test_runs_start_servers_and_builds_ahead_unless_the_config_says_otherwise(overrides, expected):
    """On in runs without a key in the config (its hash stays that of earlier runs); an explicit value wins."""
    config = validate_config(compose(["model=oracle", "judge=rules", "actor=none", "tracking=off", *overrides],
                                     project_root=REPO_ROOT))
    sandbox = build_sandbox(config)
    assert (sandbox.settings.spare_build, sandbox.settings.spare_server) == expected
    assert sandbox.isolation.rules().spare_server is expected[1]
    assert "spare_server" not in config.model_dump(mode="json")["sandbox"]["local"] or overrides


# --- real bubblewrap ---------------------------------------------------------------------------------


def _no_hard_links(source, target):
    raise OSError(18, "Invalid cross-device link")


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason=missing("bubblewrap", "bubblewrap is not installed"))
@pytest.mark.parametrize("files", ["linked", "copied"])
def test_a_spare_server_serves_what_a_cold_one_does_and_leaves_nothing_behind(tmp_path, created_cgroups,
                                                                             monkeypatch, files):
    """The same bytes and headers from a spare as from a cold server, its files hard-linked or (across file
    systems) copied; a link in the artifact to a host file resolves inside the sandbox (not found), as in a mounted
    dist, so a spare never serves what the link names; a spare waits niced and unanswering until its go line; on
    close no process, cgroup or folder is left."""
    if files == "copied":
        monkeypatch.setattr(spare_server.os, "link", _no_hard_links)
    spares_dir = tmp_path / "spares"
    spares_dir.mkdir()
    make = tempfile.mkdtemp

    def in_spares_dir(suffix=None, prefix=None, dir=None):
        return make(suffix, prefix, spares_dir if (prefix or "").startswith("genui-spare-serve-") else dir)

    monkeypatch.setattr(scratch.tempfile, "mkdtemp", in_spares_dir)
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    dist = _dist(tmp_path)
    (dist / "leak.txt").symlink_to(secret)

    async def fetch_all(url: str) -> list[tuple[int, str, str]]:
        async with httpx.AsyncClient(trust_env=False, timeout=5) as client:
            answers = []
            for path in ("", "assets/app.js", "leak.txt", "../secret.txt"):
                answer = await client.get(url + path)
                answers.append((answer.status_code, answer.headers.get("content-security-policy", ""), answer.text))
            return answers

    async def scenario():
        cold = LocalSandbox(LocalSandboxSettings())
        spared = LocalSandbox(LocalSandboxSettings(spare_server=True))
        try:
            async with cold.serve(dist) as served:
                reference = await fetch_all(served.url)
            async with spared.serve(dist) as served:
                first = await fetch_all(served.url)
            for _ in range(200):  # the spare is up once its Python waits for the go line
                if spared._spare_serves is not None and spared._spare_serves._spares:
                    break
                await asyncio.sleep(0.05)
            [spare] = spared._spare_serves._spares.values()
            await asyncio.sleep(0.5)  # its imports done
            niceness = [os.getpriority(os.PRIO_PROCESS, pid) for pid in spare.server.cgroups.pids_in()]
            with pytest.raises(httpx.HTTPError):  # waiting: its socket takes the connection, nothing answers
                httpx.get(spare.server.url, timeout=0.5, trust_env=False)
            async with spared.serve(dist) as served:
                assert served.url == spare.server.url
                from_spare = await fetch_all(served.url)
                serving = [os.getpriority(os.PRIO_PROCESS, pid) for pid in spare.server.cgroups.pids_in()]
            return reference, first, from_spare, niceness, serving, spare
        finally:
            await cold.aclose()
            await spared.aclose()

    reference, first, from_spare, niceness, serving, spare = asyncio.run(scenario())
    assert reference[0][0] == 200 and reference[1] == (200, reference[1][1], "1")
    assert [status for status, _, _ in reference[2:]] == [404, 404]
    assert first == reference and from_spare == reference
    assert "host secret" not in "".join(text for _, _, text in from_spare)
    if os.geteuid() == 0:
        assert niceness and set(niceness) == {local.SPARE_NICE} and set(serving) == {0}
    assert not spare.server.alive() and not spare.scratch.exists()
    assert leftover_cgroups(created_cgroups) == []
    assert list(spares_dir.iterdir()) == []  # the spare started by the last serve was stopped on close
