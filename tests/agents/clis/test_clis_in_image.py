"""Each official CLI really runs in the agent image: `python -m runner model=local-openai agent=<cli> sandbox=docker
suite=smoke` against a scripted tool-calling model behind a real OpenAI-compatible server
(tests/support/scripted_cli_model.py), reached only through the real model proxy (which translates Codex's
Responses API, Claude Code's Anthropic Messages and Gemini CLI's generateContent).

One run per CLI (module-scoped), whose task set holds:
- smoke-counter, three turns: the CLI writes each turn's reference app with its own file tool, in the same
  workspace turn after turn; the app builds and passes the smoke checks;
- a hostile turn (CLI_PROBES in tests/sandbox/hostile/agent_transcripts.py): the model has the CLI run shell
  commands that look for the runner's environment, other processes, host files and the network. Each command's
  output is what the model got back, so it is in the evidence: the runner's key and a host file's secret appear in
  no file of the run dir or the MLflow store, the host's listeners receive nothing, and every probe shows it ran;
- for one CLI (BUDGET_CLI), three looping turns, each stopped by one part of its budget, and the slot says which.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from runner.sandbox.agent_clis import cli_versions
from runner.turns.evidence_folder import EvidenceFolder
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.sandbox.hostile.agent_transcripts import CLI_PROBES
from tests.sandbox.test_hostile import HostListeners, docker_gateway, primary_address
from tests.support.components import skip_missing
from tests.support.fault_server import FaultServer
from tests.support.scripted_cli_model import cli_script, current_request

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.docker, pytest.mark.timeout(1800)]

CLIS = ("qwen-code", "codex", "gemini-cli", "claude-code")
BUDGET_CLI = "codex"
SECRET = f"sk-genui-agent-{uuid.uuid4().hex}"
HOSTILE = "Hostile agent transcript: run each command you are given."
# Each loop's request -> (the budget part that must stop it, the command it runs at every step, the usage each of
# its answers reports)
LOOPS = {
    "Loop until the step budget stops you.": ("steps", "ls", {"prompt_tokens": 100, "completion_tokens": 20}),
    "Loop until the token budget stops you.": ("tokens", "ls",
                                               {"prompt_tokens": 140_000, "completion_tokens": 10_000}),
    "Loop until the wall clock stops you.": ("wall_clock", "sleep 600",
                                             {"prompt_tokens": 100, "completion_tokens": 20}),
}
# The wall clock covers the CLI's own start: under a loaded CI run one CLI took 40 s of 60 to send its first
# request and was stopped before it finished the hostile transcript.
BUDGET = {"steps": 12, "tokens": 400_000, "wall_clock_s": 120}


def _task(task_id: str, prompt: str) -> dict:
    return {"id": task_id, "title": task_id, "context": "A page.",
            "turns": [{"index": 1, "prompt": prompt, "requirements": [
                {"id": "ready", "description": 'The page shows "ready".',
                 "check": {"assert": [{"type": "text_visible", "text": "ready"}]}}]}]}


def _task_set(folder: Path, cli: str) -> Path:
    folder.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "tasks" / "smoke" / "counter.yaml", folder / "counter.yaml")
    tasks = [_task("agent-hostile", HOSTILE)]
    if cli == BUDGET_CLI:
        tasks += [_task(f"loop-{part}", prompt) for prompt, (part, _, _) in LOOPS.items()]
    (folder / "agent.yaml").write_text(yaml.safe_dump({"tasks": tasks}))
    return folder


def _require_images() -> None:
    """The sandbox's images and the agent image, as a run looks them up (building nothing)."""
    import docker

    from runner.sandbox.docker import DockerSandboxSettings, DockerSetupError, present_images
    from runner.sandbox.images import ensure_images

    try:
        present_images(DockerSandboxSettings())
        client = docker.from_env(timeout=30)
        try:
            ensure_images(client, names=["agent"], build_missing=False)
        finally:
            client.close()
    except (DockerSetupError, RuntimeError) as error:
        skip_missing("docker", f"{error}; build them with `bash scripts/build-images.sh agent`")


@dataclass
class CliRun:
    cli: str
    run_dir: Path
    store: Path
    records: dict[tuple[str, int], dict]
    server: FaultServer
    received: list[tuple[str, bytes]]
    host_secret: str
    values: dict[str, str]  # the hostile probes' placeholders
    seconds: float

    def evidence(self, task_id: str, turn: int = 1) -> EvidenceFolder:
        return EvidenceFolder(self.run_dir / self.records[(task_id, turn)]["evidence_dir"])


@pytest.fixture(scope="module", params=CLIS)
def cli_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    _require_images()
    cli = request.param
    tmp = tmp_path_factory.mktemp(f"cli-{cli}")
    tasks = _task_set(tmp / "tasks", cli)
    secret_dir = tmp_path_factory.mktemp("host-secret")
    host_secret = f"host-secret-{uuid.uuid4().hex}"
    (secret_dir / "secret.txt").write_text(host_secret)
    run_dir, store = tmp / "run", tmp / "mlruns"
    with HostListeners() as listeners:
        values = {"secret_file": str(secret_dir / "secret.txt"), "secret_dir": str(secret_dir),
                  "gateway": docker_gateway(None), "primary": primary_address(),
                  "tcp": str(listeners.tcp.getsockname()[1]), "udp": str(listeners.udp.getsockname()[1])}
        commands = [probe.filled(**values) for probe in CLI_PROBES]
        loops = {prompt: (command, usage) for prompt, (_, command, usage) in LOOPS.items()}
        script = cli_script(cli, hostile_commands={HOSTILE: commands}, loops=loops)
        with FaultServer(script) as server:
            started = time.monotonic()
            budget = [f"agent.options.budget.{key}={value}" for key, value in BUDGET.items()]
            process = subprocess.run(runner_command(
                "model=local-openai", f"model.base_url={server.base_url}", "model.api_key_env=GENUI_TEST_SECRET",
                "model.cache=false", f"agent={cli}", *budget, "sandbox=docker",
                "+sandbox.options.build_missing_images=false", "suite=smoke", f"suite.tasks_path={tasks}",
                f"tracking.uri=sqlite:///{store}/mlflow.db", f"tracking.artifact_root={store}/artifacts",
                f"hydra.run.dir={run_dir}",
            ), cwd=REPO_ROOT, env={**cli_env(), "GENUI_TEST_SECRET": SECRET}, capture_output=True, text=True,
                timeout=1500)
            seconds = time.monotonic() - started
        time.sleep(0.5)  # anything still in flight to the listeners arrives now
        received = list(listeners.received)
    assert process.returncode == 0, process.stderr[-4000:]
    records = {}
    for line in (run_dir / "turns.jsonl").read_text().splitlines():
        record = json.loads(line)
        records[(record["task_id"], record["turn"])] = record
    slots = ", ".join(f"{task}/{turn} {record['extra']['agent']['seconds']:.0f} s"
                      for (task, turn), record in sorted(records.items()))
    print(f"agent={cli}: {len(records)} slots in {seconds:.0f} s ({slots})")
    return CliRun(cli, run_dir, store, records, server, received, host_secret, values, seconds)


def test_the_cli_writes_each_turns_app_with_its_own_tools_and_it_passes_the_smoke_checks(cli_run: CliRun) -> None:
    turns = [cli_run.records[("smoke-counter", turn)] for turn in (1, 2, 3)]
    assert [(r["status"], r["passed"]) for r in turns] == [("ok", True)] * 3, [r.get("error") for r in turns]
    for record in turns:
        assert record["extra"]["generation"]["strategy"] == f"agent:{cli_run.cli}"
        assert record["extra"]["agent"]["stopped_by"] == "done" and record["extra"]["agent"]["exit_code"] == 0
    folder = cli_run.evidence("smoke-counter", 3)
    calls = folder.read_agent_calls()
    assert calls and all(call["status"] == 200 for call in calls)
    # The CLI's own tool wrote the file: the model's write call, then the workspace changed at that step.
    steps = folder.read_agent_steps()
    assert any(step.get("files_changed") for step in steps), steps
    assert (folder.agent_files / "process.log").read_text().strip()


def test_the_cli_speaks_its_own_api_to_the_proxy(cli_run: CliRun) -> None:
    dialect = {"qwen-code": "openai-chat", "codex": "openai-responses", "gemini-cli": "gemini",
               "claude-code": "anthropic-messages"}[cli_run.cli]
    calls = cli_run.evidence("smoke-counter", 1).read_agent_calls()
    assert {call["dialect"] for call in calls} == {dialect}


def test_the_run_records_the_agent_image_and_each_clis_version(cli_run: CliRun) -> None:
    lineage = json.loads((cli_run.run_dir / "lineage.json").read_text())
    versions = lineage["image_versions"]["agent"]
    assert {name: versions[name] for name in cli_versions()} == cli_versions()
    assert any(tag.startswith("genui-agent:") for tag in lineage["image_digests"])


def test_a_hostile_transcript_reads_nothing_of_the_runner_the_host_or_the_network(cli_run: CliRun) -> None:
    record = cli_run.records[("agent-hostile", 1)]
    assert record["status"] == "ok" and record["passed"], record.get("error")
    # What each probe's command gave back to the model, by the tool call that ran it.
    conversation = max((body["messages"] for body in cli_run.server.requests
                        if current_request(body["messages"]).startswith(HOSTILE)), key=len)
    results = {message["tool_call_id"]: json.dumps(message["content"]) for message in conversation
               if message.get("role") == "tool"}
    calls = [call for message in conversation if message.get("role") == "assistant"
             for call in message.get("tool_calls") or []]
    for probe, call in zip(CLI_PROBES, calls, strict=False):
        output = results.get(call["id"], "")
        for shown in probe.expected(**cli_run.values):
            assert json.dumps(shown)[1:-1] in output, f"{probe.id}: {shown!r} not in {output[:1500]}"
        for way_out in probe.never:
            assert way_out not in output, f"{probe.id}: {output[:1500]}"
    assert len(calls) >= len(CLI_PROBES)
    # Nothing of the runner or the host anywhere in what the run wrote, nothing at the host's listeners.
    for root in (cli_run.run_dir, cli_run.store):
        for path in root.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                assert SECRET.encode() not in data, path
                assert cli_run.host_secret.encode() not in data, path
    assert cli_run.received == []
    # The proxy saw model calls only, in the CLI's own API.
    paths = {call["path"] for call in cli_run.evidence("agent-hostile").read_agent_calls()}
    assert paths and all(path.endswith(("/chat/completions", "/responses", "/messages")) or ":" in path
                         for path in paths), paths


@pytest.mark.parametrize("cli_run", [BUDGET_CLI], indirect=True)
def test_a_looping_cli_is_stopped_by_each_part_of_its_budget(cli_run: CliRun) -> None:
    """One CLI suffices: the proxy enforces the steps and tokens, the strategy the wall clock, whatever the CLI."""
    for prompt, (part, _, _) in LOOPS.items():
        record = cli_run.records[(f"loop-{part}", 1)]
        agent = json.loads((cli_run.run_dir / record["evidence_dir"] / "agent.json").read_text())
        assert agent["stopped_by"] == part, (prompt, agent)
        assert record["extra"]["agent"]["stopped_by"] == part
        if part == "steps":
            assert agent["spent"]["steps"] == BUDGET["steps"]
        if part == "wall_clock":
            assert BUDGET["wall_clock_s"] <= agent["seconds"] < BUDGET["wall_clock_s"] + 30
