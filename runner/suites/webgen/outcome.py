"""A test case's outcome from the tester's trace, and the suite's accuracy over test cases.

WebGen-Bench grades each `ui_instruct` test case by a browser agent that answers YES, PARTIAL or NO, scored
1, 0.5 and 0; accuracy is the mean score over test cases. A site that fails to build or to load scores 0 on
every test case (a miss). A tester that gives no answer leaves its case unassessed (None): never a 0 and
never a pass; an infra failure leaves every case of its slot unassessed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from runner.turns.evidence import Trace
from runner.turns.records import FailureBucket, TurnRecord

SCORES: dict[str, float] = {"YES": 1.0, "PARTIAL": 0.5, "NO": 0.0}

TESTER_INSTRUCTIONS = """You test one feature of a generated website for a benchmark. You get one test case: \
an operation to perform and the result it should produce. Perform the operation through the visible page only \
(click, type, select, scroll), starting from the page as it is, then compare what the page shows with the \
expected result.

Finish with the finish action. Its summary must start with exactly one word, then a short reason:
  YES      the expected result appears in full
  PARTIAL  some of the expected result appears, or it works only in part
  NO       the operation cannot be done or the expected result does not appear
Set success to true only for YES."""

_ANSWER = re.compile(r"^\W*(YES|PARTIAL|NO)\b")


def answer_of(trace: Trace | None) -> str | None:
    """YES / PARTIAL / NO from a finished trace's final summary; None when the tester gave none."""
    if trace is None or not trace.finished or not trace.steps:
        return None
    summary = str(trace.steps[-1].action.get("summary") or "")
    match = _ANSWER.match(summary.upper())
    return match.group(1) if match else None


_MISSES = {FailureBucket.BUILD_FAILED, FailureBucket.RUNTIME_ERROR, FailureBucket.INVALID_OUTPUT,
           FailureBucket.PROVIDER_ERROR, FailureBucket.TIMEOUT, FailureBucket.BLOCKED}


def case_scores(record: TurnRecord | None, cases: list[dict[str, Any]]) -> dict[str, float | None]:
    """Test case id -> score of one slot's record; a missing record or a failed site is a miss (0)."""
    if record is None or record.status in _MISSES:
        return {case["id"]: 0.0 for case in cases}
    if record.status is not FailureBucket.OK:  # infra, judge_error, truncated: the harness or judge failed
        return {case["id"]: None for case in cases}
    return {case["id"]: record.scores.get(f"case:{case['id']}") for case in cases}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def accuracy_summary(records: list[TurnRecord], tasks: list[Any]) -> dict[str, Any]:
    """Accuracy over the assessed test cases of every requested task, overall, per test-case category and per
    application category (the task's primary category); unassessed cases are counted apart."""
    by_slot = {(record.task_id, record.turn): record for record in records}
    overall: list[float] = []
    by_category: dict[str, list[float]] = defaultdict(list)
    by_app: dict[str, list[float]] = defaultdict(list)
    answers: dict[str, int] = defaultdict(int)
    unassessed = misses = 0
    for task in tasks:
        for turn in task.turns:
            cases = turn.extra["test_cases"]
            record = by_slot.get((task.id, turn.index))
            scores = case_scores(record, cases)
            missed = record is None or record.status in _MISSES
            for case in cases:
                score = scores[case["id"]]
                if score is None:
                    unassessed += 1
                    continue
                misses += missed
                overall.append(score)
                by_category[case["category"]].append(score)
                by_app[task.sub_suite].append(score)
                if not missed:
                    answers[{1.0: "YES", 0.5: "PARTIAL", 0.0: "NO"}[score]] += 1
    return {
        "accuracy": _mean(overall),
        "test_cases": sum(len(turn.extra["test_cases"]) for task in tasks for turn in task.turns),
        "assessed_cases": len(overall),
        "unassessed_cases": unassessed,
        "missed_cases": misses,  # cases of sites that did not build or start (scored 0)
        "answers": dict(sorted(answers.items())),
        "accuracy_by_category": {name: _mean(values) for name, values in sorted(by_category.items())},
        "accuracy_by_app_category": {name: _mean(values) for name, values in sorted(by_app.items())},
    }
