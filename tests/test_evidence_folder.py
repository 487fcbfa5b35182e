"""The evidence folder: each file has one writer, readers tolerate a log being appended, one JSONL reader."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from runner.evidence_folder import EvidenceExistsError, EvidenceFolder
from runner.records import read_jsonl
from runner.sandbox import server

REPO_RUNNER = Path(__file__).resolve().parents[1] / "runner"


def test_a_file_is_written_once_unless_replaced_on_purpose(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path / "evidence" / "t" / "1")
    folder.write_request([{"role": "user", "content": "hi"}])
    with pytest.raises(EvidenceExistsError, match="request.json"):
        folder.write_request([{"role": "user", "content": "again"}])
    assert json.loads(folder.request.read_text()) == {"messages": [{"role": "user", "content": "hi"}]}
    folder.write_verdict({"passed": False})
    folder.write_verdict({"passed": True})  # the judge's, then the judging phase's final verdict
    assert folder.read_json(folder.VERDICT) == {"passed": True}


def test_a_killed_attempt_is_cleared_but_an_executed_slot_is_kept(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    folder.write_build_log("half")
    folder.write_sources({"src/App.tsx": "x"})
    folder.clear_unfinished()
    assert list(tmp_path.iterdir()) == []
    folder.write_build_log("whole")
    folder.write_packet({"version": 1})
    folder.clear_unfinished()
    assert folder.build_log.read_text() == "whole" and folder.has_packet()


def test_the_tool_bridge_start_replaces_a_killed_attempts_logs(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    folder.tool_log.write_text('{"stale": true}\n')
    folder.start_tool_logs({"n": 1}, resources=True)
    assert folder.read_tool_log() == [] and folder.read_resource_log() == []
    assert folder.read_json(folder.STATE_IN) == {"n": 1}
    assert EvidenceFolder(tmp_path / "none").read_tool_log() is None


def test_logs_are_read_up_to_a_line_being_written(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    folder.tool_log.write_text('{"tool": "a"}\n[1]\n{"tool": "b"}\n{"tool": "to')
    assert folder.read_tool_log() == [{"tool": "a"}, {"tool": "b"}]  # only objects; the torn line left out
    lines = read_jsonl(folder.tool_log)
    assert lines.items == [{"tool": "a"}, [1], {"tool": "b"}]
    assert lines.whole_bytes == len('{"tool": "a"}\n[1]\n{"tool": "b"}\n')


def test_the_runtime_state_is_the_live_one_else_the_carried_snapshot(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    assert folder.read_runtime_state() is None
    folder.write_state_carried({"v": 1})
    assert folder.read_runtime_state() == {"v": 1}
    folder.state.write_text('{"v": 2}')
    assert folder.read_runtime_state() == {"v": 2}


def test_the_artifact_server_names_the_resource_log_as_the_folder_does() -> None:
    # server.py runs inside the sandbox on the standard library alone, so it cannot import the layout.
    assert server.RESOURCE_LOG_NAME == EvidenceFolder.RESOURCE_LOG


def test_no_module_spells_an_evidence_file_name_but_the_layout() -> None:
    names = {value for key, value in vars(EvidenceFolder).items() if key.isupper() and isinstance(value, str)}
    names -= {EvidenceFolder.SOURCES, EvidenceFolder.WORKSPACE}  # common words ("src", "workspace")
    allowed = {REPO_RUNNER / "evidence_folder.py", REPO_RUNNER / "sandbox" / "server.py"}
    found = []
    for path in sorted(REPO_RUNNER.rglob("*.py")):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                found.append(f"{path.relative_to(REPO_RUNNER)}:{node.lineno} {node.value!r}")
    assert not found, found


def test_judge_images_are_replaced_when_judged_again_and_only_judge_outputs_go_that_way(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    folder.write_judge_image(folder.CROP_MODEL, b"first")
    folder.write_judge_image(folder.CROP_MODEL, b"second")  # a resumed judging of an uncommitted slot
    assert (tmp_path / folder.CROP_MODEL).read_bytes() == b"second"
    with pytest.raises(ValueError, match="render_model.png"):
        folder.write_judge_image(folder.RENDER_MODEL, b"x")  # frozen in the execution phase: written once
    folder.write_bytes(folder.RENDER_MODEL, b"frozen")
    with pytest.raises(EvidenceExistsError):
        folder.write_bytes(folder.RENDER_MODEL, b"again")
    assert {folder.SCORED_RENDER, folder.CROP_GOLDEN, folder.CROP_MODEL} <= folder.JUDGE_OUTPUTS
