"""Hostile agent transcripts (tests/sandbox/hostile/agent_transcripts.py) against the built-in agent, in both
sandboxes: one real run per sandbox, the runner started with an API key in its environment, each case one slot
whose model (a scripted tool-calling server) asks the agent's tools for the runner's environment, /proc, the
host's files, the run dir or the network. Each gets nothing: its results are refusals or harmless, nothing secret
comes back to the model or into the evidence, nothing is written outside the workspace, the host's listener
receives nothing, and every slot is recorded once (no infra).
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.turns.evidence_folder import EvidenceFolder
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.sandbox.hostile.agent_transcripts import BUILTIN_CASES, AgentCase
from tests.sandbox.test_hostile import HostListeners, _docker_overrides, docker_gateway
from tests.support.scripted_agent_model import answer, assistant_turns, scripted_server, tool_call

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox, pytest.mark.timeout(2400)]

SECRET = f"sk-genui-hostile-agent-{uuid.uuid4().hex}"
PROMPT_PREFIX = "hostile agent case "
LEAKS = ("root:x:0:0", "PATH=/", "GENUI_TEST_SECRET", "sk-genui-hostile")  # what must never come back
ESCAPES = (Path("/tmp/genui-agent-escape.txt"),)


def _task_set(folder: Path) -> Path:
    tasks = [{"id": f"agent-{case.id}", "title": case.id, "context": "A page.",
              "turns": [{"index": 1, "prompt": f"{PROMPT_PREFIX}{case.id}", "requirements": [
                  {"id": "ready", "description": 'The page shows "ready".',
                   "check": {"assert": [{"type": "text_visible", "text": "ready"}]}}]}]} for case in BUILTIN_CASES]
    folder.mkdir(parents=True)
    (folder / "hostile.yaml").write_text(yaml.safe_dump({"tasks": tasks}))
    return folder


def _script(listeners: HostListeners, label: str | None):
    def script(messages: list[dict[str, Any]]) -> tuple[int, str]:
        text = json.dumps(messages)
        case = next((case for case in BUILTIN_CASES if f"{PROMPT_PREFIX}{case.id}\\n" in text
                     or f"{PROMPT_PREFIX}{case.id}\"" in text), None)
        if case is None:
            return 500, json.dumps({"error": {"message": "unknown case"}})
        step = assistant_turns(messages)
        if step >= len(case.calls):
            return answer("Done.")
        name, _ = case.calls[step]
        arguments = case.arguments(step, tcp=listeners.tcp.getsockname()[1], gateway=docker_gateway(label))
        call = tool_call(name)
        call["function"]["arguments"] = arguments
        return answer("", [call])

    return script


@dataclass
class AgentRun:
    sandbox: str
    run_dir: Path
    records: dict[str, dict]
    received: list[tuple[str, bytes]]
    requests: list[dict]
    process: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def agent_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AgentRun:
    label = f"hostile-agent-{uuid.uuid4().hex[:8]}" if request.param == "docker" else None
    sandbox = ["sandbox=local", "browser.memory_mb=1024"] if label is None else _docker_overrides(label)
    tmp = tmp_path_factory.mktemp(f"hostile-agent-{request.param}")
    run_dir = tmp / "run"
    for escape in ESCAPES:
        escape.unlink(missing_ok=True)
    with HostListeners() as listeners, scripted_server(_script(listeners, label)) as server:
        started = time.monotonic()
        process = subprocess.run(runner_command(
            "model=local-openai", f"model.base_url={server.base_url}", "model.api_key_env=GENUI_TEST_SECRET",
            "model.cache=false", "agent=builtin", "suite=smoke", f"suite.tasks_path={_task_set(tmp / 'tasks')}",
            "actor=none", "judge=rules", "tracking=off", f"hydra.run.dir={run_dir}", *sandbox,
        ), cwd=REPO_ROOT, env={**cli_env(), "GENUI_TEST_SECRET": SECRET}, capture_output=True, text=True,
            timeout=1800)
        time.sleep(0.5)  # anything still in flight to the listener arrives now
        requests = list(server.requests)
        received = list(listeners.received)
    assert process.returncode == 0, process.stderr[-4000:]
    print(f"hostile agent transcripts, sandbox={request.param}: {time.monotonic() - started:.0f} s")
    records = {}
    for line in (run_dir / "turns.jsonl").read_text().splitlines():
        record = json.loads(line)
        records[record["task_id"].removeprefix("agent-")] = record
    return AgentRun(request.param, run_dir, records, received, requests, process)


def _steps(run: AgentRun, case: AgentCase) -> list[dict]:
    return EvidenceFolder(run.run_dir / run.records[case.id]["evidence_dir"]).read_agent_steps()


@pytest.mark.parametrize("case", BUILTIN_CASES, ids=[case.id for case in BUILTIN_CASES])
def test_every_tool_call_gets_nothing(agent_run: AgentRun, case: AgentCase) -> None:
    steps = _steps(agent_run, case)
    results = [call for step in steps for call in step["tool_calls"]]
    assert [call["name"] for call in results] == [name for name, _ in case.calls]
    if case.refused:
        assert all(not call["ok"] and call["result"].startswith("error:") for call in results), results
    text = json.dumps(results)
    for leak in LEAKS:
        assert leak not in text, (leak, text[:2000])
    assert agent_run.records[case.id]["extra"]["agent"]["stopped_by"] == "done"


def test_the_page_the_agent_looked_at_reached_nothing(agent_run: AgentRun) -> None:
    case = next(case for case in BUILTIN_CASES if case.id == "network-page")
    view = _steps(agent_run, case)[1]["tool_calls"][0]
    assert view["name"] == "view_page" and view["ok"] and "ready" in view["result"]
    assert agent_run.records["network-page"]["status"] == "ok"
    assert agent_run.received == []


def test_nothing_was_written_outside_and_every_slot_is_recorded_once(agent_run: AgentRun) -> None:
    assert sorted(agent_run.records) == sorted(case.id for case in BUILTIN_CASES)
    assert all(record["status"] != "infra" for record in agent_run.records.values())
    assert not any(escape.exists() for escape in ESCAPES)
    assert not list(agent_run.run_dir.rglob("genui-agent-escape.txt"))
    assert (agent_run.run_dir / "turns.jsonl").stat().st_size > 0


def test_nothing_secret_reached_the_model_or_the_run_dir(agent_run: AgentRun) -> None:
    sent = json.dumps(agent_run.requests)
    for leak in LEAKS:
        assert leak not in sent, leak
    needle = SECRET.encode()
    leaks = [path for path in agent_run.run_dir.rglob("*")
             if path.is_file() and not path.is_symlink() and needle in path.read_bytes()]
    assert leaks == []
    assert SECRET not in agent_run.process.stdout + agent_run.process.stderr
