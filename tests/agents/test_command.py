"""The command-agent seam end to end, in both sandboxes: an agent that is a command (tests/support/agent_kinds:
node_agent.mjs, shaped as the official CLIs are: its own loop, streamed chat completions, file tools of its own)
runs confined in the slot's workspace, reaches the model only through the proxy's socket and the relay, and the
workspace it leaves builds and passes the smoke checks. Before working it tries the ways out (the runner's
environment, /proc, host files, a TCP connection to the host and beyond): it gets nothing.
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path

import pytest

from runner.turns.evidence_folder import EvidenceFolder
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.sandbox.test_hostile import HostListeners, _docker_overrides
from tests.support.scripted_agent_model import scripted_server, working_app

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]

KINDS = REPO_ROOT / "tests" / "support" / "agent_kinds"
SECRET = f"sk-genui-command-agent-{uuid.uuid4().hex}"


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def command_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp(f"command-{request.param}")
    sandbox = ["sandbox=local"] if request.param == "local" else _docker_overrides(f"agent-{uuid.uuid4().hex[:8]}")
    marker = tmp / "host-file.txt"
    marker.write_text(f"HOST FILE {SECRET}")
    with HostListeners() as listeners, scripted_server(working_app) as server:
        result = subprocess.run(runner_command(
            "model=local-openai", f"model.base_url={server.base_url}", "model.cache=false",
            "model.api_key_env=GENUI_TEST_SECRET", f"hydra.searchpath=[file://{KINDS / 'conf'}]",
            "+plugins=[tests.support.agent_kinds.node_agent]", "agent=node-agent", "+agent.options.probe=true",
            f"+agent.options.probe_port={listeners.tcp.getsockname()[1]}", f"+agent.options.probe_file={marker}",
            "suite=smoke",
            "suite.task_ids=[smoke-counter]", "tracking=off", f"hydra.run.dir={tmp / 'run'}", *sandbox),
            cwd=REPO_ROOT, env={**cli_env(), "GENUI_TEST_SECRET": SECRET}, capture_output=True, text=True,
            timeout=900)
        received = list(listeners.received)
    assert result.returncode == 0, result.stderr[-4000:]
    records = [json.loads(line) for line in (tmp / "run" / "turns.jsonl").read_text().splitlines()]
    return tmp / "run", records, received, server, marker


def test_the_commands_workspace_builds_and_passes_the_smoke_checks(command_run) -> None:
    run_dir, records, _, server, _ = command_run
    assert [(r["turn"], r["status"], r["passed"]) for r in records] == [(1, "ok", True), (2, "ok", True),
                                                                        (3, "ok", True)]
    for record in records:
        assert record["extra"]["agent"] | {"seconds": 0, "model_seconds": 0} == {
            "kind": "node-agent", "stopped_by": "done", "calls": 5, "steps": 5, "tokens": 600, "exit_code": 0,
            "seconds": 0, "model_seconds": 0}
    assert server.calls == 15 and all(request.get("stream") is not True for request in server.requests)


def test_its_transcript_comes_from_the_proxys_records(command_run) -> None:
    run_dir, records, _, _, _ = command_run
    folder = EvidenceFolder(run_dir / records[0]["evidence_dir"])
    steps = folder.read_agent_steps()
    assert [[call["name"] for call in step["tool_calls"]] for step in steps] == [
        ["list_files", "read_file"], ["write_file"], ["run_build"], ["view_page"], []]
    assert steps[1]["files_changed"] == {"modified": ["src/App.jsx"]}
    assert steps[1]["tool_calls"][0]["result"] == "wrote src/App.jsx"
    assert all(call["stream"] for call in folder.read_agent_calls())  # it asked for streams, as the CLIs do
    assert steps[-1]["assistant"] == "Done: the app is in src/."
    assert "done: Done: the app is in src/." in (folder.agent_files / "process.log").read_text()


def test_it_got_nothing_of_the_runner_the_host_or_the_network(command_run) -> None:
    run_dir, records, received, _, marker = command_run
    log = (EvidenceFolder(run_dir / records[0]["evidence_dir"]).agent_files / "process.log").read_text()
    probes = json.loads(re.search(r"^PROBES (.*)$", log, re.M).group(1))
    assert SECRET not in json.dumps(probes)
    assert probes[str(marker)].startswith("error") and probes["/root/.bash_history"].startswith("error")
    if "docker" not in run_dir.parent.name:  # bubblewrap: no /etc at all (docker: the image's own)
        assert probes["/etc/passwd"].startswith("error")
    assert "GENUI_TEST_SECRET" not in probes["env"] and "OPENAI_API_KEY" in probes["env"]
    assert probes["tcp_host"] != "connected" and probes["tcp_out"] != "connected"
    assert received == []
    leaks = [path for path in run_dir.rglob("*") if path.is_file() and SECRET.encode() in path.read_bytes()]
    assert leaks == []
