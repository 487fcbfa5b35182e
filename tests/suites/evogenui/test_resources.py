"""Public resources of EvoGenUI tasks (runner/suites/evogenui/resources.py): contents, bridge, judge evidence."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from runner.judges.base import JudgeInput
from runner.judges.llm_settings import LLMJudgeSettings
from runner.judges.llm_bundle import build_bundle
from runner.sandbox.base import BuildResult
from runner.suites.base import EpisodeState
from runner.suites.evogenui.loader import parse_task
from runner.suites.evogenui.resources import served_resources
from runner.suites.evogenui.suite import EvoGenUISuite, EvoGenUISuiteSettings

BACKEND = textwrap.dedent('''
    TOOL_SCHEMAS = {"ping": {"description": "Ping.", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}}
    INITIAL_STATE = {"open_slips": 4}
    RESOURCES = {"harbor://tide-table": {"high": "06:10", "low": "12:25"}}

    def read_resource(uri, state):
        if uri == "harbor://occupancy":
            return {"open_slips": state["open_slips"]}
        return None

    def invoke(tool, args, state):
        return {}
''')


def _contract(uri: str) -> dict[str, str]:
    return {"uri": uri, "name": uri.split("//")[1], "mime_type": "application/json", "description": f"The {uri}"}


def _task(tmp_path: Path, *, tools: bool = True):
    data = {
        "task_id": "harbor_resources", "suite": "tool_grounded_action_ui" if tools else "presentation_ui",
        "turns": [{"turn": 1, "prompt": "Show the tide table and the occupancy."}],
        "resources": [_contract(u) for u in ("harbor://tide-table", "harbor://occupancy", "harbor://rules",
                                             "harbor://unfilled")],
        "scenario_fixtures": {"default": {"tools": {}, "initial_state": {},
                                          "resources": {"harbor://rules": {"max_length_m": 18}}}},
    }
    if tools:
        data["tools"] = [{"name": "ping", "mode": "read", "mock_contract": {"fixture_id": "harbor_v1"}}]
    return parse_task(data, tmp_path / "task.json")


def test_contents_come_from_the_backend_then_the_scenario_fixtures(tmp_path: Path) -> None:
    (tmp_path / "harbor_v1.py").write_text(BACKEND)
    served = served_resources(_task(tmp_path), tmp_path, {"open_slips": 2})
    assert served["harbor://tide-table"]["contents"] == {"high": "06:10", "low": "12:25"}  # RESOURCES
    assert served["harbor://occupancy"]["contents"] == {"open_slips": 2}  # read_resource, from the turn's state
    assert served["harbor://rules"]["contents"] == {"max_length_m": 18}  # scenario_fixtures.*.resources
    assert "contents" not in served["harbor://unfilled"]  # declared without contents: a read answers 404
    assert {k: v for k, v in served["harbor://rules"].items() if k != "contents"} == _contract("harbor://rules")


def test_a_task_with_resources_only_gets_a_bridge_serving_them(tmp_path: Path) -> None:
    task = _task(tmp_path, tools=False)
    suite = EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui", tasks_path=str(tmp_path)), project_root=tmp_path)
    evidence_dir = tmp_path / "evidence"
    evidence_dir.mkdir()
    bridge = suite.tool_bridge(task, task.turns[0], EpisodeState(), evidence_dir)
    assert bridge is not None and bridge.fixture_ids == {}
    assert bridge.extra["resources"]["harbor://rules"]["contents"] == {"max_length_m": 18}
    assert (evidence_dir / "resource_log.jsonl").read_text() == ""


def test_the_judge_reads_the_resource_log(tmp_path: Path) -> None:
    task = _task(tmp_path, tools=False)
    (tmp_path / "resource_log.jsonl").write_text(
        json.dumps({"seq": 1, "uri": "harbor://rules", "ok": True, "contents": {"max_length_m": 18}}) + "\n"
        + json.dumps({"seq": 2, "uri": "harbor://unfilled", "ok": False, "error": "no contents"}) + "\n")
    judge_input = JudgeInput(task=task, turn=task.turns[0], build=BuildResult(status="ok"), evidence=None,
                             trace=None, files={}, assistant_text="", out_dir=tmp_path)
    settings = LLMJudgeSettings.from_options({"model": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1"}})
    text = build_bundle(judge_input, settings, vision=False).text
    assert "resource log: 2 read(s)" in text
    assert '"max_length_m": 18' in text and '"uri": "harbor://unfilled"' in text
