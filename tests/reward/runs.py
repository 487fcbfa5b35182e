"""Full runs through the command line and the answers they recorded, to score again through the reward service."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, cli_env, runner_command


def full_run(run_dir: Path, *overrides: str, timeout: float = 900) -> list[dict[str, Any]]:
    """`python -m runner <overrides>` into `run_dir`; its records in task, turn order."""
    proc = subprocess.run(runner_command(*overrides, "tracking=off", f"hydra.run.dir={run_dir}"), cwd=REPO_ROOT,
                          env=cli_env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    records = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    return sorted(records, key=lambda record: (record["task_id"], record["turn"]))


def answer_of(run_dir: Path, record: dict[str, Any]) -> str:
    """The model's answer to the slot, exactly as the run parsed it."""
    return (run_dir / record["evidence_dir"] / "raw_response.txt").read_text()


def assert_same_score(reward: dict[str, Any], record: dict[str, Any]) -> None:
    """The reward's parts are the record's: bucket, pass, scores, each requirement and each dimension."""
    where = f"{record['task_id']} turn {record['turn']}"
    assert (reward["task_id"], reward["turn"]) == (record["task_id"], record["turn"])
    assert reward["status"] == record["status"], (where, reward["error"][:500], record["error"][:500])
    assert reward["passed"] == record["passed"], where
    assert reward["scores"] == pytest.approx(record["scores"], abs=1e-9), where
    assert reward["built"] == (record["extra"].get("build_status") == "ok"), where
    verdict = record["verdict"] or {}
    assert [(r["id"], r["status"]) for r in reward["requirements"]] == \
        [(r["id"], r["status"]) for r in verdict.get("requirements", [])], where
    assert {name: part["score"] for name, part in reward["dimensions"].items()} == \
        pytest.approx({name: part["score"] for name, part in verdict.get("dimensions", {}).items()}, abs=1e-9), where


def requirement_share(record: dict[str, Any]) -> float:
    requirements = record["verdict"]["requirements"]
    return sum(r["status"] == "passed" for r in requirements) / len(requirements)
