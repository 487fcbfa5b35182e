"""Resume restores the whole episode state: a resumed episode's payloads are byte-identical."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runner.models.parse import render_json_output
from runner.suites.evogenui.loader import load_file
from tests.conftest import REPO_ROOT
from tests.support.fault_server import FaultServer, completion
from tests.test_main import _records, _run

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]

TASK = load_file(REPO_ROOT / "tasks" / "evogenui" / "pres_regional_blood_supply_briefing.json")[0]


def answer(messages: list[dict]) -> tuple[int, str]:
    """Turn 2 returns turn 1's files unchanged, so the payload's previous_turn_source of turn 3 must
    still name turn 1: bookkeeping that only the saved episode state carries across a resume."""
    payload = json.loads(messages[-1]["content"])
    turn = len(payload["previous_turns"]) + 1
    files = TASK.turn(1 if turn == 2 else turn).reference_files
    return 200, completion(render_json_output(f"turn {turn} done", files))


def _requests(run_dir: Path) -> dict[int, bytes]:
    folder = run_dir / "evidence" / TASK.id
    return {turn: (folder / str(turn) / "request.json").read_bytes() for turn in range(1, 6)}


def test_resumed_episode_sends_byte_identical_payloads(tmp_path: Path) -> None:
    overrides = ["suite=evogenui", f"suite.task_ids=[{TASK.id}]", "model=local-openai", "model.cache=false",
                 "judge=rules", "actor=none", "tracking=off"]
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    with FaultServer(answer) as server:
        first = _run(*overrides, f"model.base_url={server.base_url}", f"hydra.run.dir={whole}", timeout=900)
        assert first.returncode == 0, first.stderr[-3000:]
        # The state a run killed after turn 2 leaves: records 1-2 and their evidence, nothing after.
        shutil.copytree(whole, resumed)
        lines = (resumed / "turns.jsonl").read_text().splitlines(keepends=True)
        kept = [line for line in lines if json.loads(line)["turn"] <= 2]
        (resumed / "turns.jsonl").write_text("".join(kept))
        for turn in (3, 4, 5):
            shutil.rmtree(resumed / "evidence" / TASK.id / str(turn))
        second = _run(*overrides, f"model.base_url={server.base_url}", f"hydra.run.dir={resumed}", "resume=true",
                      timeout=900)
        assert second.returncode == 0, second.stderr[-3000:]
    assert len(_records(resumed)) == 5
    source = json.loads(json.loads(_requests(whole)[3])["messages"][-1]["content"])["previous_turn_source"]
    assert source["turn"] == 1, "turn 2 changed nothing, so the source files are still turn 1's"
    assert _requests(resumed) == _requests(whole)
