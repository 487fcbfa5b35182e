"""Reliability metrics (EvoGenUI-Bench §4.3 / Appendix C.2) against hand-computed outcome matrices."""

from __future__ import annotations

import json
import math

import pytest

from runner.metrics.reliability import (
    Outcome,
    apr,
    apr_counts,
    bootstrap_ci,
    bootstrap_ratio_ci,
    build_matrix,
    countable_apr,
    countable_cpt,
    countable_tp_at_k,
    countable_turn_pass,
    cpt,
    independence_cpt,
    independence_tp_at_k,
    outcome_of,
    per_position_pass,
    ratio_terms,
    summarize,
    tp_at_k,
    turn_pass,
)
from runner.turns.records import FailureBucket, ModelCall, TurnRecord

P, F, B, NR, U = "passed", "failed", "blocked", "no_response", "unassessed"

# Four five-turn episodes with every kind of slot.
MIXED = [
    [P, P, F, P, P],  # T1
    [P, P, P, P, P],  # T2
    [P, NR, B, B, B],  # T3: provider failure at turn 2, later turns blocked
    [F, P, U, P, NR],  # T4: unassessed turn 3, provider failure at turn 5
]


def test_turn_pass_counts_every_requested_slot() -> None:
    # passes: T1 4 + T2 5 + T3 1 + T4 2 = 12 over 4*5 = 20 slots
    assert turn_pass(MIXED) == pytest.approx(12 / 20)


def test_tp_at_5_is_all_five_turns_pass_macro_averaged() -> None:
    # only T2 passes all five turns: 1 / 4 tasks
    assert tp_at_k(MIXED, k=5) == pytest.approx(0.25)
    # first two turns: T1 and T2 -> 2 / 4
    assert tp_at_k(MIXED, k=2) == pytest.approx(0.5)


def test_cpt_is_initial_run_length_in_turns() -> None:
    # initial runs: T1 2, T2 5, T3 1, T4 0 -> (2+5+1+0)/4 = 2.0 (not normalised)
    assert cpt(MIXED) == pytest.approx(2.0)


def test_apr_pools_eligible_transitions_and_excludes_no_response() -> None:
    # T1: P>P ret, P>F elig, F>P not elig, P>P ret      -> 2 / 3
    # T2: four P>P                                      -> 4 / 4
    # T3: P>NR has e_t=0 (not eligible); rest p_{t-1}=0 -> 0 / 0
    # T4: F>P no, P>U elig not ret, U>P no, P>NR e_t=0  -> 0 / 1
    # pooled: (2+4+0+0) / (3+4+0+1) = 6 / 8
    assert tuple(apr_counts(MIXED)) == (6, 8)
    assert apr(MIXED) == pytest.approx(0.75)
    # pooling differs from macro-averaging per task ((2/3 + 1 + 0) / 3 = 0.556)
    assert apr(MIXED) != pytest.approx((2 / 3 + 1 + 0) / 3)


def test_per_position_pass_and_independence_baseline() -> None:
    # t1 P,P,P,F = .75; t2 P,P,NR,P = .75; t3 F,P,B,U = .25; t4 P,P,B,P = .75; t5 P,P,B,NR = .5
    assert per_position_pass(MIXED) == pytest.approx([0.75, 0.75, 0.25, 0.75, 0.5])
    # eq. 2: .75 * .75 * .25 * .75 * .5 = 0.052734375
    assert independence_tp_at_k(MIXED, 5) == pytest.approx(0.052734375)
    # E[CPT] = .75 + .5625 + .140625 + .10546875 + .052734375 = 1.611328125
    assert independence_cpt(MIXED) == pytest.approx(1.611328125)


def test_countable_only_variants_remove_no_response_slots() -> None:
    # TP: 20 slots minus 2 no-response = 18 countable, 12 passes -> 2/3
    assert countable_turn_pass(MIXED) == pytest.approx(12 / 18)
    # episodes without a no-response slot: T1, T2 -> TP@5 (0+1)/2, CPT (2+5)/2
    assert countable_tp_at_k(MIXED, 5) == pytest.approx(0.5)
    assert countable_cpt(MIXED) == pytest.approx(3.5)
    # APR already excludes e=0 turns
    assert countable_apr(MIXED) == pytest.approx(0.75)


def test_all_pass() -> None:
    matrix = [[P] * 5, [P] * 5]
    assert turn_pass(matrix) == 1.0
    assert tp_at_k(matrix) == 1.0
    assert cpt(matrix) == 5.0
    assert tuple(apr_counts(matrix)) == (8, 8)  # 2 tasks * 4 transitions
    assert apr(matrix) == 1.0
    assert independence_tp_at_k(matrix) == 1.0
    assert independence_cpt(matrix) == 5.0


def test_all_fail_leaves_apr_undefined() -> None:
    matrix = [[F] * 5, [F, B, B, B, B]]
    assert turn_pass(matrix) == 0.0
    assert tp_at_k(matrix) == 0.0
    assert cpt(matrix) == 0.0
    assert tuple(apr_counts(matrix)) == (0, 0)
    assert math.isnan(apr(matrix))
    assert independence_tp_at_k(matrix) == 0.0


def test_all_no_response_has_no_countable_slots() -> None:
    matrix = [[NR] * 5]
    assert turn_pass(matrix) == 0.0  # official: still failures
    assert math.isnan(countable_turn_pass(matrix))
    assert math.isnan(countable_tp_at_k(matrix))
    assert math.isnan(countable_cpt(matrix))


def test_single_task() -> None:
    matrix = [[P, P, P, F, P]]
    assert turn_pass(matrix) == pytest.approx(0.8)  # 4 / 5
    assert tp_at_k(matrix) == 0.0
    assert cpt(matrix) == 3.0
    # P>P ret, P>P ret, P>F elig, F>P not eligible -> 2 / 3
    assert apr(matrix) == pytest.approx(2 / 3)
    # one task: every resample is that task, so the interval collapses on the estimate
    assert tuple(bootstrap_ci(matrix, turn_pass, n_resamples=50)) == pytest.approx((0.8, 0.8, 0.8))


def test_invalid_inputs() -> None:
    with pytest.raises(ValueError):
        turn_pass([])
    with pytest.raises(ValueError):
        turn_pass([["maybe"]])
    with pytest.raises(ValueError):
        tp_at_k([[P, P]], k=5)  # fewer turns than k
    with pytest.raises(ValueError):
        bootstrap_ci(MIXED, turn_pass, n_resamples=0)


def test_bootstrap_is_deterministic_and_contains_estimate() -> None:
    for statistic in (turn_pass, lambda m: tp_at_k(m, 5), cpt, apr):
        first = bootstrap_ci(MIXED, statistic, n_resamples=500, seed=7)
        again = bootstrap_ci(MIXED, statistic, n_resamples=500, seed=7)
        assert first == again
        assert first.low <= first.estimate <= first.high
    other = bootstrap_ci(MIXED, turn_pass, n_resamples=500, seed=8)
    assert other.estimate == pytest.approx(0.6)


def test_bootstrap_percentiles_by_hand() -> None:
    # Two episodes, one all-pass and one all-fail: a resample's TP@5 is 0 (prob 1/4), .5 (1/2) or
    # 1 (1/4), so the 2.5th percentile is 0 and the 97.5th is 1.
    interval = bootstrap_ci([[P] * 5, [F] * 5], lambda m: tp_at_k(m, 5), n_resamples=1000, seed=0)
    assert tuple(interval) == (0.5, 0.0, 1.0)


def _record(task: str, turn: int, sub_suite: str, **fields) -> TurnRecord:
    base = {"task_id": task, "suite": "evogenui", "sub_suite": sub_suite, "turn": turn}
    return TurnRecord(**{**base, "status": FailureBucket.OK, "model_responded": True, **fields})


def test_outcome_of_follows_the_mapping_order() -> None:
    ok = FailureBucket.OK
    assert outcome_of(_record("a", 1, "", status=ok, passed=True)) is Outcome.PASSED
    assert outcome_of(_record("a", 1, "", status=FailureBucket.BLOCKED, passed=False, model_responded=False)) is Outcome.BLOCKED
    assert outcome_of(_record("a", 1, "", status=FailureBucket.PROVIDER_ERROR, passed=False)) is Outcome.NO_RESPONSE
    # An empty, unparsable answer is still a response: countable, p = 0 (EvoGenUI-Bench §4.3).
    empty = _record("a", 1, "", status=FailureBucket.INVALID_OUTPUT, model_responded=True, model_call=ModelCall.ANSWERED)
    assert outcome_of(empty) is Outcome.FAILED
    assert outcome_of(_record("a", 1, "", status=ok, passed=None)) is Outcome.UNASSESSED
    assert outcome_of(_record("a", 1, "", status=FailureBucket.BUILD_FAILED, passed=False)) is Outcome.FAILED


def _records_for(task: str, sub_suite: str, row: list[str]) -> list[TurnRecord]:
    records = []
    for turn, outcome in enumerate(row, start=1):
        fields: dict = {"passed": outcome == P}
        if outcome == B:
            fields.update(status=FailureBucket.BLOCKED, model_responded=False)
        elif outcome == NR:
            fields.update(status=FailureBucket.PROVIDER_ERROR, model_responded=False)
        elif outcome == U:
            fields.update(passed=None)
        elif outcome == F:
            fields.update(status=FailureBucket.RUNTIME_ERROR)
        records.append(_record(task, turn, sub_suite, **fields))
    return records


def test_summarize_groups_by_sub_suite() -> None:
    records = (
        _records_for("t1", "presentation", MIXED[0])
        + _records_for("t2", "presentation", MIXED[1])
        + _records_for("t3", "interaction", MIXED[2])
        + _records_for("t4", "interaction", MIXED[3])
    )
    task_ids, matrix, missing = build_matrix(records, 5)
    assert task_ids == ["t1", "t2", "t3", "t4"]
    assert [[o.value for o in row] for row in matrix] == MIXED
    assert missing == 0

    summary = summarize(records, 5, n_resamples=200)
    json.dumps(summary, allow_nan=False)  # JSON-safe
    overall = summary["overall"]
    assert overall["turn_pass"] == pytest.approx(0.6)
    assert overall["tp_at_5"] == pytest.approx(0.25)
    assert overall["cpt"] == pytest.approx(2.0)
    assert overall["apr"] == pytest.approx(0.75)
    assert (overall["apr_retained"], overall["apr_eligible"]) == (6, 8)
    assert overall["outcomes"] == {"passed": 12, "failed": 2, "blocked": 3, "no_response": 2, "unassessed": 1,
                                   "infra": 0, "judge_error": 0, "truncated": 0, "missing": 0}
    assert overall["statuses"]["provider_error"] == 2
    for name in ("turn_pass", "tp_at_5", "cpt", "apr"):
        low, high = overall["ci"][name]
        assert low <= overall[name] <= high

    # presentation: T1, T2 -> TP 9/10, TP@5 1/2, CPT 3.5, APR (2+4)/(3+4) = 6/7
    presentation = summary["presentation"]
    assert presentation["turn_pass"] == pytest.approx(0.9)
    assert presentation["tp_at_5"] == pytest.approx(0.5)
    assert presentation["cpt"] == pytest.approx(3.5)
    assert presentation["apr"] == pytest.approx(6 / 7)
    # interaction: T3, T4 -> TP 3/10, TP@5 0, CPT 0.5, APR 0/1
    interaction = summary["interaction"]
    assert interaction["turn_pass"] == pytest.approx(0.3)
    assert interaction["cpt"] == pytest.approx(0.5)
    assert interaction["apr"] == 0.0
    # the paper's Table 2 "Overall": mean of suite values ((.9 + .3) / 2 = .6 here, equal sizes)
    assert overall["suite_mean"]["turn_pass"] == pytest.approx(0.6)
    assert overall["suite_mean"]["cpt"] == pytest.approx(2.0)


def test_summarize_counts_missing_slots_as_not_passed() -> None:
    records = _records_for("t1", "", [P, P, P])  # turns 4 and 5 never recorded
    summary = summarize(records, 5, n_resamples=20)
    assert summary["overall"]["missing_slots"] == 2
    assert summary["overall"]["turn_pass"] == pytest.approx(0.6)
    assert summary["overall"]["tp_at_5"] == 0.0
    assert set(summary) == {"overall"}
    with pytest.raises(ValueError):
        summarize(_records_for("t1", "", [P] * 6), 5)


def test_summarize_undefined_apr_is_null() -> None:
    summary = summarize(_records_for("t1", "tool_grounded", [F] * 5), 5, n_resamples=20)
    assert summary["tool_grounded"]["apr"] is None
    assert summary["tool_grounded"]["ci"]["apr"] == [None, None]


def test_vectorised_bootstrap_matches_generic_bootstrap() -> None:
    statistics = {"turn_pass": turn_pass, "tp_at_5": lambda m: tp_at_k(m, 5), "cpt": cpt, "apr": apr}
    for name, (numerators, denominators) in ratio_terms(MIXED, 5).items():
        generic = bootstrap_ci(MIXED, statistics[name], n_resamples=300, seed=3)
        fast = bootstrap_ratio_ci(numerators, denominators, n_resamples=300, seed=3)
        assert tuple(fast) == pytest.approx(tuple(generic), abs=1e-12), name
    # APR per task (retained, eligible) from the hand count above: T1 (2,3) T2 (4,4) T3 (0,0) T4 (0,1)
    assert ratio_terms(MIXED, 5)["apr"] == ([2, 4, 0, 0], [3, 4, 0, 1])


def test_apr_keeps_turns_that_timed_out_or_failed_in_the_harness_after_the_model_answered() -> None:
    """EvoGenUI-Bench §4.3: e = 0 only for provider failures. a = [pass, timeout (answered), blocked x3],
    b = five passes: eligible transitions a:1->2 and b:1->2..4->5 (5), retained b's 4: APR 4/5."""
    answered = {"model_call": ModelCall.ANSWERED, "model_responded": True}
    a = [
        _record("a", 1, "", status=FailureBucket.OK, passed=True, **answered),
        _record("a", 2, "", status=FailureBucket.TIMEOUT, passed=False, **answered),
    ] + [_record("a", t, "", status=FailureBucket.BLOCKED, passed=False, model_call=ModelCall.NOT_CALLED) for t in (3, 4, 5)]
    b = [_record("b", t, "", status=FailureBucket.OK, passed=True, **answered) for t in range(1, 6)]
    summary = summarize(a + b, 5, n_resamples=20)["overall"]
    assert (summary["apr_retained"], summary["apr_eligible"]) == (4, 5)
    assert summary["apr"] == pytest.approx(0.8)
    assert summary["countable_apr"] == pytest.approx(0.8)
    assert summary["countable_turn_pass"] == pytest.approx(6 / 10), "the timed-out turn stays countable"
    # A harness failure after the answer keeps e = 1 as well (only a provider failure has e = 0), but its
    # outcome was never observed: it is told apart from a model failure.
    infra = _record("a", 2, "", status=FailureBucket.INFRA, passed=False, **answered)
    assert outcome_of(infra) is Outcome.INFRA
    judge_error = _record("a", 2, "", status=FailureBucket.JUDGE_ERROR, passed=None, **answered)
    assert outcome_of(judge_error) is Outcome.JUDGE_ERROR
    no_answer = _record("a", 2, "", status=FailureBucket.TIMEOUT, passed=False, model_call=ModelCall.NO_RESPONSE)
    assert outcome_of(no_answer) is Outcome.NO_RESPONSE


def test_requested_tasks_without_records_count_as_failures() -> None:
    """2 tasks requested, 1 recorded (5 passes): TP 5/10 = 0.5, TP@5 1/2, CPT 5/2, 5 slots missing."""
    records = _records_for("t1", "presentation", [P] * 5)
    requested = {"t1": "presentation", "t2": "presentation"}
    task_ids, matrix, missing = build_matrix(records, 5, requested_tasks=requested)
    assert task_ids == ["t1", "t2"] and missing == 5
    assert [o.value for o in matrix[1]] == ["missing"] * 5
    summary = summarize(records, 5, n_resamples=20, requested_tasks=requested)
    overall = summary["overall"]
    assert overall["turn_pass"] == pytest.approx(0.5)
    assert overall["tp_at_5"] == pytest.approx(0.5)
    assert overall["cpt"] == pytest.approx(2.5)
    assert overall["n_tasks"] == 2 and overall["missing_slots"] == 5
    assert summary["presentation"]["n_tasks"] == 2


def test_unobserved_slots_after_a_pass_leave_apr_unchanged() -> None:
    """EvoGenUI-Bench eq. 3 by hand. a = [P, P, missing, P, P]: transitions 1->2 retained; 2->3 goes into a
    missing slot (no observed outcome: left out); 3->4 has p_{t-1} = 0; 4->5 retained: APR 2/2 = 1.
    b = [P, infra, P, F, P]: 1->2 left out, 2->3 not eligible, 3->4 failed, 4->5 not eligible: 0/1.
    Pooled: 2/3. The older reading (unobserved="fail") counts both as failed retentions: 2/5."""
    a = [P, P, "missing", P, P]
    b = [P, "infra", P, F, P]
    assert tuple(apr_counts([a])) == (2, 2) and apr([a]) == 1.0
    assert tuple(apr_counts([b])) == (0, 1)
    assert apr([a, b]) == pytest.approx(2 / 3)
    assert apr([[P, P, "judge_error", "missing", "missing"]]) == 1.0
    # The same matrices without the unobserved slots give the same APR: they change nothing.
    assert apr([[P, P]]) == apr([[P, P, "missing"]]) == apr([[P, P, "infra"]]) == 1.0
    assert tuple(apr_counts([a, b], unobserved="fail")) == (2, 5)
    assert apr([[P, P, "missing", P, P]], unobserved="fail") == pytest.approx(2 / 3)
    # Turn Pass still counts every requested slot (requested-slot accounting, §4.3).
    assert turn_pass([a]) == pytest.approx(4 / 5)
    with pytest.raises(ValueError, match="unobserved='drop'"):
        apr([a], unobserved="drop")  # type: ignore[arg-type]


def test_summary_reports_the_transitions_left_out_beside_apr() -> None:
    """Records: t1 = [P, P, infra, P, P] and t2 = [P, P] with turns 3-5 never recorded (missing).
    Eligible: t1 1->2, 4->5 (both retained), t2 1->2 (retained): APR 3/3. Left out: one infra, one missing."""
    answered = {"model_call": ModelCall.ANSWERED, "model_responded": True}
    ok, infra = FailureBucket.OK, FailureBucket.INFRA
    t1 = [_record("t1", t, "", status=infra if t == 3 else ok, passed=t != 3, **answered) for t in range(1, 6)]
    t2 = [_record("t2", t, "", status=ok, passed=True, **answered) for t in (1, 2)]
    overall = summarize(t1 + t2, 5, n_resamples=20)["overall"]
    assert overall["apr"] == 1.0 and (overall["apr_retained"], overall["apr_eligible"]) == (3, 3)
    assert overall["apr_unobserved"] == {"infra": 1, "judge_error": 0, "truncated": 0, "missing": 1}
    assert overall["apr_unobserved_policy"] == "exclude"
    assert overall["outcomes"]["infra"] == 1 and overall["outcomes"]["missing"] == 3
    old = summarize(t1 + t2, 5, n_resamples=20, unobserved="fail")["overall"]
    assert (old["apr_retained"], old["apr_eligible"]) == (3, 5)
