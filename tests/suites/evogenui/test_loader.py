"""The EvoGenUI task loader against the three official samples and malformed inputs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from runner.suites.evogenui.loader import TaskFormatError, load_tasks

SAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "formats" / "evogenui"
PRESENTATION = "Academic Journal Retraction Evidence Board.json"
INTERACTION = "Acid Base Titration Curve Lab.json"
TOOL_GROUNDED = "Tool Grounded Consumer Plant Rescue Diagnostic Bench.json"

needs_samples = pytest.mark.skipif(not SAMPLES.is_dir(), reason="shared EvoGenUI samples are absent")


def _minimal_task(task_id: str = "t_min", **overrides) -> dict:
    task = {
        "task_id": task_id,
        "suite": "interactive_tool_ui",
        "turns": [{"turn": n, "prompt": f"request {n}"} for n in (1, 2, 3)],
    }
    task.update(overrides)
    return task


def _write(path: Path, payload) -> Path:
    path.write_text(json.dumps(payload) if not isinstance(payload, str) else payload)
    return path


@needs_samples
def test_official_samples_load_from_folder_skipping_schema() -> None:
    tasks = {task.id: task for task in load_tasks(str(SAMPLES))}
    assert set(tasks) == {
        "presentation_academic_journal_retraction_evidence_board",
        "interactive_acid_base_titration_curve_lab",
        "tg_consumer_plant_rescue_diagnostic_bench",
    }
    by_sub_suite = {task.sub_suite: task for task in tasks.values()}
    assert set(by_sub_suite) == {"presentation", "interaction", "tool_grounded"}
    for task in tasks.values():
        assert task.suite == "evogenui"
        assert [turn.index for turn in task.turns] == [1, 2, 3, 4, 5]
        assert all(turn.prompt and turn.requirements for turn in task.turns)


@needs_samples
def test_presentation_sample_fields() -> None:
    (task,) = load_tasks(str(SAMPLES / PRESENTATION))
    assert task.title == "Academic Journal Retraction Evidence Board"
    assert task.domain == "academic_publishing_integrity"
    assert task.extra["scenario_suite"] == "presentation_ui"
    assert task.context == ""  # no metadata.task_world.public_context in this task
    assert task.public_contract == {}
    first = task.turn(1)
    assert first.prompt.startswith("Create a retraction evidence board")
    assert [r.id for r in first.requirements] == [
        "dominant_artifact_first_viewport",
        "core_entities_visible",
        "timeline_sources_callouts",
    ]
    assert first.requirements[0].description.endswith("[surface: screenshot]")
    assert first.extra["validation_contract"]["name"] == "base retraction evidence board"
    assert first.extra["query_tags"] == ["init", "preserve", "first_viewport"]


@needs_samples
def test_interaction_sample_fields() -> None:
    (task,) = load_tasks(str(SAMPLES / INTERACTION))
    assert task.sub_suite == "interaction"
    assert [len(turn.requirements) for turn in task.turns] == [5, 5, 5, 6, 5]
    kinds = {r.id: r.kind for r in task.turn(1).requirements}
    assert kinds["assistant_text_titration"] == "alignment"
    # actor instructions of a requirement stay in the private contract dict
    probe = task.turn(1).extra["validation_contract"]["evidence_requirements"][3]
    assert "action" in probe and "evidence" in probe
    assert task.extra["mock_capability_report"]["status"] == "supported"
    assert "local_state_rules" in task.extra["metadata"]["task_world"]


@needs_samples
def test_tool_grounded_sample_keeps_bindings_private() -> None:
    (task,) = load_tasks(str(SAMPLES / TOOL_GROUNDED))
    assert task.sub_suite == "tool_grounded"
    assert task.context.startswith("The UI helps with plant_rescue_case_274")
    assert len(task.extra["tools"]) == 7
    save = task.extra["tools"]["plant_save_rescue_plan"]
    assert save["fixture_id"] == "daily_life_discovery_cases_v1"
    assert save["handler_ref"] == "daily_life_discovery_cases_v1.plant_save_rescue_plan"
    assert save["mode"] == "write"
    assert [tool["name"] for tool in task.public_contract["tools"]][:2] == [
        "plant_get_sensor_readings",
        "plant_get_care_history",
    ]
    # What the generator may see holds no private material.
    public = json.dumps(
        {"context": task.context, "contract": task.public_contract, "prompts": [t.prompt for t in task.turns]}
    )
    raw = json.loads((SAMPLES / TOOL_GROUNDED).read_text())
    secrets = ["daily_life_discovery_cases_v1", "fixture_id", "handler_ref", "evidence_requirements", '"mode"']
    for scenario in raw["metadata"]["validation_contract"]["validation_scenarios"]:
        secrets.append(scenario["oracle"])
        secrets.extend(item["expect"] for item in scenario["evidence_requirements"])
    for secret in secrets:
        assert secret not in public


@needs_samples
def test_glob_and_single_file(tmp_path: Path) -> None:
    assert [t.sub_suite for t in load_tasks(str(SAMPLES / "Acid*.json"))] == ["interaction"]
    with pytest.raises(TaskFormatError, match="no EvoGenUI task files"):
        load_tasks(str(SAMPLES / "*.schema.json"))
    with pytest.raises(TaskFormatError):
        load_tasks(str(tmp_path / "nothing-*.json"))


@needs_samples
def test_collection_file_with_alternative_keys_and_extras(tmp_path: Path) -> None:
    sample = json.loads((SAMPLES / TOOL_GROUNDED).read_text())
    task = copy.deepcopy(sample)
    del task["task_id"]
    task["episode_id"] = "ep_1"
    for turn in task["turns"]:
        turn["turn_index"] = turn.pop("turn")
        turn["query"] = turn.pop("prompt")
        turn["unknown_turn_field"] = 1
    task["unknown_task_field"] = {"kept": True}
    task["turns"][0]["reference"] = {"assistant_text": "Here it is.", "files": {"src/App.jsx": "export default 1"}}
    scenario = task["metadata"]["validation_contract"]["validation_scenarios"][0]
    scenario["evidence_requirements"][0]["check"] = {
        "steps": [{"action": "click", "target": {"role": "button", "name": "Refresh"}}],
        "assert": [{"type": "tool_called", "tool": "plant_get_sensor_readings"}],
    }
    document = {"schema_version": "1", "source": "test", "tasks": [task, _minimal_task()]}
    tasks = load_tasks(str(_write(tmp_path / "set.json", document)))
    assert [t.id for t in tasks] == ["ep_1", "t_min"]
    loaded = tasks[0]
    assert loaded.turn(1).prompt == sample["turns"][0]["prompt"]
    assert loaded.extra["unknown_task_field"] == {"kept": True}
    assert loaded.turn(2).extra["unknown_turn_field"] == 1
    assert loaded.turn(1).reference_text == "Here it is."
    assert loaded.turn(1).reference_files == {"src/App.jsx": "export default 1"}
    check = loaded.turn(1).requirements[0].check
    assert check is not None and check.assertions[0].tool == "plant_get_sensor_readings"
    assert tasks[1].turn(3).requirements == []


def test_turn_level_contract_and_generated_ids(tmp_path: Path) -> None:
    task = _minimal_task()
    task["turns"][1]["metadata"] = {
        "validation_contract": {"evidence_requirements": [{"surface": "DOM", "expect": "a list is shown"}]}
    }
    (loaded,) = load_tasks(str(_write(tmp_path / "one.json", task)))
    (requirement,) = loaded.turn(2).requirements
    assert requirement.id == "t2_r1"
    assert requirement.description == "a list is shown [surface: DOM]"
    assert loaded.turn(2).extra["validation_contract"]["evidence_requirements"][0]["expect"] == "a list is shown"


MALFORMED = [
    # (mutation of {"tasks": [minimal]}, expected "path: problem" fragment)
    (lambda d: d["tasks"][0]["turns"][2].pop("prompt"), "tasks[0].turns[2].prompt: missing"),
    (lambda d: d["tasks"][0]["turns"][1].update(prompt=""), "tasks[0].turns[1].prompt: expected a non-empty string"),
    (lambda d: d["tasks"][0]["turns"][0].pop("turn"), "tasks[0].turns[0].turn: missing"),
    (lambda d: d["tasks"][0]["turns"][2].update(turn=5), "tasks[0].turns: turns must be numbered 1..3"),
    (lambda d: d["tasks"][0]["turns"][2].update(turn=2), "tasks[0].turns[2].turn: duplicate turn 2"),
    (lambda d: d["tasks"][0].update(turns=[]), "tasks[0].turns: must not be empty"),
    (lambda d: d["tasks"][0].pop("task_id"), "tasks[0].task_id: missing"),
    (lambda d: d["tasks"][0].update(suite="web_ui"), "tasks[0].suite: unknown scenario suite 'web_ui'"),
    (lambda d: d["tasks"].append("not a task"), "tasks[1]: expected an object"),
    (
        lambda d: d["tasks"][0].update(
            metadata={"validation_contract": {"validation_scenarios": [{"turn": 9, "evidence_requirements": []}]}}
        ),
        "tasks[0].metadata.validation_contract.validation_scenarios[0].turn: no such turn",
    ),
    (
        lambda d: d["tasks"][0].update(
            metadata={
                "validation_contract": {"validation_scenarios": [{"turn": 1, "evidence_requirements": [{"id": "x"}]}]}
            }
        ),
        "tasks[0].metadata.validation_contract.validation_scenarios[0].evidence_requirements[0].expect: missing",
    ),
    (
        lambda d: d["tasks"][0].update(
            metadata={
                "validation_contract": {
                    "validation_scenarios": [
                        {
                            "turn": 2,
                            "evidence_requirements": [
                                {"id": "x", "expect": "y", "check": {"assert": [{"type": "count", "target": {}}]}}
                            ],
                        }
                    ]
                }
            }
        ),
        "validation_scenarios[0].evidence_requirements[0].check.assert[0].count.target",
    ),
    (lambda d: d["tasks"][0].update(tools=[{"name": "t", "mock_contract": {}}]), "tasks[0].tools[0].mock_contract.fixture_id: missing"),
    (
        lambda d: d["tasks"][0]["turns"][0].update(reference={"files": {"src/App.jsx": 3}}),
        "tasks[0].turns[0].reference.files.src/App.jsx: expected the file's text",
    ),
]


@pytest.mark.parametrize("mutate, expected", MALFORMED)
def test_malformed_task_names_file_and_json_path(tmp_path: Path, mutate, expected: str) -> None:
    document = {"tasks": [_minimal_task()]}
    mutate(document)
    file = _write(tmp_path / "bad.json", document)
    with pytest.raises(TaskFormatError) as raised:
        load_tasks(str(file))
    message = str(raised.value)
    assert message.startswith(f"{file}: "), message
    assert expected in message, message


def test_single_task_file_paths_have_no_prefix(tmp_path: Path) -> None:
    task = _minimal_task()
    del task["turns"][0]["prompt"]
    file = _write(tmp_path / "single.json", task)
    with pytest.raises(TaskFormatError, match=r"single\.json: turns\[0\]\.prompt: missing"):
        load_tasks(str(file))


def test_invalid_json_and_duplicate_ids(tmp_path: Path) -> None:
    broken = _write(tmp_path / "broken.json", '{"task_id": ')
    with pytest.raises(TaskFormatError, match=r"broken\.json: <root>: invalid JSON at line 1"):
        load_tasks(str(broken))
    folder = tmp_path / "set"
    (folder / "nested").mkdir(parents=True)
    _write(folder / "a.json", _minimal_task("same"))
    _write(folder / "nested" / "b.json", _minimal_task("same"))
    with pytest.raises(TaskFormatError, match=r"b\.json: task id 'same' already defined in .*a\.json"):
        load_tasks(str(folder))
