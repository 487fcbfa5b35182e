"""Run a suite's headline command with its model roles served by the CPU vLLM build, and read what it left.

A served run is the user's command (`python -m runner suite=... judge=qwen2.5-vl-7b ...`) plus, per served
role, `served_overrides` (tests/support/tiny_models.py): the runner itself starts each role's server
(`provider: vllm`, mode `process`), with the shipped configs' server arguments, and keeps each server's log
under the run dir's servers/ folder, which is where a refused request shows (`"POST /v1/... HTTP/1.1" 400`).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.tiny_models import READY_TIMEOUT_S

REPO_ROOT = Path(__file__).resolve().parents[2]
REFUSED = re.compile(r'"(?:POST|GET) /v1/[^"]*" 4\d\d')  # uvicorn's access line of a refused request


@dataclass
class ServedRun:
    run_dir: Path
    returncode: int
    stderr: str
    records: list[dict[str, Any]]
    server_logs: dict[str, str]  # log file name -> text

    def statuses(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self.records:
            counts[record["status"]] = counts.get(record["status"], 0) + 1
        return counts

    def refused_requests(self) -> list[str]:
        return [f"{name}: {line.strip()}" for name, text in self.server_logs.items()
                for line in text.splitlines() if REFUSED.search(line)]

    def logs_of(self, server: str) -> list[str]:
        """The log texts of the servers started for the model config named `server` (`<name>-<6 hex>.log`)."""
        pattern = re.compile(rf"{re.escape(server)}-[0-9a-f]{{6}}\.log")
        return [text for name, text in self.server_logs.items() if pattern.fullmatch(name)]

    def answered_requests(self, server: str) -> int:
        """Chat completions the server answered with 200 (its access log)."""
        return sum(text.count('/v1/chat/completions HTTP/1.1" 200') for text in self.logs_of(server))


def run_served(overrides: list[str], run_dir: Path, *, timeout_s: float,
               env: dict[str, str] | None = None) -> ServedRun:
    """`python -m runner OVERRIDES hydra.run.dir=RUN_DIR tracking=off` from the repository root (`env`: variables
    added to the test environment)."""
    from tests.conftest import cli_env

    command = [sys.executable, "-m", "runner", *overrides, f"hydra.run.dir={run_dir}", "tracking=off"]
    result = subprocess.run(command, cwd=REPO_ROOT, env={**cli_env(), **(env or {})}, capture_output=True, text=True,
                            timeout=timeout_s + READY_TIMEOUT_S)
    turns = run_dir / "turns.jsonl"
    records = [json.loads(line) for line in turns.read_text().splitlines() if line.strip()] if turns.exists() else []
    servers = run_dir / "servers"
    logs = {path.name: path.read_text(errors="replace") for path in sorted(servers.glob("*.log"))} \
        if servers.is_dir() else {}
    return ServedRun(run_dir, result.returncode, result.stderr, records, logs)


def listed_requests(run: ServedRun, record: dict, role: str) -> list[dict]:
    """What the slot's evidence lists of its `role`'s requests (judge_requests.jsonl for the judge, else
    requests_fitted.jsonl; a tester's are in each test case's own folder): what each held and what was fitted out
    (runner/models/fitting.py)."""
    from runner.turns.evidence_folder import EvidenceFolder

    slot = run.run_dir / record["evidence_dir"]
    folders = [slot, *sorted(path for path in slot.glob("cases/*") if path.is_dir())]
    return [entry for folder in folders
            for entry in EvidenceFolder(folder).read_request_records(judging=role == "judge")
            if entry.get("role") == role]


def assert_completed(run: ServedRun, *, requested: int, servers: list[str], listed: tuple[str, ...] = ()) -> None:
    """The run ended, every requested slot has its record, none is `infra`, `judge_error` or `truncated`, every named
    server was started by the run and answered, and no server refused a request. Each `ok` slot's evidence
    lists the requests of every role in `listed`, each within its server's image limit."""
    assert run.returncode == 0, run.stderr[-4000:]
    assert len(run.records) == requested, (len(run.records), requested)
    assert len({(r["task_id"], r["turn"]) for r in run.records}) == requested  # one record per slot
    statuses = run.statuses()
    errors = [(r["task_id"], r["turn"], r["status"], r.get("error")) for r in run.records
              if r["status"] in ("infra", "judge_error", "truncated")]
    assert not errors, (statuses, errors[:3])
    assert run.refused_requests() == [], run.refused_requests()[:5]
    for name in servers:
        assert len(run.logs_of(name)) == 1, (name, sorted(run.server_logs))
        assert run.answered_requests(name) > 0, f"server {name} answered no chat completion"
    for record in run.records:
        if record["status"] != "ok":
            continue
        for role in listed:
            entries = listed_requests(run, record, role)
            assert entries, (record["task_id"], record["turn"], role, "no request listed in the evidence")
            for entry in entries:
                limit = (entry.get("limits") or {}).get("images_per_prompt")
                assert "refused" not in entry, entry.get("refused")
                assert limit is None or entry["images_sent"] <= limit, entry
