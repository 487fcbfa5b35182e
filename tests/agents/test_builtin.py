"""The built-in agent end to end: `python -m runner model=local-openai agent=builtin suite=smoke` with a scripted
tool-calling model behind a real HTTP server (tests/support/scripted_agent_model.py). The agent writes each turn's
app through its tools in the workspace, builds and looks at it; the run builds, serves, acts on and judges the
workspace like any answer, and the smoke checks pass. Every step is in the slot's evidence, every model call is an
MLflow trace, and a looping agent is stopped by its budget with the slot recording why.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mlflow import MlflowClient

from runner.turns.evidence_folder import EvidenceFolder
from tests.conftest import REPO_ROOT, cli_env, runner_command
from runner.suites.native import load_native_tasks
from tests.support.scripted_agent_model import looping, scripted_server, working_app

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]

TASKS = load_native_tasks(REPO_ROOT / "tasks" / "smoke", suite="smoke")
AGENT = ["model=local-openai", "model.cache=false", "agent=builtin", "suite=smoke", "suite.task_ids=[smoke-counter]"]


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def working_run(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("builtin")
    with scripted_server(working_app) as server:
        result = subprocess.run(runner_command(
            *AGENT, f"model.base_url={server.base_url}", f"tracking.uri=sqlite:///{tmp}/mlflow.db",
            f"tracking.artifact_root={tmp}/artifacts", f"hydra.run.dir={tmp / 'run'}"),
            cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    return tmp / "run", tmp, server


def test_the_agents_workspace_is_built_served_and_passes_the_smoke_checks(working_run) -> None:
    run_dir, _, _ = working_run
    records = _records(run_dir)
    assert [(r["turn"], r["status"], r["passed"]) for r in records] == [(1, "ok", True), (2, "ok", True),
                                                                        (3, "ok", True)]
    for record in records:
        assert record["extra"]["generation"]["strategy"] == "agent:builtin"
        assert record["extra"]["agent"]["stopped_by"] == "done" and record["extra"]["agent"]["steps"] == 5
        assert record["usage"] == {"prompt_tokens": 500, "completion_tokens": 100}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["run"]["agent"] == "builtin"


def test_each_step_its_tool_calls_files_build_and_screenshot_are_evidence(working_run) -> None:
    run_dir, _, server = working_run
    folder = EvidenceFolder(run_dir / "evidence" / "smoke-counter" / "1")
    steps = folder.read_agent_steps()
    assert [[call["name"] for call in step["tool_calls"]] for step in steps] == [
        ["list_files", "read_file"], ["write_file"], ["run_build"], ["view_page"], []]
    assert steps[1]["files_changed"] == {"modified": ["src/App.jsx"]}
    build = steps[2]["tool_calls"][0]
    assert build["build"] == {"ok": True, "status": "ok"} and "the build succeeded" in build["result"]
    assert (folder.agent_files / build["build_log"]).read_text().strip()
    view = steps[3]["tool_calls"][0]
    assert (folder.agent_files / view["screenshot"]).read_bytes().startswith(b"\x89PNG")
    assert "Count: 0" in view["result"]
    # The answer's own build is the agent's last one (never built twice), and the answer is the workspace's.
    assert folder.build_log.read_text() == (folder.agent_files / build["build_log"]).read_text()
    counter = next(task for task in TASKS if task.id == "smoke-counter")
    assert (folder.sources / "src" / "App.jsx").read_text() == counter.turn(1).reference_files["src/App.jsx"]
    calls = folder.read_agent_calls()
    assert [call["status"] for call in calls] == [200] * 5 and all(call["usage"] for call in calls)
    # The model takes no images (local-openai: vision false): the screenshot stays in the evidence.
    assert "image_url" not in json.dumps(server.requests)
    assert not folder.agent_workspace.exists()  # scratch, removed once the slot is executed


def test_the_next_turn_continues_in_the_workspace_the_last_one_left(working_run) -> None:
    run_dir, _, _ = working_run
    first = EvidenceFolder(run_dir / "evidence" / "smoke-counter" / "1")
    second = EvidenceFolder(run_dir / "evidence" / "smoke-counter" / "2")
    read = second.read_agent_steps()[0]["tool_calls"][1]
    assert read["name"] == "read_file" and read["result"] == (first.sources / "src" / "App.jsx").read_text()


def test_every_agent_call_is_an_mlflow_trace_of_the_generator(working_run) -> None:
    _, tmp, _ = working_run
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp}/mlflow.db")
    experiment = client.get_experiment_by_name("genui-runner").experiment_id
    traces = client.search_traces(locations=[experiment], filter_string="tag.`genui.role` = 'generator'",
                                  max_results=100)
    assert len(traces) == 15  # 5 calls in each of the 3 turns
    text = json.dumps([trace.data.spans[0].outputs for trace in traces], default=str)
    assert "[tool call] write_file(" in text


def test_a_looping_agent_stopped_by_its_steps_is_recorded_as_such(tmp_path: Path) -> None:
    with scripted_server(looping) as server:
        result = subprocess.run(runner_command(
            *AGENT, f"model.base_url={server.base_url}", "agent.options.budget.steps=3", "tracking=off",
            f"hydra.run.dir={tmp_path / 'run'}"), cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True,
            timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    records = _records(tmp_path / "run")
    assert [(r["turn"], r["status"]) for r in records] == [(1, "invalid_output"), (2, "blocked"), (3, "blocked")]
    assert records[0]["extra"]["agent"]["stopped_by"] == "steps" and records[0]["extra"]["agent"]["steps"] == 3
    assert "no answer in its workspace" in records[0]["error"] and server.calls == 3


def test_the_viewers_turn_page_shows_the_agents_steps(working_run) -> None:
    from fastapi.testclient import TestClient

    from runner.view.app import ViewState, create_app
    from runner.view.catalog import Catalog

    run_dir, _, _ = working_run
    catalog = Catalog.from_paths([run_dir])
    [run] = catalog.runs.values()
    page = TestClient(create_app(ViewState(catalog))).get(f"/runs/{run.id}/tasks/smoke-counter/turns/2").text
    assert 'id="agent-stopped-by">done<' in page and "5 step(s)" in page
    for tool in ("list_files", "read_file", "write_file", "run_build", "view_page"):
        assert f"<code>{tool}</code>" in page
    assert "agent_files/step3-1.build.log" in page and "agent_files/step4-1.png" in page
