"""suite.benchmark_path: a folder laid out like the EvoGenUI-Bench checkout (our own stand-in content) loads
its task folders, binds tools to its `runtime` package, shows the benchmark's public contract, reads its
prompts (suite.prompts=benchmark) and hands the artifact server the benchmark's layout."""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from runner.run.lineage import prompt_versions
from runner.suites.base import EpisodeState
from runner.suites.evogenui.benchmark_prompts import RESPONSE_CONTRACT, BenchmarkEvaluatorRubric, sha256_text
from runner.suites.evogenui.checkout import CheckoutError
from runner.suites.evogenui.suite import EvoGenUISuite, EvoGenUISuiteSettings, MissingToolBackendError
from tests.conftest import REPO_ROOT

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "evogenui_bench"
TOOL_TASK = "tg_pantry_restock_ledger"
STAND_IN_GENERATOR = (
    "STAND-IN GENERATOR PROMPT. Answer with assistant_text: and a short note, then one "
    "#### `src/App.tsx` section per file with the complete file in a fenced block."
)
STAND_IN_ACTOR = (
    "STAND-IN ACTOR PROMPT. Operate the interface only through what the page shows and report each "
    "requirement you exercised."
)


def _suite(**settings: Any) -> EvoGenUISuite:
    return EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui", benchmark_path=str(FIXTURE), **settings),
                         project_root=REPO_ROOT)


def _messages(suite: EvoGenUISuite, *args: Any) -> list[dict[str, Any]]:
    """The turn payload (Suite.messages is async)."""
    return asyncio.run(suite.messages(*args))


def _load(suite: EvoGenUISuite):
    return asyncio.run(suite.load_tasks())


def test_every_task_folder_of_the_checkout_loads() -> None:
    tasks = _load(_suite())
    assert sorted(task.id for task in tasks) == ["pres_reading_room_hours", TOOL_TASK]  # 2 of 2
    assert {task.sub_suite for task in tasks} == {"presentation", "tool_grounded"}


def test_public_tool_list_is_the_benchmarks_api_doc_byte_for_byte() -> None:
    suite = _suite(task_ids=[TOOL_TASK])
    (task,) = _load(suite)
    # Hand-written expectation: the api_doc shape (name, description, mode, inputSchema, outputSchema,
    # in that order) of the stand-in backend, with the private x-genui-derived-enum annotation removed.
    ledger = {"ledger_id": {"type": "string", "enum": ["pantry_ledger_12"]}}
    item = {"type": "object", "properties": {"sku": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["sku", "count"], "additionalProperties": False}
    expected = [
        {"name": "pantry_get_stock", "description": "Read the shelf counts of the pantry ledger.", "mode": "read",
         "inputSchema": {"type": "object", "properties": ledger, "required": ["ledger_id"], "additionalProperties": False},
         "outputSchema": {"type": "object", "properties": {"ledger_id": {"type": "string"}, "items": {"type": "array", "items": item}},
                          "required": ["ledger_id", "items"], "additionalProperties": False}},
        {"name": "pantry_restock", "description": "Add units of one item to the pantry ledger.", "mode": "write",
         "inputSchema": {"type": "object",
                         "properties": {**ledger, "sku": {"type": "string", "minLength": 1},
                                        "count": {"type": "integer", "minimum": 1}, "note": {"type": "string"}},
                         "required": ["ledger_id", "sku", "count"], "additionalProperties": False},
         "outputSchema": {"type": "object", "properties": {"success": {"type": "boolean"}, "item": item},
                          "required": ["success", "item"], "additionalProperties": False}},
        {"name": "pantry_audit", "description": "Count ledger entries (an audit read).", "mode": "read",
         "inputSchema": {"type": "object", "properties": ledger, "required": ["ledger_id"], "additionalProperties": False},
         "outputSchema": {"type": "object", "properties": {"entries": {"type": "integer", "maximum": 3}},
                          "required": ["entries"], "additionalProperties": False}},
    ]
    contract = suite.public_contract(task)
    assert json.dumps(contract["tools"]) == json.dumps(expected)
    turn = task.turns[0]
    payload = json.loads(_messages(suite, task, turn, EpisodeState())[1]["content"])
    assert json.dumps(payload["task"]["tools"]) == json.dumps(expected)


def test_incomplete_checkout_and_missing_backend_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(CheckoutError, match="runtime/types.py is missing"):
        (tmp_path / "bench" / "task_subsets").mkdir(parents=True)
        EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui", benchmark_path=str(tmp_path)), project_root=REPO_ROOT)
    copy = tmp_path / "copy"
    shutil.copytree(FIXTURE, copy)
    (copy / "runtime" / "tool_backends" / "pantry_ledger_v1.py").unlink()
    suite = EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui", benchmark_path=str(copy)), project_root=REPO_ROOT)
    with pytest.raises(MissingToolBackendError, match="pantry_ledger_v1"):
        _load(suite)


def test_template_defaults_to_the_benchmark_scaffold() -> None:
    assert _suite().web_template == "evogenui"
    assert _suite(template="default").web_template == "default"
    own = EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui"), project_root=REPO_ROOT)
    assert own.web_template is None and own.benchmark_prompts is None
    with pytest.raises(ValidationError, match="unknown web template"):
        EvoGenUISuiteSettings(name="evogenui", template="nope")


def test_benchmark_prompts_come_from_the_checkout_and_are_hashed() -> None:
    with pytest.raises(ValidationError, match="benchmark_path"):
        EvoGenUISuiteSettings(name="evogenui", prompts="benchmark")
    suite = _suite(prompts="benchmark", task_ids=[TOOL_TASK])
    (task,) = _load(suite)
    messages = _messages(suite, task, task.turns[0], EpisodeState())
    assert messages[0] == {"role": "system", "content": STAND_IN_GENERATOR}
    prompts = suite.benchmark_prompts
    assert prompts is not None and prompts.hashes()["generator"] == sha256_text(STAND_IN_GENERATOR)
    assert prompts.evaluator_system.startswith("STAND-IN EVALUATOR. Policy: STAND-IN EVIDENCE POLICY.")
    assert RESPONSE_CONTRACT in prompts.evaluator_system and '"Execution": "e"' in prompts.evaluator_system
    # the actor prompt reaches the actor (tests/actors/test_llm_actor.py sends it to a model) and is hashed
    assert suite.actor_instructions == prompts.actor_system_extension == STAND_IN_ACTOR
    assert prompts.hashes()["actor"] == sha256_text(STAND_IN_ACTOR)
    assert _suite().actor_instructions is None and _suite(prompts="own").actor_instructions is None
    versions = prompt_versions(suite)
    assert versions["suite:evogenui"] == prompts.version()
    assert sha256_text(STAND_IN_GENERATOR)[:16] in versions["suite:evogenui"]
    # own prompts: the project's own prompt version, never the checkout's text
    from runner.suites.evogenui.payload import PROMPT_VERSION

    assert PROMPT_VERSION.startswith("evogenui-f2-")
    assert prompt_versions(_suite())["suite:evogenui"] == PROMPT_VERSION


def test_benchmark_evaluator_prompt_reaches_an_llm_judge_once() -> None:
    from runner.judges.base import JudgeBase

    class Rubric:
        name = "evogenui"

        def instructions(self) -> str:
            return "own rubric"

    class Judge(JudgeBase):
        name = "llm"
        rubric = Rubric()

        async def score(self, judge_input: Any) -> Any:
            raise AssertionError("not called here")

    from runner.suites.evogenui.benchmark_prompts import use_benchmark_evaluator

    judge = Judge()
    use_benchmark_evaluator(judge, "BENCH RULES")
    use_benchmark_evaluator(judge, "BENCH RULES")
    assert isinstance(judge.rubric, BenchmarkEvaluatorRubric)
    assert judge.rubric.instructions() == "BENCH RULES" and judge.rubric.name == "evogenui"
    assert isinstance(judge.rubric.inner, Rubric)


def test_bridge_has_the_benchmark_layout_and_private_material_stays_server_side(tmp_path: Path) -> None:
    suite = _suite(task_ids=[TOOL_TASK])
    (task,) = _load(suite)
    bridge = suite.tool_bridge(task, task.turns[0], EpisodeState(), tmp_path)
    assert bridge is not None and bridge.backends_path == FIXTURE / "runtime"
    assert json.loads(bridge.state_in.read_text()) == {
        "scenarios": {"default": {"pantry_ledger_v1": {"items": [{"sku": "PRIVATE-SEED-OATS", "count": 2}]}}}}
    extra = bridge.extra
    assert extra["layout"] == "benchmark" and extra["package"] == "runtime" and extra["turn"] == 1
    definition = extra["tool_definitions"]["pantry_restock"]
    assert definition["handler_ref"] == "pantry_ledger_v1.pantry_restock"
    assert definition["semantic_contract"] == {"private_note": "SECRET-SEMANTIC-NOTE"}
    assert definition["input_schema"]["properties"]["ledger_id"]["x-genui-derived-enum"] == "ledger-ids"
    assert extra["public_tools"] == suite.public_contract(task)["tools"]
    # a later turn starts from the carried scenario states
    carried = {"scenarios": {"default": {"pantry_ledger_v1": {"items": []}, "writes": [1]}}}
    later = suite.tool_bridge(task, task.turns[1], EpisodeState(runtime_state=carried), tmp_path / "t2")
    assert json.loads(later.state_in.read_text()) == carried and later.extra["turn"] == 2


def test_runtime_package_is_the_checkouts_and_nothing_else_of_it() -> None:
    suite = _suite(task_ids=[TOOL_TASK])
    _load(suite)
    runtime = importlib.import_module("runtime")
    assert list(runtime.__path__) == [str(FIXTURE / "runtime")]
    import runner

    assert Path(runner.__file__).resolve().parent == REPO_ROOT / "runner", "the checkout's runner/ never shadows ours"
