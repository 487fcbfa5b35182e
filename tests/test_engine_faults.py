"""Faults in one episode never stop the others, and each lands in its own bucket."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from runner.models.parse import render_json_output
from runner.suites.native import load_native_tasks
from tests.conftest import REPO_ROOT
from tests.support.fault_server import FaultServer, completion
from tests.test_main import _records, _run

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]

TASKS = {task.title: task for task in load_native_tasks(REPO_ROOT / "tasks" / "smoke", suite="smoke")}


def behaviour(messages: list[dict]) -> tuple[int, str | None]:
    user = messages[-1]["content"]
    turn = int(re.search(r"Current request \(turn (\d+)\)", user).group(1))
    if "step counter" in user.lower() or "Count:" in user:
        # Broken JSX: the build fails, so later turns of this episode are blocked.
        return 200, completion(render_json_output("here", {"src/App.jsx": "export default function App( {"}))
    if "task list" in user.lower():
        return 500, json.dumps({"error": {"message": "overloaded"}})
    task = TASKS["Temperature converter"]
    return 200, completion(render_json_output("ok", task.turn(turn).reference_files))


def test_faulty_episodes_do_not_stop_the_others(tmp_path: Path) -> None:
    with FaultServer(behaviour) as server:
        result = _run(
            "model=local-openai", f"model.base_url={server.base_url}", "model.max_retries=1",
            "+model.retry_base_s=0.01", "model.cache=false", "tracking=off", f"hydra.run.dir={tmp_path / 'run'}",
        )
    assert result.returncode == 0, result.stderr[-3000:]
    by_slot = {(r["task_id"], r["turn"]): r for r in _records(tmp_path / "run")}
    assert len(by_slot) == 9
    assert by_slot[("smoke-counter", 1)]["status"] == "build_failed"
    assert "App.jsx" in by_slot[("smoke-counter", 1)]["error"] or by_slot[("smoke-counter", 1)]["error"]
    assert [by_slot[("smoke-counter", t)]["status"] for t in (2, 3)] == ["blocked", "blocked"]
    assert by_slot[("smoke-todo", 1)]["status"] == "provider_error"
    assert by_slot[("smoke-todo", 1)]["model_responded"] is False
    assert [by_slot[("smoke-converter", t)]["passed"] for t in (1, 2, 3)] == [True, True, True]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["turn_pass"] == pytest.approx(3 / 9)
