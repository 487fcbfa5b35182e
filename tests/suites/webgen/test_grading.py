"""WebGen-Bench's test.jsonl loader, the tester's answer, the verdict and the accuracy summary (no browser)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.turns.evidence import Evidence, Trace, TraceStep
from runner.judges.base import JudgeInput
from runner.turns.records import FailureBucket, RequirementStatus, TurnRecord
from runner.sandbox.base import BuildResult
from runner.suites.webgen.format import WebGenFormatError, load_webgen_tasks
from runner.suites.webgen.outcome import accuracy_summary, answer_of
from runner.suites.webgen.suite import WebGenSuiteSettings, grade

SAMPLE = Path(__file__).parent / "fixtures" / "test.sample.jsonl"


def test_the_five_samples_load_as_single_turn_tasks_with_their_test_cases() -> None:
    tasks = load_webgen_tasks(SAMPLE)
    assert [task.id for task in tasks] == ["000001", "000002", "000003", "000004", "000005"]
    assert all(len(task.turns) == 1 for task in tasks)
    first = tasks[0].turn(1)
    assert first.prompt.startswith("Please implement a website for generating stock reports")
    assert [r.id for r in first.requirements] == [f"tc{i}" for i in range(1, 8)]
    assert first.extra["test_cases"][0]["category"] == "Functional Testing"
    assert "Expected result: The system returns relevant stock information" in first.requirements[0].description
    assert tasks[0].sub_suite == "Data Management"
    assert sum(len(task.turn(1).requirements) for task in tasks) == 31


def test_a_bad_line_names_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()[:2]]
    del rows[1]["ui_instruct"][0]["expected_result"]
    path = tmp_path / "test.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows))
    with pytest.raises(WebGenFormatError, match=r"test.jsonl:2: ui_instruct.0.expected_result: Field required"):
        load_webgen_tasks(path)
    path.write_text("{not json")
    with pytest.raises(WebGenFormatError, match=r"test.jsonl:1: not a JSON object"):
        load_webgen_tasks(path)


def test_tester_options_are_validated_and_its_model_comes_from_the_role() -> None:
    with pytest.raises(ValueError, match="max_steps"):
        WebGenSuiteSettings(name="webgen", tester={"max_steps": 0})
    with pytest.raises(ValueError, match="roles.tester"):
        WebGenSuiteSettings(name="webgen", tester={"model": {"provider": "openai"}})


def finish(summary: str, *, finished: bool = True) -> Trace:
    step = TraceStep(index=0, action={"kind": "finish", "success": summary.startswith("YES"), "summary": summary})
    return Trace(actor="llm", steps=[step], finished=finished)


def test_the_answer_is_the_first_word_of_the_finish_summary() -> None:
    assert answer_of(finish("YES: the report lists the stock")) == "YES"
    assert answer_of(finish("partial - only two of three fields")) == "PARTIAL"
    assert answer_of(finish("NO, nothing happens")) == "NO"
    assert answer_of(finish("NOTHING to see")) is None  # a word that merely starts like an answer
    assert answer_of(finish("YES", finished=False)) is None  # budget ran out: no answer
    assert answer_of(None) is None


def judge_input(task, *, build_ok: bool = True, answers: dict[str, str | None], blank: bool = False) -> JudgeInput:
    build = BuildResult("ok" if build_ok else "failed", log="")
    cases = [{"id": case_id, "answer": answer, "stop_reason": "finished by the actor"}
             for case_id, answer in answers.items()]
    return JudgeInput(task=task, turn=task.turn(1), build=build, evidence=Evidence(url="http://x", blank=blank),
                      trace=None, files={}, assistant_text="", out_dir=Path("."),
                      suite_context={"test_cases": cases})


def test_grade_scores_yes_partial_no_and_leaves_a_silent_tester_unassessed() -> None:
    task = load_webgen_tasks(SAMPLE)[1]  # five test cases
    verdict = grade(judge_input(task, answers={"tc1": "YES", "tc2": "PARTIAL", "tc3": "NO", "tc4": None, "tc5": "YES"}))
    assert verdict.scores == {"case:tc1": 1.0, "case:tc2": 0.5, "case:tc3": 0.0, "case:tc5": 1.0, "accuracy": 0.625}
    assert [r.status for r in verdict.requirements] == [
        RequirementStatus.PASSED, RequirementStatus.FAILED, RequirementStatus.FAILED, RequirementStatus.UNASSESSED,
        RequirementStatus.PASSED]
    assert verdict.passed is False
    all_yes_but_one_silent = grade(judge_input(task, answers={"tc1": "YES", "tc2": "YES", "tc3": None,
                                                               "tc4": "YES", "tc5": "YES"}))
    assert all_yes_but_one_silent.passed is None  # never a pass for an unchecked case


def test_a_site_that_does_not_build_or_start_misses_every_case() -> None:
    task = load_webgen_tasks(SAMPLE)[1]
    for verdict in (grade(judge_input(task, build_ok=False, answers={})),
                    grade(judge_input(task, blank=True, answers={"tc1": "YES"}))):
        assert verdict.passed is False
        assert set(verdict.scores.values()) == {0.0} and len(verdict.scores) == 5


def record(task_id: str, status: FailureBucket, scores: dict[str, float]) -> TurnRecord:
    return TurnRecord(task_id=task_id, suite="webgen", turn=1, status=status, evidence_dir="e", scores=scores)


def test_accuracy_over_cases_per_category_with_misses_zero_and_infra_unassessed() -> None:
    tasks = load_webgen_tasks(SAMPLE)[:4]  # 7 + 5 + 5 + 7 cases
    first = {f"case:tc{i}": score for i, score in enumerate([1.0, 1.0, 0.5, 0.0, 1.0, 1.0, 1.0], start=1)}
    records = [
        record("000001", FailureBucket.OK, first),
        record("000002", FailureBucket.BUILD_FAILED, {}),  # a miss: 5 zeros
        record("000003", FailureBucket.INFRA, {}),  # the harness failed: 5 unassessed
        # 000004 has no record: a miss
    ]
    summary = accuracy_summary(records, tasks)
    assert summary["test_cases"] == 24
    assert summary["assessed_cases"] == 19 and summary["unassessed_cases"] == 5 and summary["missed_cases"] == 12
    assert summary["accuracy"] == pytest.approx(5.5 / 19)
    assert summary["answers"] == {"NO": 1, "PARTIAL": 1, "YES": 5}
    categories = [case["category"] for case in tasks[0].turn(1).extra["test_cases"]]
    functional = [s for s, c in zip(first.values(), categories) if c == "Functional Testing"]
    misses_functional = sum(c["category"] == "Functional Testing" for t in (tasks[1], tasks[3])
                            for c in t.turn(1).extra["test_cases"])
    assert summary["accuracy_by_category"]["Functional Testing"] == pytest.approx(
        sum(functional) / (len(functional) + misses_functional))
    assert summary["accuracy_by_app_category"]["Data Management"] == pytest.approx(5.5 / 14)
