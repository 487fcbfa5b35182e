"""What issue #4 must show, through the command line: own tasks, official samples, null model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.models.parse import render_json_output
from tests.conftest import REPO_ROOT, SHARED
from tests.support.fault_server import FaultServer, completion
from tests.test_main import _records, _run

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]

OFFICIAL = SHARED / "formats" / "evogenui"
OWN_TASKS = sorted((REPO_ROOT / "tasks" / "evogenui").glob("*.json"))


def test_oracle_passes_every_turn_of_the_own_tasks(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = _run("suite=evogenui", "model=oracle", "judge=rules", "tracking=off", f"hydra.run.dir={run_dir}",
                  timeout=1500)
    assert result.returncode == 0, result.stderr[-3000:]
    records = _records(run_dir)
    assert len(OWN_TASKS) >= 9
    assert len(records) == 5 * len(OWN_TASKS), "every requested slot is recorded"
    failing = [(r["task_id"], r["turn"], r["status"], r["error"][:200]) for r in records if r["passed"] is not True]
    assert not failing, failing
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["turn_pass"] == 1.0
    for sub_suite in ("presentation", "interaction", "tool_grounded"):
        row = summary["table2"]["rows"][sub_suite]
        assert (row["turn_pass"], row["tp_at_5"], row["cpt"], row["apr"]) == (1.0, 1.0, 5.0, 1.0), row
    tool_logs = list(run_dir.glob("evidence/tg_*/*/tool_log.jsonl"))
    assert tool_logs and any(path.read_text().strip() for path in tool_logs), "tool-grounded turns call tools"


def test_null_model_gives_zero_with_blocked_accounting(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = _run("suite=evogenui", "model=null", "tracking=off", f"hydra.run.dir={run_dir}")
    assert result.returncode == 0, result.stderr[-3000:]
    records = _records(run_dir)
    assert len(records) == 5 * len(OWN_TASKS)
    assert {r["status"] for r in records if r["turn"] == 1} == {"invalid_output"}
    assert {r["status"] for r in records if r["turn"] > 1} == {"blocked"}
    assert json.loads((run_dir / "summary.json").read_text())["turn_pass"] == 0.0


MINIMAL_APP = "export default function App() { return <main><h1>Dashboard</h1><p>Work in progress.</p></main>; }"


@pytest.mark.skipif(not OFFICIAL.exists(), reason="shared/formats/evogenui is not beside the checkout")
def test_official_samples_without_tools_are_unassessed_under_rules(tmp_path: Path) -> None:
    """The official contracts carry no executable checks: judge=rules must say unassessed, never passed."""

    def answer(messages: list[dict]) -> tuple[int, str]:
        return 200, completion(render_json_output("A first version.", {"src/App.jsx": MINIMAL_APP}))

    run_dir = tmp_path / "run"
    with FaultServer(answer) as server:
        result = _run("suite=evogenui", f"suite.tasks_path={OFFICIAL}", "suite.sub_suites=[presentation,interaction]",
                      "model=local-openai", f"model.base_url={server.base_url}", "model.cache=false",
                      "judge=rules", "actor=none", "tracking=off", f"hydra.run.dir={run_dir}", timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    records = _records(run_dir)
    assert len(records) == 10, "two official tasks of five turns each, all recorded"
    for record in records:
        assert record["status"] == "ok", record
        assert record["passed"] is None, "an unchecked requirement is never a pass"
        statuses = {item["status"] for item in record["verdict"]["requirements"]}
        assert statuses == {"unassessed"}, statuses
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["turn_pass"] == 0.0 and summary["unassessed_turns"] == 10
