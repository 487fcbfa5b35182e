"""`python -m runner judge=local-llm actor=llm` end to end, both models served by a scripted local server."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.support.fault_server import FaultServer, completion

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]


def _verdict(execution: int, requirement_ids: list[str]) -> str:
    return json.dumps({
        "presentation": {"score": 5, "reason": "tidy"}, "execution": {"score": execution, "reason": "checked"},
        "alignment": {"score": 4, "reason": "consistent"},
        "requirements": {rid: {"status": "unassessed", "reason": "scripted"} for rid in requirement_ids},
        "failure_types": [] if execution >= 4 else ["unwired_control"],
        "mechanism": None if execution >= 4 else "affordance_binding", "summary": "scripted",
    })


def _behaviour(messages: list[dict[str, Any]]) -> tuple[int, str]:
    system = messages[0]["content"] if isinstance(messages[0]["content"], str) else ""
    if "evaluator of EvoGenUI-Bench" not in system:  # the actor
        return 200, completion(json.dumps({"action": "finish", "success": True, "summary": "looks done"}))
    user = messages[1]["content"]
    text = user if isinstance(user, str) else " ".join(p.get("text", "") for p in user if p.get("type") == "text")
    if "id: smoke-counter" in text and "(turn 2 of" in text:
        return 200, completion("I think it is fine.")  # never a verdict: judge_error
    ids = re.findall(r"^- \[([^\]]+)\] \(", text, flags=re.MULTILINE)  # the contract's requirements, as listed
    if "id: smoke-converter" in text and "(turn 3 of" in text:
        return 200, completion(_verdict(3, ids))
    return 200, completion(_verdict(4, ids))


def test_llm_judge_and_actor_run_the_smoke_suite(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with FaultServer(_behaviour) as server:
        result = subprocess.run(
            runner_command("suite=smoke", "model=oracle", "judge=local-llm", "actor=llm", "tracking=off",
                           f"judge.options.model.base_url={server.base_url}",
                           f"actor.options.model.base_url={server.base_url}", f"hydra.run.dir={run_dir}"),
            cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=400,
        )
    assert result.returncode == 0, result.stderr[-3000:]
    records = {(r["task_id"], r["turn"]): r for r in map(json.loads, (run_dir / "turns.jsonl").read_text().splitlines())}
    assert (records[("smoke-counter", 2)]["status"], records[("smoke-counter", 2)]["passed"]) == ("judge_error", None)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status_counts"]["judge_error"] == 1 and summary["unassessed_turns"] >= 1
    assert summary["infra_failures"] == 0, "a judge failure is no infra failure of the model's slot"
    failed = records[("smoke-converter", 3)]
    assert failed["status"] == "ok" and failed["passed"] is False
    assert failed["verdict"]["mechanism"] == "affordance_binding"
    first = records[("smoke-counter", 1)]
    assert first["passed"] is True and first["judge"] == "local-llm" and first["actor"] == "llm"
    assert first["scores"] == {"presentation": 5.0, "execution": 4.0, "alignment": 4.0}
    trace = json.loads((run_dir / "evidence" / "smoke-counter" / "1" / "trace.json").read_text())
    assert trace["claim"] == "success=true: looks done" and trace["actor"] == "llm"
