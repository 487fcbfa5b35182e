"""suite=evogenui: task loading and backend checks, the F.2 payload (public material only), the tool
bridge, the summary (Table 2 shape) and whole runs through the command line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from runner.errors import ConfigError
from runner.turns.records import FailureBucket, TurnRecord, Verdict
from runner.suites.base import CompactTurn, EpisodeState
from runner.suites.evogenui.payload import SYSTEM_PROMPT
from runner.suites.evogenui.suite import EvoGenUISuite, EvoGenUISuiteSettings, MissingToolBackendError
from runner.suites.registry import build_suite, validate_suite_options
from runner.turns.tasks import Task, TurnSpec
from tests.conftest import REPO_ROOT, cli_env, runner_command
from tests.suites.evogenui import tiny_task

SAMPLES = REPO_ROOT.parent / "shared" / "formats" / "evogenui"
TOOL_GROUNDED_SAMPLE = SAMPLES / "Tool Grounded Consumer Plant Rescue Diagnostic Bench.json"
PLANT_FIXTURE = "daily_life_discovery_cases_v1"
PLANT_TOOLS = [
    "plant_get_sensor_readings",
    "plant_get_care_history",
    "plant_get_species_profile",
    "plant_get_weather_window",
    "plant_validate_rescue_plan",
    "plant_save_rescue_plan",
    "plant_get_rescue_plan_status",
]
PLANT_SECRET = "PLANT-BACKEND-SECRET-STATE"

needs_samples = pytest.mark.skipif(not TOOL_GROUNDED_SAMPLE.is_file(), reason="shared EvoGenUI samples are absent")


def _suite(**settings: Any) -> EvoGenUISuite:
    return EvoGenUISuite(EvoGenUISuiteSettings(name="evogenui", **settings), project_root=REPO_ROOT)


def _messages(suite: EvoGenUISuite, *args: Any) -> list[dict[str, Any]]:
    """The turn payload (Suite.messages is async)."""
    return asyncio.run(suite.messages(*args))


def _load(suite: EvoGenUISuite) -> list[Task]:
    return asyncio.run(suite.load_tasks())


def _plant_backends(folder: Path) -> Path:
    """A stand-in backend for the official tool-grounded sample's fixture id (its real one is not public)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{PLANT_FIXTURE}.py").write_text(
        textwrap.dedent(
            f"""
            INITIAL_STATE = {{"plant_rescue_case_274": {{"secret": "{PLANT_SECRET}"}}}}
            TOOL_SCHEMAS = {{
                name: {{"description": f"Public description of {{name}}.",
                        "inputSchema": {{"type": "object"}}, "outputSchema": {{"type": "object"}}}}
                for name in {PLANT_TOOLS!r}
            }}

            def invoke(tool, args, state):
                return {{"tool": tool}}
            """
        )
    )
    return folder


# --- loading ----------------------------------------------------------------------------------------


def test_registered_and_settings_validated() -> None:
    suite = build_suite({"name": "evogenui", "sub_suites": ["interaction"]}, project_root=REPO_ROOT)
    assert isinstance(suite, EvoGenUISuite)
    with pytest.raises(ConfigError, match="unknown sub-suite"):
        validate_suite_options({"name": "evogenui", "sub_suites": ["tools"]})
    with pytest.raises(ConfigError, match="suite.history_turn"):
        validate_suite_options({"name": "evogenui", "history_turn": 2})


@needs_samples
def test_official_tool_grounded_sample_fails_naming_its_fixture_id() -> None:
    with pytest.raises(MissingToolBackendError) as caught:
        _load(_suite(tasks_path=str(SAMPLES)))
    message = str(caught.value)
    assert PLANT_FIXTURE in message and "tg_consumer_plant_rescue_diagnostic_bench" in message
    assert "suite.tool_backends_path" in message


@needs_samples
def test_official_samples_without_tools_load_alone_and_all_load_with_a_backend(tmp_path: Path) -> None:
    tasks = _load(_suite(tasks_path=str(SAMPLES), sub_suites=["presentation", "interaction"]))
    assert sorted(task.sub_suite for task in tasks) == ["interaction", "presentation"]
    backends = _plant_backends(tmp_path / "plant")
    tasks = _load(_suite(tasks_path=str(SAMPLES), tool_backends_path=str(backends)))
    assert len(tasks) == 3 and all(len(task.turns) == 5 for task in tasks)


def test_backends_beside_the_tasks_are_found_and_never_read_as_tasks(tmp_path: Path) -> None:
    folder = tiny_task.write_tiny_task(tmp_path / "tasks")
    (folder / "backends" / "fixtures.json").write_text('{"not": "a task"}')
    suite = _suite(tasks_path=str(folder))
    assert suite.backends_path == folder / "backends"
    (task,) = _load(suite)
    assert task.id == tiny_task.TASK_ID and task.sub_suite == "tool_grounded"
    with pytest.raises(MissingToolBackendError, match=tiny_task.FIXTURE_ID):
        _load(_suite(tasks_path=str(folder), tool_backends_path=str(tmp_path / "elsewhere")))


# --- payload: Appendix F.2, public material only ----------------------------------------------------


def _strings(tree: Any) -> list[str]:
    if isinstance(tree, str):
        return [tree]
    if isinstance(tree, dict):
        return [s for value in tree.values() for s in _strings(value)]
    if isinstance(tree, list):
        return [s for value in tree for s in _strings(value)]
    return []


def _private_strings(document: dict[str, Any], public_text: str, extra: list[str]) -> list[str]:
    """Every string of the task file (and of the backend's private parts) that is not public text."""
    candidates = set(_strings(document)) | set(extra)
    return sorted(s for s in candidates if len(s.strip()) >= 6 and s not in public_text)


def _episode_for(task: Task, turn: TurnSpec) -> EpisodeState:
    """An episode as the engine leaves it before `turn`: model-made files and compact history."""
    history = [
        CompactTurn(turn=t.index, request=t.prompt, assistant_text=f"model reply {t.index}", ui_text=f"ui text {t.index}")
        for t in task.turns[: turn.index - 1]
    ]
    files = {"src/App.jsx": f"export default function App() {{ return <p>model turn {turn.index - 1}</p>; }}"}
    return EpisodeState(files=files if history else {}, history=history, has_artifact=bool(history))


def _cases(tmp_path: Path) -> list[tuple[EvoGenUISuite, dict[str, Any], list[str]]]:
    """(suite, raw task document, private backend strings) for the three samples and our tiny task."""
    folder = tiny_task.write_tiny_task(tmp_path / "tasks")
    cases = [(_suite(tasks_path=str(folder)), tiny_task.task_document(),
              tiny_task.PRIVATE_MARKERS + [tiny_task.BACKEND, tiny_task.FIXTURE_ID])]
    if TOOL_GROUNDED_SAMPLE.is_file():
        backends = _plant_backends(tmp_path / "plant")
        for file in sorted(SAMPLES.glob("*.json")):
            if file.name.endswith(".schema.json"):
                continue
            extra = [PLANT_SECRET, (backends / f"{PLANT_FIXTURE}.py").read_text()]
            cases.append((_suite(tasks_path=str(file), tool_backends_path=str(backends)), json.loads(file.read_text()), extra))
    # The benchmark checkout's layout: its task folders, its runtime package (schemas' private annotations,
    # fixture ids, handler refs, semantic contracts and initial state must never reach the generator).
    checkout = Path(__file__).resolve().parent / "fixtures" / "evogenui_bench"
    backend = checkout / "runtime" / "tool_backends" / "pantry_ledger_v1.py"
    for file in sorted((checkout / "bench" / "task_subsets").glob("*_50/*.json")):
        document = json.loads(file.read_text())
        for prompts in ("own", "benchmark"):
            suite = _suite(benchmark_path=str(checkout), prompts=prompts, task_ids=[document["task_id"]])
            cases.append((suite, document, ["ledger-ids", "x-genui-derived-enum", "pantry_ledger_v1",
                                            backend.read_text()]))
    return cases


def test_payload_has_f2_shape_and_no_private_material(tmp_path: Path) -> None:
    checked = 0
    for suite, document, backend_private in _cases(tmp_path):
        (task,) = _load(suite)
        contract = suite.public_contract(task)
        system = suite.benchmark_prompts.generator_system if suite.benchmark_prompts else SYSTEM_PROMPT
        public_text = json.dumps(contract) + task.context + "".join(t.prompt for t in task.turns) + system
        private = _private_strings(document, public_text, backend_private)
        assert private, "the test must have private material to look for"
        for turn in task.turns:
            episode = _episode_for(task, turn)
            messages = _messages(suite, task, turn, episode)
            assert [m["role"] for m in messages] == ["system", "user"]
            payload = json.loads(messages[1]["content"])
            assert payload["current_user_request"] == turn.prompt
            assert payload["task"]["context"] == task.context
            assert [tool["name"] for tool in payload["task"]["tools"]] == [tool["name"] for tool in contract.get("tools", [])]
            for tool in payload["task"]["tools"]:  # the checkout's public contract also names the mode
                assert set(tool) in ({"name", "description", "inputSchema", "outputSchema"},
                                     {"name", "description", "mode", "inputSchema", "outputSchema"})
            assert payload["task"]["resources"] == contract.get("resources", [])
            assert len(payload["task"]["conversation_history"]) == 2 * (turn.index - 1)
            assert [p["turn"] for p in payload["previous_turns"]] == list(range(1, turn.index))
            for previous in payload["previous_turns"]:
                assert set(previous) == {"turn", "user_request", "assistant_text", "final_ui_text"}
                assert previous["user_request"] == task.turn(previous["turn"]).prompt
            if turn.index > 1:
                assert payload["previous_turn_source"] == {"turn": turn.index - 1, "files": episode.files}
            else:
                assert "previous_turn_source" not in payload
            whole = json.dumps(messages) + "".join(m["content"] for m in messages)
            leaked = [s for s in private if s in whole or json.dumps(s)[1:-1] in whole]
            assert not leaked, f"{task.id} turn {turn.index} leaks private material: {leaked[:3]}"
            checked += 1
    assert checked >= 2 + 20 + (15 if TOOL_GROUNDED_SAMPLE.is_file() else 0)


def test_previous_turn_source_names_the_turn_that_wrote_the_files(tmp_path: Path) -> None:
    suite = _suite(tasks_path=str(tiny_task.write_tiny_task(tmp_path / "tasks")))
    (task,) = _load(suite)
    task = task.model_copy(update={"turns": [task.turn(1), task.turn(2), task.turn(2).model_copy(update={"index": 3})]})
    episode = EpisodeState()
    _messages(suite, task, task.turn(1), episode)
    episode.files = {"src/App.jsx": "turn one"}
    episode.history.append(CompactTurn(1, "r1", "a1", "u1"))
    payload = json.loads(_messages(suite, task, task.turn(2), episode)[1]["content"])
    assert payload["previous_turn_source"]["turn"] == 1
    episode.history.append(CompactTurn(2, "r2", "invalid answer", ""))  # turn 2 returned no files
    payload = json.loads(_messages(suite, task, task.turn(3), episode)[1]["content"])
    assert payload["previous_turn_source"]["turn"] == 1


def test_history_turns_limits_the_compact_history(tmp_path: Path) -> None:
    suite = _suite(tasks_path=str(tiny_task.write_tiny_task(tmp_path / "tasks")), history_turns=0)
    (task,) = _load(suite)
    payload = json.loads(_messages(suite, task, task.turn(2), _episode_for(task, task.turn(2)))[1]["content"])
    assert payload["previous_turns"] == [] and payload["task"]["conversation_history"] == []
    assert payload["previous_turn_source"]["files"], "the latest source is always shown"


# --- tool bridge ------------------------------------------------------------------------------------


def test_tool_bridge_writes_start_state_and_an_empty_log(tmp_path: Path) -> None:
    suite = _suite(tasks_path=str(tiny_task.write_tiny_task(tmp_path / "tasks")))
    (task,) = _load(suite)
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    (evidence / "tool_log.jsonl").write_text('{"stale": "from a killed attempt"}\n')
    bridge = suite.tool_bridge(task, task.turn(1), EpisodeState(), evidence)
    assert bridge is not None
    assert bridge.fixture_ids == {name: tiny_task.FIXTURE_ID for name in ("notes_get_note", "notes_save_draft", "notes_save_note")}
    assert bridge.backends_path == tmp_path / "tasks" / "backends"
    assert bridge.log_out == evidence / "tool_log.jsonl" and bridge.log_out.read_text() == ""
    assert bridge.state_out == evidence / "state.json"
    initial = json.loads(bridge.state_in.read_text())
    assert initial == {"note": {"text": "", "version": 0}, "audit_secret": "PRIVATE-STATE-7f3a", "owner": "PRIVATE-TASKSTATE-91b"}
    carried = {"note": {"text": "kept", "version": 3}}
    bridge = suite.tool_bridge(task, task.turn(2), EpisodeState(runtime_state=carried), evidence)
    assert json.loads(bridge.state_in.read_text()) == carried


def test_backend_initial_state_function_wins(tmp_path: Path) -> None:
    folder = tiny_task.write_tiny_task(tmp_path / "tasks")
    backend = folder / "backends" / f"{tiny_task.FIXTURE_ID}.py"
    backend.write_text(backend.read_text() + "\n\ndef initial_state():\n    return {'note': {'text': 'seeded', 'version': 9}}\n")
    suite = _suite(tasks_path=str(folder))
    (task,) = _load(suite)
    bridge = suite.tool_bridge(task, task.turn(1), EpisodeState(), tmp_path)
    assert json.loads(bridge.state_in.read_text()) == {"note": {"text": "seeded", "version": 9}, "owner": "PRIVATE-TASKSTATE-91b"}


@needs_samples
def test_tasks_without_tools_have_no_bridge(tmp_path: Path) -> None:
    suite = _suite(tasks_path=str(SAMPLES), sub_suites=["presentation"])
    (task,) = _load(suite)
    assert suite.tool_bridge(task, task.turn(1), EpisodeState(), tmp_path) is None
    assert not (tmp_path / "tool_log.jsonl").exists()


# --- diagnostic mechanism on judged turns -----------------------------------------------------------


class _FixedJudge:
    name = "fixed"

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict

    async def score(self, judge_input: Any) -> Verdict:
        return self.verdict.model_copy(deep=True)


def test_judge_turn_labels_failures_but_never_changes_the_decision(tmp_path: Path) -> None:
    from runner.judges.base import JudgeInput
    from runner.turns.records import RequirementResult, RequirementStatus
    from runner.sandbox.base import BuildResult

    suite = _suite(tasks_path=str(tiny_task.write_tiny_task(tmp_path / "tasks")))
    (task,) = _load(suite)
    judge_input = JudgeInput(task=task, turn=task.turn(2), build=BuildResult(status="ok"), evidence=None, trace=None,
                             files={}, assistant_text="", out_dir=tmp_path)
    failed = Verdict(judge="rules", passed=False, requirements=[
        RequirementResult(id="readback_on_load", status=RequirementStatus.FAILED, reason="x")],
        raw={"checks": {"readback_on_load": {"steps": [], "assertions": [
            {"index": 0, "type": "tool_called", "status": "failed", "reason": "notes_get_note was not called"}]}}})
    verdict = asyncio.run(suite.judge_turn(_FixedJudge(failed), judge_input))
    assert verdict.passed is False and verdict.mechanism == "external_state_grounding"
    assert "mechanism: external_state_grounding" in verdict.summary
    labelled = failed.model_copy(update={"mechanism": "affordance_binding"})
    assert asyncio.run(suite.judge_turn(_FixedJudge(labelled), judge_input)).mechanism == "affordance_binding"
    passed = Verdict(judge="rules", passed=True)
    assert asyncio.run(suite.judge_turn(_FixedJudge(passed), judge_input)).mechanism is None


# --- summary ----------------------------------------------------------------------------------------

# Hand-made outcomes, 3 turns per task (P = passed, F = failed, B = blocked, X = provider error):
#   pres-a  P P P     pres-b  P F P     inter-a  F(invalid) B B     inter-b  P P X
# presentation: TP 5/6, TP@3 1/2, CPT (3+1)/2 = 2, APR 2/3 (pres-b's 2->3 is not eligible)
# interaction:  TP 2/6, TP@3 0,   CPT (0+2)/2 = 1, APR 1/1 (inter-b's 2->3 has e=0)
# Overall (Table 2): TP, TP@3, CPT = mean of the suites; APR pooled = 3/4.
_ROWS = {
    ("pres-a", "presentation"): "PPP",
    ("pres-b", "presentation"): "PFP",
    ("inter-a", "interaction"): "IBB",
    ("inter-b", "interaction"): "PPX",
}


def _records() -> list[TurnRecord]:
    records = []
    for (task_id, sub_suite), outcomes in _ROWS.items():
        for turn, code in enumerate(outcomes, start=1):
            fields: dict[str, Any] = {
                "P": {"status": FailureBucket.OK, "passed": True, "model_responded": True},
                "F": {"status": FailureBucket.OK, "passed": False, "model_responded": True,
                      "verdict": Verdict(judge="rules", passed=False, mechanism="derived_state_propagation")},
                "I": {"status": FailureBucket.INVALID_OUTPUT, "passed": False, "model_responded": True},
                "B": {"status": FailureBucket.BLOCKED, "passed": False},
                "X": {"status": FailureBucket.PROVIDER_ERROR, "passed": False},
            }[code]
            records.append(TurnRecord(task_id=task_id, suite="evogenui", sub_suite=sub_suite, turn=turn, **fields))
    return records


def _tasks() -> list[Task]:
    return [
        Task(id=task_id, suite="evogenui", sub_suite=sub_suite, turns=[TurnSpec(index=i, prompt="p") for i in (1, 2, 3)])
        for task_id, sub_suite in _ROWS
    ]


def test_summary_has_table2_reliability_and_mechanisms() -> None:
    summary = _suite(bootstrap_resamples=200).summarize(_records(), _tasks())
    assert summary["requested_slots"] == summary["recorded_slots"] == 12
    assert summary["turns_per_task"] == 3
    table = summary["table2"]
    assert table["columns"] == ["turn_pass", "tp_at_3", "cpt", "apr"]
    assert table["order"] == ["presentation", "interaction", "overall"]
    expected = {
        "presentation": {"turn_pass": 5 / 6, "tp_at_3": 0.5, "cpt": 2.0, "apr": 2 / 3},
        "interaction": {"turn_pass": 2 / 6, "tp_at_3": 0.0, "cpt": 1.0, "apr": 1.0},
        "overall": {"turn_pass": (5 / 6 + 2 / 6) / 2, "tp_at_3": 0.25, "cpt": 1.5, "apr": 3 / 4},
    }
    for row, values in expected.items():
        for metric, value in values.items():
            got = table["rows"][row][metric]
            assert got == pytest.approx(value), (row, metric)
            low, high = table["rows"][row][f"{metric}_ci"]
            assert low <= got + 1e-9 and got <= high + 1e-9, (row, metric, low, high)
    assert table["rows"]["interaction"]["tp_at_3_ci"] == [0.0, 0.0]
    reliability = summary["reliability"]
    assert reliability["presentation"]["turn_pass"] == pytest.approx(5 / 6)
    assert reliability["interaction"]["outcomes"]["no_response"] == 1
    assert reliability["interaction"]["outcomes"]["blocked"] == 2
    assert reliability["overall"]["independence_tp_at_3"] == pytest.approx(0.75 * 0.5 * 0.5)
    mechanisms = summary["failure_mechanisms"]
    assert mechanisms["presentation"]["derived_state_propagation"] == 1
    assert mechanisms["interaction"]["information_architecture"] == 1  # the invalid output
    assert sum(mechanisms["overall"].values()) == 2  # blocked and provider-error slots are not executed
    # Table 6: inter-a's two blocked slots follow its invalid output; 10 of 12 slots were executed.
    accounting = summary["slot_accounting"]
    assert accounting["blocked_after"] == {"invalid_output": 2}
    assert (accounting["executed"], accounting["total"]) == (10, 12)
    json.dumps(summary, allow_nan=False)  # summary.json holds no NaN


def test_summary_is_deterministic_and_prints(capsys: pytest.CaptureFixture[str]) -> None:
    from rich.console import Console

    from runner.suites.evogenui.report import print_table2, table2_rows

    first = _suite(bootstrap_resamples=100).summarize(_records(), _tasks())
    second = _suite(bootstrap_resamples=100).summarize(_records(), _tasks())
    assert first == second
    rows = table2_rows(first["table2"])
    assert rows[0][:6] == ["Presentation", "2", "83.3", "50.0", "2.00", "66.7"]
    assert rows[4][:6] == ["Overall", "4", "58.3", "25.0", "1.50", "75.0"]
    print_table2(Console(width=100, force_terminal=False), first["table2"])
    assert "Interaction" in capsys.readouterr().out


def test_summary_with_mixed_lengths_skips_episode_metrics() -> None:
    tasks = _tasks()
    tasks[0] = tasks[0].model_copy(update={"turns": tasks[0].turns[:2]})
    summary = _suite().summarize([r for r in _records() if not (r.task_id == "pres-a" and r.turn == 3)], tasks)
    assert "table2" not in summary and "reliability_note" in summary


# --- whole runs (command line) ---------------------------------------------------------------------


def _run(*overrides: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(runner_command("suite=evogenui", "tracking=off", *overrides), cwd=REPO_ROOT, env=cli_env(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
@needs_samples
def test_cli_official_tool_grounded_sample_fails_clearly(tmp_path: Path) -> None:
    result = _run(f"suite.tasks_path={SAMPLES}", "model=null", f"hydra.run.dir={tmp_path / 'run'}", timeout=120)
    assert result.returncode == 2
    assert PLANT_FIXTURE in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "run" / "turns.jsonl").exists()


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.build
@pytest.mark.sandbox
def test_cli_oracle_passes_and_carries_tool_state_between_turns(tmp_path: Path) -> None:
    folder = tiny_task.write_tiny_task(tmp_path / "tasks")
    run_dir = tmp_path / "run"
    result = _run(f"suite.tasks_path={folder}", "model=oracle", "judge=rules", f"hydra.run.dir={run_dir}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == str(run_dir)
    records = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    assert sorted((r["turn"], r["status"], r["passed"]) for r in records) == [(1, "ok", True), (2, "ok", True)]
    evidence = run_dir / "evidence" / tiny_task.TASK_ID
    log_1 = [json.loads(line) for line in (evidence / "1" / "tool_log.jsonl").read_text().splitlines()]
    saves = [entry for entry in log_1 if entry["tool"] == "notes_save_note"]
    assert saves and saves[0]["ok"] and saves[0]["state_before"]["note"]["text"] == ""
    assert saves[0]["state_after"]["note"]["text"] == tiny_task.NOTE
    carried = json.loads((evidence / "1" / "state_carried.json").read_text())
    assert json.loads((evidence / "2" / "state_in.json").read_text()) == carried
    assert carried["note"] == {"text": tiny_task.NOTE, "version": 1}, "the user's save, not the judge's check calls"
    log_2 = [json.loads(line) for line in (evidence / "2" / "tool_log.jsonl").read_text().splitlines()]
    reads = [entry for entry in log_2 if entry["tool"] == "notes_get_note"]
    assert reads and reads[0]["result"]["text"] == tiny_task.NOTE
    request = (evidence / "2" / "request.json").read_text()
    assert not [marker for marker in tiny_task.PRIVATE_MARKERS if marker in request]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["table2"]["rows"]["tool_grounded"]["turn_pass"] == 1.0
    assert summary["table2"]["rows"]["overall"]["tp_at_2"] == 1.0
    assert summary["reliability"]["overall"]["apr"] == 1.0
    assert "Table 2 shape" in result.stderr


@pytest.mark.slow
def test_cli_null_model_is_invalid_then_blocked(tmp_path: Path) -> None:
    folder = tiny_task.write_tiny_task(tmp_path / "tasks")
    run_dir = tmp_path / "run"
    result = _run(f"suite.tasks_path={folder}", "model=null", f"hydra.run.dir={run_dir}")
    assert result.returncode == 0, result.stderr[-3000:]
    records = sorted((json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()), key=lambda r: r["turn"])
    # EvoGenUI-Bench §4.3: an empty answer is still a response (e = 1, p = 0); a blocked slot was never asked.
    assert [(r["status"], r["model_call"]) for r in records] == [("invalid_output", "answered"), ("blocked", "not_called")]
    summary = json.loads((run_dir / "summary.json").read_text())
    overall = summary["reliability"]["overall"]
    assert summary["turn_pass"] == 0.0 and overall["outcomes"]["blocked"] == 1
    assert overall["outcomes"]["no_response"] == 0 and overall["outcomes"]["failed"] == 1  # answered, failed
    assert summary["table2"]["rows"]["overall"]["turn_pass"] == 0.0
    assert summary["table2"]["rows"]["overall"]["apr"] is None  # no eligible transition
