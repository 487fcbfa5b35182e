"""basic_summary: every requested slot is in the denominator, also one that left no record."""

from __future__ import annotations

import pytest

from runner.metrics.basic import basic_summary, turn_pass_rate
from runner.turns.records import FailureBucket, TurnRecord


def _passed(task: str, turn: int) -> TurnRecord:
    return TurnRecord(task_id=task, suite="smoke", turn=turn, status=FailureBucket.OK, passed=True)


def test_missing_slots_count_as_failures() -> None:
    """2 tasks of 5 turns requested, 1 recorded with 5 passes: TP 5/10 = 0.5, 5 slots missing."""
    records = [_passed("t1", turn) for turn in range(1, 6)]
    summary = basic_summary(records, requested_slots=10)
    assert summary["turn_pass"] == pytest.approx(0.5)
    assert summary["missing_slots"] == 5
    assert summary["recorded_slots"] == 5
    assert turn_pass_rate(records) == 1.0, "without a requested count the recorded slots are the denominator"
