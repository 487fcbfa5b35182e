"""The rule-based diagnostic failure taxonomy (§6.1) on hand-made verdicts and records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runner.judges.checks import Check
from runner.turns.records import (
    DimensionScore,
    FailureBucket,
    RequirementResult,
    RequirementStatus,
    TurnRecord,
    Verdict,
)
from runner.suites.evogenui.taxonomy import (
    DEFINITIONS,
    Mechanism,
    classify_turn,
    dom_text,
    is_executed_non_passing,
    mechanism_counts,
    parse_mechanism,
)
from runner.turns.tasks import Requirement, TurnSpec


def _requirement(rid: str, check: dict | None, kind: str = "evidence") -> Requirement:
    return Requirement(id=rid, description=rid, kind=kind, check=Check.model_validate(check) if check else None)


def _failed(rid: str, reason: str = "failed") -> RequirementResult:
    return RequirementResult(id=rid, status=RequirementStatus.FAILED, reason=reason)


def _verdict(results: list[RequirementResult], checks: dict[str, Any] | None = None, **fields: Any) -> Verdict:
    return Verdict(judge="rules", passed=False, requirements=results, raw={"checks": checks} if checks else None, **fields)


def _assertion(kind: str, index: int = 0) -> dict[str, Any]:
    return {"index": index, "type": kind, "status": "failed", "reason": f"{kind} failed"}


CLICK = {"action": "click", "target": {"role": "button", "name": "Go"}}


def test_six_mechanisms_with_the_papers_definitions() -> None:
    assert [m.value for m in Mechanism] == [
        "information_architecture",
        "domain_representation",
        "requirement_decomposition",
        "affordance_binding",
        "derived_state_propagation",
        "external_state_grounding",
    ]
    assert DEFINITIONS[Mechanism.AFFORDANCE_BINDING] == "visible but unwired controls"
    assert set(DEFINITIONS) == set(Mechanism)
    assert parse_mechanism("Derived-state propagation") is Mechanism.DERIVED_STATE_PROPAGATION
    assert parse_mechanism("nonsense") is None


def test_no_artifact_is_information_architecture() -> None:
    assert classify_turn(None, status=FailureBucket.INVALID_OUTPUT).mechanism is Mechanism.INFORMATION_ARCHITECTURE
    verdict = _verdict([_failed("r1", "artifact did not build")], failure_types=["build_failed"])
    assert classify_turn(verdict, build_ok=False).mechanism is Mechanism.INFORMATION_ARCHITECTURE
    blank = Verdict(judge="rules", passed=True)
    assert classify_turn(blank, blank=True).mechanism is Mechanism.INFORMATION_ARCHITECTURE


def test_tool_and_state_assertions_are_external_state_grounding() -> None:
    turn = TurnSpec(index=1, prompt="p", requirements=[_requirement("r1", {"assert": [{"type": "tool_called", "tool": "t"}]})])
    verdict = _verdict([_failed("r1")], {"r1": {"steps": [], "assertions": [_assertion("tool_called")]}})
    result = classify_turn(verdict, turn)
    assert result.mechanism is Mechanism.EXTERNAL_STATE_GROUNDING and result.basis.startswith("r1:")
    state_kind = TurnSpec(index=1, prompt="p", requirements=[_requirement("r1", None, kind="state")])
    assert classify_turn(_verdict([_failed("r1")]), state_kind).mechanism is Mechanism.EXTERNAL_STATE_GROUNDING


def test_controls_that_cannot_be_operated_or_change_nothing_are_affordance_binding() -> None:
    check = {"steps": [CLICK], "assert": [{"type": "mutation"}]}
    turn = TurnSpec(index=1, prompt="p", requirements=[_requirement("r1", check)])
    step_failed = {"steps": [{"index": 0, "action": CLICK, "ok": False, "error": "no element matches"}], "assertions": []}
    assert classify_turn(_verdict([_failed("r1")], {"r1": step_failed}), turn).mechanism is Mechanism.AFFORDANCE_BINDING
    no_change = {"steps": [{"index": 0, "action": CLICK, "ok": True}], "assertions": [_assertion("mutation")]}
    assert classify_turn(_verdict([_failed("r1")], {"r1": no_change}), turn).mechanism is Mechanism.AFFORDANCE_BINDING


def test_a_view_that_does_not_follow_an_action_is_derived_state_propagation() -> None:
    check = {"steps": [CLICK], "assert": [{"type": "text_visible", "text": "Total: 3"}]}
    turn = TurnSpec(index=2, prompt="p", requirements=[_requirement("r1", check)])
    detail = {"steps": [{"index": 0, "action": CLICK, "ok": True}], "assertions": [_assertion("text_visible")]}
    assert classify_turn(_verdict([_failed("r1")], {"r1": detail}), turn).mechanism is Mechanism.DERIVED_STATE_PROPAGATION


def test_static_text_hidden_missing_or_forbidden() -> None:
    check = {"assert": [{"type": "text_visible", "text": "Retraction date"}]}
    turn = TurnSpec(index=1, prompt="p", requirements=[_requirement("r1", check)])
    detail = {"r1": {"steps": [], "assertions": [_assertion("text_visible")]}}
    hidden = classify_turn(_verdict([_failed("r1")], detail), turn, dom="Header Retraction date 2021 footer")
    assert hidden.mechanism is Mechanism.INFORMATION_ARCHITECTURE
    missing = classify_turn(_verdict([_failed("r1")], detail), turn, dom="Header footer")
    assert missing.mechanism is Mechanism.REQUIREMENT_DECOMPOSITION
    forbidden = TurnSpec(index=1, prompt="p", requirements=[
        _requirement("r1", {"assert": [{"type": "text_visible", "text": "Water today", "present": False}]})])
    assert classify_turn(_verdict([_failed("r1")], detail), forbidden).mechanism is Mechanism.DOMAIN_REPRESENTATION
    count = TurnSpec(index=1, prompt="p", requirements=[
        _requirement("r1", {"assert": [{"type": "count", "target": {"css": "li"}, "equals": 5}]})])
    counted = {"r1": {"steps": [], "assertions": [_assertion("count")]}}
    assert classify_turn(_verdict([_failed("r1")], counted), count).mechanism is Mechanism.DOMAIN_REPRESENTATION


def test_majority_wins_and_author_hint_overrides() -> None:
    tool = {"assert": [{"type": "tool_called", "tool": "t"}]}
    turn = TurnSpec(
        index=1,
        prompt="p",
        requirements=[_requirement("a", tool), _requirement("b", tool), _requirement("c", {"assert": [{"type": "mutation"}]})],
        extra={"validation_contract": {"turn": 1, "evidence_requirements": [
            {"id": "c", "expect": "x", "mechanism": "Domain representation"}]}},
    )
    checks = {rid: {"steps": [], "assertions": [_assertion("tool_called")]} for rid in ("a", "b")}
    verdict = _verdict([_failed("c"), _failed("a"), _failed("b")], checks)
    assert classify_turn(verdict, turn).mechanism is Mechanism.EXTERNAL_STATE_GROUNDING
    only_c = _verdict([_failed("c")], checks)
    assert classify_turn(only_c, turn).mechanism is Mechanism.DOMAIN_REPRESENTATION


def test_passing_and_undecided_turns_are_not_classified() -> None:
    assert classify_turn(Verdict(judge="rules", passed=True)) is None
    undecided = Verdict(judge="rules", passed=None, requirements=[
        RequirementResult(id="r1", status=RequirementStatus.UNASSESSED, reason="no executable check")])
    assert classify_turn(undecided) is None


def test_model_verdicts_fall_back_to_keywords_then_decomposition() -> None:
    stale = Verdict(judge="llm", passed=False, failure_types=["stale_derived_view"],
                    dimensions={"execution": DimensionScore(score=2, reason="totals stay stale")})
    assert classify_turn(stale).mechanism is Mechanism.DERIVED_STATE_PROPAGATION
    vague = Verdict(judge="llm", passed=False, dimensions={"execution": DimensionScore(score=2, reason="weak")})
    assert classify_turn(vague).mechanism is Mechanism.REQUIREMENT_DECOMPOSITION
    errors = Verdict(judge="rules", passed=False, failure_types=["page_error"])
    assert classify_turn(errors).mechanism is Mechanism.AFFORDANCE_BINDING


def test_dom_text_strips_markup(tmp_path: Path) -> None:
    page = tmp_path / "dom.html"
    page.write_text("<html><style>p{}</style><script>var x='hidden';</script><p>Total&nbsp;<b>3</b></p></html>")
    assert dom_text(page) == "Total 3"
    assert dom_text(tmp_path / "missing.html") is None


def _record(task: str, sub: str, turn: int, status: FailureBucket, *, passed: bool | None = False,
            responded: bool = True, mechanism: str | None = None) -> TurnRecord:
    verdict = Verdict(judge="rules", passed=passed, mechanism=mechanism) if mechanism or status is FailureBucket.OK else None
    return TurnRecord(task_id=task, suite="evogenui", sub_suite=sub, turn=turn, status=status, passed=passed,
                      model_responded=responded, verdict=verdict)


@pytest.mark.parametrize(
    "status, responded, passed, expected",
    [
        (FailureBucket.OK, True, False, True),
        (FailureBucket.OK, True, None, True),
        (FailureBucket.OK, True, True, False),
        (FailureBucket.INVALID_OUTPUT, True, False, True),
        (FailureBucket.BLOCKED, False, False, False),
        (FailureBucket.PROVIDER_ERROR, False, False, False),
        (FailureBucket.INFRA, True, False, False),
    ],
)
def test_population_is_executed_non_passing(status, responded, passed, expected) -> None:
    assert is_executed_non_passing(_record("t", "s", 1, status, passed=passed, responded=responded)) is expected


def test_mechanism_counts_per_sub_suite() -> None:
    records = [
        _record("p1", "presentation", 1, FailureBucket.OK, mechanism="information_architecture"),
        _record("p1", "presentation", 2, FailureBucket.OK, passed=True),
        _record("i1", "interaction", 1, FailureBucket.INVALID_OUTPUT),
        _record("i1", "interaction", 2, FailureBucket.BLOCKED, responded=False),
        _record("i2", "interaction", 1, FailureBucket.OK, passed=None),
    ]
    counts = mechanism_counts(records)
    assert counts["overall"]["information_architecture"] == 2
    assert counts["overall"]["unclassified"] == 1
    assert counts["presentation"]["information_architecture"] == 1
    assert counts["interaction"] == {**{m.value: 0 for m in Mechanism}, "information_architecture": 1, "unclassified": 1}
