"""Model calls as MLflow traces in a real sqlite store: searchable, linked to their task's run, with role,
token usage and latency; and the experiment tagged for the MLflow UI's traces view."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mlflow import MlflowClient

from runner.tracking import traces as tracking_traces
from runner.run.validation import validate_config
from runner.config import RunnerConfig
from runner.judges.registry import build_judge
from runner.models.base import GenerationRequest
from runner.models.parse import render_json_output
from runner.run.roles import RunRoles
from runner.suites.native import load_native_tasks
from runner.tracking.tracker import Tracker, TrackingSettings
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.support.fault_server import FaultServer, completion

TASKS = load_native_tasks(REPO_ROOT / "tasks" / "smoke", suite="smoke")


def answer_with_references(messages: list[dict[str, Any]]) -> tuple[int, str]:
    """A model that answers every smoke turn with the task's reference solution (over real HTTP)."""
    user = messages[-1]["content"]
    number = int(re.search(r"Current request \(turn (\d+)\)", user).group(1))
    for task in TASKS:
        turn = task.turn(number)
        if turn.prompt in user:
            return 200, completion(render_json_output("done", turn.reference_files))
    return 500, json.dumps({"error": {"message": "unknown task"}})


@pytest.fixture(scope="module")
def traced_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, MlflowClient, str]:
    tmp = tmp_path_factory.mktemp("traced")
    with FaultServer(answer_with_references) as server:
        result = subprocess.run(
            runner_command("model=local-openai", f"model.base_url={server.base_url}", "model.cache=false",
                           f"tracking.uri=sqlite:///{tmp}/mlflow.db", f"tracking.artifact_root={tmp}/artifacts",
                           f"hydra.run.dir={tmp / 'run'}"),
            cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=600,
        )
    assert result.returncode == 0, result.stderr[-3000:]
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp}/mlflow.db")
    return tmp, client, client.get_experiment_by_name("genui-runner").experiment_id




@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.build
@pytest.mark.sandbox
def test_every_generator_call_is_a_trace_linked_to_its_task_run(traced_run) -> None:
    tmp, client, experiment_id = traced_run
    traces = client.search_traces(locations=[experiment_id], max_results=100)
    assert len(traces) == 9  # 3 smoke tasks x 3 turns, one generator call each
    runs = client.search_runs([experiment_id])
    task_runs = {run.data.tags["genui.task_id"]: run.info.run_id for run in runs if "genui.task_id" in run.data.tags}
    job_run = next(run.info.run_id for run in runs if "mlflow.parentRunId" not in run.data.tags)
    for trace in traces:
        tags, metadata = trace.info.tags, trace.info.trace_metadata
        assert tags["genui.role"] == "generator" and tags["genui.model"] == "local-openai"
        assert metadata["mlflow.sourceRun"] == task_runs[tags["genui.task_id"]]
        assert metadata["mlflow.trace.session"] == f"{job_run}/{tags['genui.task_id']}"
        assert trace.info.token_usage == {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}
        assert trace.info.execution_duration is not None and trace.info.execution_duration >= 0
        assert trace.info.state.value == "OK"
        (span,) = trace.data.spans
        assert span.span_type == "CHAT_MODEL" and span.attributes["genui.latency_s"] >= 0
        assert "Current request (turn" in span.inputs["messages"][-1]["content"]
        assert '"files"' in span.outputs["choices"][0]["message"]["content"] or "App" in span.outputs["choices"][0]["message"]["content"]
    counter = client.search_traces(locations=[experiment_id], run_id=task_runs["smoke-counter"])
    assert sorted(int(t.info.tags["genui.turn"]) for t in counter) == [1, 2, 3]
    by_role = client.search_traces(locations=[experiment_id], filter_string="tag.`genui.role` = 'generator'")
    assert len(by_role) == 9


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.build
@pytest.mark.sandbox
def test_experiment_with_traces_lands_on_them(traced_run) -> None:
    _, client, experiment_id = traced_run
    tags = client.get_experiment(experiment_id).tags
    assert tags[tracking_traces.EXPERIMENT_KIND_TAG] == tracking_traces.KIND_GENAI


def _config_with_judge(model: dict[str, Any]) -> RunnerConfig:
    return validate_config({
        "model": {"name": "oracle", "provider": "oracle"}, "suite": {"name": "smoke"},
        "judge": {"name": "local-llm", "kind": "llm", "options": {"model": model}},
        "actor": {"name": "none", "kind": "none"}, "sandbox": {"name": "local", "kind": "local"},
        "project_root": str(REPO_ROOT),
    })


def test_judge_calls_are_traced_with_their_role_and_task(tmp_path: Path) -> None:
    settings = TrackingSettings(uri=f"sqlite:///{tmp_path}/mlflow.db", artifact_root=str(tmp_path / "artifacts"))
    tracker = Tracker.open(settings, project_root=tmp_path)
    assert isinstance(tracker, Tracker)
    kinds = tracker.client.get_experiment(tracker.experiment_id).tags
    assert kinds[tracking_traces.EXPERIMENT_KIND_TAG] == tracking_traces.KIND_RUNS  # runs only, so far
    screenshot = "data:image/png;base64," + "A" * 4000
    with FaultServer(lambda messages: (200, completion("looks right"))) as server:
        config = _config_with_judge({"name": "judge-llm", "provider": "openai", "model": "local",
                                     "base_url": server.base_url, "cache": False, "max_retries": 0})
        roles = RunRoles(config, cache=None, log_dir=tmp_path / "servers", traced=True)
        roles.trace_to(tracker.log_model_call)
        judge = build_judge(config.judge, model=roles.model("judge"))  # the judge calls the run's traced model
        messages = [{"role": "user", "content": [{"type": "text", "text": "rate this"},
                                                 {"type": "image_url", "image_url": {"url": screenshot}}]}]
        request = GenerationRequest(task_id="task-a", turn=2, messages=messages)
        assert asyncio.run(roles.model("judge").generate(request)).text == "looks right"
        asyncio.run(judge.aclose())
    tracker.finish()
    (trace,) = tracker.client.search_traces(locations=[tracker.experiment_id])
    assert trace.info.tags["genui.role"] == "judge" and trace.info.tags["genui.turn"] == "2"
    assert trace.info.trace_metadata["mlflow.sourceRun"] == tracker.task_run("task-a")
    image = trace.data.spans[0].inputs["messages"][0]["content"][1]["image_url"]["url"]
    assert image.startswith("[image/png image, 3000 bytes") and "AAAA" not in image  # screenshots stay in evidence
    kinds = tracker.client.get_experiment(tracker.experiment_id).tags
    assert kinds[tracking_traces.EXPERIMENT_KIND_TAG] == tracking_traces.KIND_GENAI


def test_a_kind_chosen_in_the_ui_is_kept(tmp_path: Path) -> None:
    settings = TrackingSettings(uri=f"sqlite:///{tmp_path}/mlflow.db", artifact_root=str(tmp_path / "artifacts"))
    first = Tracker.open(settings, project_root=tmp_path)
    first.finish()
    first.client.set_experiment_tag(first.experiment_id, tracking_traces.EXPERIMENT_KIND_TAG, "finetuning")
    first.client.delete_experiment_tag(first.experiment_id, tracking_traces.KIND_SOURCE_TAG)
    second = Tracker.open(settings, project_root=tmp_path)
    second.finish()
    assert second.client.get_experiment(second.experiment_id).tags[tracking_traces.EXPERIMENT_KIND_TAG] == "finetuning"
