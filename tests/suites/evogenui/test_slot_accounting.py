"""Requested-slot accounting (EvoGenUI-Bench Table 6) against a hand-counted run."""

from __future__ import annotations

import pytest

from runner.suites.evogenui.slot_accounting import slot_accounting
from runner.turns.records import FailureBucket, TurnRecord

OK, BUILD, INVALID, BLOCKED, PROVIDER = (FailureBucket.OK, FailureBucket.BUILD_FAILED, FailureBucket.INVALID_OUTPUT,
                                         FailureBucket.BLOCKED, FailureBucket.PROVIDER_ERROR)


def _episode(task: str, statuses: list[FailureBucket]) -> list[TurnRecord]:
    return [TurnRecord(task_id=task, suite="evogenui", turn=turn, status=status, passed=status is OK)
            for turn, status in enumerate(statuses, start=1)]


def test_blocked_slots_are_split_by_the_upstream_cause() -> None:
    """a: ok, build_failed, blocked, blocked, blocked -> 3 blocked after a build failure;
    b: invalid_output, blocked x4 -> 4 blocked after an invalid output;
    c: ok, provider_error, blocked, ok, ok -> 1 blocked after a provider failure;
    d: ok, ok and turns 3-5 never recorded -> 3 missing; e requested but absent -> 5 missing.
    Executed: a 2 + b 1 + c 4 + d 2 = 9; blocked 8; missing 8; total 25."""
    records = (_episode("a", [OK, BUILD, BLOCKED, BLOCKED, BLOCKED]) + _episode("b", [INVALID] + [BLOCKED] * 4)
               + _episode("c", [OK, PROVIDER, BLOCKED, OK, OK]) + _episode("d", [OK, OK]))
    table = slot_accounting(records, {task: 5 for task in "abcde"})
    assert table["blocked_after"] == {"invalid_output": 4, "build_failed": 3, "provider_error": 1}
    assert (table["executed"], table["blocked"], table["missing"], table["total"]) == (9, 8, 8, 25)
    assert table["shares"]["blocked_after_build_failed"] == pytest.approx(3 / 25)
    assert table["shares"]["executed"] + table["shares"]["missing"] == pytest.approx(17 / 25)


def test_a_blocked_slot_whose_upstream_record_is_missing_is_unrecorded() -> None:
    records = _episode("a", [OK, OK, BLOCKED])
    del records[1]  # turn 2 never recorded
    assert slot_accounting(records, {"a": 3})["blocked_after"] == {"unrecorded": 1}


def test_the_run_prints_table6_and_what_apr_left_out() -> None:
    from rich.console import Console

    from runner.report.console import print_summary

    console = Console(record=True, width=120)
    summary = {"slot_accounting": slot_accounting(_episode("a", [OK, BUILD, BLOCKED, BLOCKED]), {"a": 4}),
               "reliability": {"overall": {"apr": 1.0, "apr_unobserved": {"infra": 1, "judge_error": 0, "missing": 2}}}}
    print_summary(console, summary, [])
    text = console.export_text()
    assert "blocked after earlier build failed" in text and "50.0%" in text
    assert "total requested slots" in text
    assert "infra 1, missing 2" in text
