"""A judge of an EvoGenUI tool-grounded turn receives the tool bridge's call log and the runtime state through
JudgeInput, from the evidence folder the turn left (EvoGenUI-Bench §4.2: "tool and runtime logs")."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.base import JudgeInput
from runner.turns.judging_phase import JudgingPhase
from runner.turns.packets import EvidencePacket, write_packet
from runner.turns.records import FailureBucket, RunDirectory, TurnRecord, Verdict
from runner.sandbox.base import BuildResult
from runner.suites.evogenui.tool_bridge import ToolBridgeRuntime
from runner.suites.base import EpisodeState
from runner.suites.evogenui.suite import EvoGenUISuite, EvoGenUISuiteSettings
from tests.conftest import REPO_ROOT
from tests.suites.evogenui import tiny_task


class RecordingJudge:
    name = "recording"

    def __init__(self) -> None:
        self.inputs: list[JudgeInput] = []

    async def score(self, judge_input: JudgeInput) -> Verdict:
        self.inputs.append(judge_input)
        return Verdict(judge=self.name, passed=True)

    async def aclose(self) -> None:
        return None


class Tracker:
    def log_turn(self, record: TurnRecord, run_dir: Path) -> None:
        return None


def _executed_turn(tmp_path: Path, *, carried: bool) -> tuple[EvoGenUISuite, RunDirectory, Path]:
    """Turn 1 of the tiny tool-grounded task as execution leaves it: the suite's bridge, one save through the
    artifact server's bridge runtime, the frozen packet (with or without the carried state)."""
    suite = EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui", tasks_path=str(tiny_task.write_tiny_task(tmp_path))),
                          project_root=REPO_ROOT)
    task = asyncio.run(suite.load_tasks())[0]
    run_dir = RunDirectory(tmp_path / "run")
    evidence_dir = run_dir.evidence_dir(task.id, 1)
    bridge = suite.tool_bridge(task, task.turn(1), EpisodeState(), evidence_dir)
    assert bridge is not None
    runtime = ToolBridgeRuntime({"backends_path": str(bridge.backends_path), "fixture_ids": bridge.fixture_ids,
                                 "state_in": str(bridge.state_in), "log_out": str(bridge.log_out),
                                 "state_out": str(bridge.state_out), "extra": bridge.extra})
    status, _ = runtime.call("notes_save_note", {"text": tiny_task.NOTE})
    assert status == 200
    folder = EvidenceFolder(evidence_dir)
    record = TurnRecord(task_id=task.id, suite="evogenui", sub_suite=task.sub_suite, turn=1, status=FailureBucket.OK,
                        model_responded=True)
    packet = EvidencePacket(task=task, turn_index=1, record=record, judged=True, build=BuildResult(status="ok"),
                            files={"src/App.tsx": "export default function App() { return null }"},
                            runtime_state=folder.read_runtime_state() if carried else None)
    write_packet(evidence_dir, packet)
    return suite, run_dir, evidence_dir


def _judged_input(tmp_path: Path, *, carried: bool) -> JudgeInput:
    suite, run_dir, evidence_dir = _executed_turn(tmp_path, carried=carried)
    judge = RecordingJudge()
    phase = JudgingPhase(suite=suite, judge=judge, run_dir=run_dir, tracker=Tracker(), judge_calls=1, timeout_s=60)
    record = asyncio.run(phase.judge_and_commit(evidence_dir))
    assert record.passed is True
    (judge_input,) = judge.inputs
    return judge_input


def test_the_judge_receives_the_tool_log_and_the_runtime_state(tmp_path: Path) -> None:
    judge_input = _judged_input(tmp_path, carried=True)
    assert judge_input.tool_log is not None
    assert [call["tool"] for call in judge_input.tool_log] == ["notes_save_note"]
    assert judge_input.tool_log[0]["ok"] and judge_input.tool_log[0]["arguments"] == {"text": tiny_task.NOTE}
    assert judge_input.runtime_state["note"] == {"text": tiny_task.NOTE, "version": 1}


def test_without_a_frozen_state_the_runtime_state_comes_from_the_evidence(tmp_path: Path) -> None:
    judge_input = _judged_input(tmp_path, carried=False)
    assert judge_input.runtime_state["note"] == {"text": tiny_task.NOTE, "version": 1}
    assert len(judge_input.tool_log or []) == 1
