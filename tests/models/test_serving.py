"""Roles a run uses, their servers' claims, and lazy serving: `suite=micro judge=<vLLM judge>` starts no judge
server (MT-Web2Code micro is scored on pixels), while the same judge on the smoke suite does try to start.

The vLLM judge here points at a Python that does not exist (a fault injected into its launcher): starting it
would fail the run with a server log, so a run that finishes with no server log never started it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from runner.run.validation import validate_config
from runner.run.roles import roles_used, server_claims
from tests.conftest import REPO_ROOT, cli_env


def _judge_config(model_dir: Path) -> dict:
    return {
        "name": "unstartable-judge", "kind": "llm",
        "options": {"rubric": "evogenui", "model": {
            "name": "unstartable", "provider": "vllm", "cache": False,
            "server": {"model_path": str(model_dir), "python": "/nonexistent/python", "tensor_parallel_size": 2,
                       "gpu_memory_utilization": 0.4, "ready_timeout_s": 30},
        }},
    }


def _config(suite: str, judge: dict, actor: str = "none") -> object:
    from runner.compose import compose

    raw = compose([f"suite={suite}", f"actor={actor}"], project_root=REPO_ROOT)
    raw["judge"] = judge
    return validate_config(raw)


def test_roles_used_leave_out_the_judge_for_micro_and_the_actor_for_none(tmp_path: Path) -> None:
    judge = _judge_config(tmp_path)
    assert roles_used(_config("micro", judge)) == ["generator"]
    assert roles_used(_config("macro", judge)) == ["generator", "judge"]
    smoke = _config("smoke", judge, actor="probe")
    assert roles_used(smoke) == ["generator", "judge", "actor"]
    [claim] = server_claims(smoke, roles_used(smoke))
    assert (claim.role, claim.name, claim.tensor_parallel_size, claim.fraction) == ("judge", "unstartable", 2, 0.4)
    assert server_claims(_config("micro", judge), ["generator"]) == []


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("suite, starts_judge", [("micro", False), ("smoke", True)])
def test_a_vllm_judge_starts_only_when_the_suite_calls_it(tmp_path: Path, suite: str, starts_judge: bool) -> None:
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "config.json").write_text("{}")
    conf = tmp_path / "conf" / "judge"
    conf.mkdir(parents=True)
    (conf / "unstartable-judge.yaml").write_text(yaml.safe_dump(_judge_config(tmp_path / "weights")))
    run_dir = tmp_path / "run"
    overrides = [f"hydra.searchpath=[file://{tmp_path / 'conf'}]", f"suite={suite}", "judge=unstartable-judge",
                 "suite.limit=1", "suite.turns=1", f"hydra.run.dir={run_dir}", "tracking=off"]
    result = subprocess.run([sys.executable, "-m", "runner", *overrides], cwd=REPO_ROOT, env=cli_env(),
                            capture_output=True, text=True, timeout=900)
    logs = list((run_dir / "servers").glob("unstartable-*.log")) if (run_dir / "servers").is_dir() else []
    if starts_judge:  # the control: on a suite that calls the judge, the preflight checks its server first
        assert result.returncode == 2, result.stderr[-3000:]
        assert "judge.options.model.server.python: /nonexistent/python does not exist" in result.stderr
        assert logs == [] and not (run_dir / "plan.json").exists()  # stopped before any preparation
        return
    plan = json.loads((run_dir / "plan.json").read_text())
    assert result.returncode == 0, result.stderr[-3000:]
    assert logs == []
    records = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    assert len(records) == 1 and records[0]["status"] == "ok" and "score" in records[0]["scores"]
    assert plan["phases"][0]["roles"] == ["generator"] and plan["claims"] == []
