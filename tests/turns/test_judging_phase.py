"""merge_verdict: a slot's final record from its frozen pre-verdict record and the judge's answer."""

from __future__ import annotations

from runner.judges.base import JudgeError, JudgeTruncated
from runner.turns.judging_phase import merge_verdict
from runner.turns.packets import EvidencePacket
from runner.turns.records import FailureBucket, TurnRecord, Verdict
from runner.sandbox.base import BuildResult
from runner.turns.tasks import Task, TurnSpec

TASK = Task(id="t", suite="smoke", turns=[TurnSpec(index=1, prompt="p")])


def _packet(status: FailureBucket, build: str = "ok") -> EvidencePacket:
    record = TurnRecord(task_id="t", suite="smoke", turn=1, status=status, judge="old",
                        scores={"interaction_rate": 0.5}, model_responded=True)
    return EvidencePacket(task=TASK, turn_index=1, record=record, judged=True, build=BuildResult(status=build))


def test_a_passing_verdict_passes_and_execution_scores_win() -> None:
    verdict = Verdict(judge="new", passed=True, scores={"interaction_rate": 0.9, "s": 1.0})
    record = merge_verdict(_packet(FailureBucket.OK), verdict, judge_name="new")
    assert (record.status, record.passed, record.judge) == (FailureBucket.OK, True, "new")
    assert record.scores == {"interaction_rate": 0.5, "s": 1.0}


def test_a_runtime_error_never_passes_and_a_judge_error_is_its_bucket() -> None:
    """A judge that gave no usable verdict decided nothing: judge_error, passed None (neither pass nor fail)."""
    verdict = Verdict(judge="new", passed=True)
    assert merge_verdict(_packet(FailureBucket.RUNTIME_ERROR), verdict, judge_name="new").passed is False
    failed = merge_verdict(_packet(FailureBucket.OK), JudgeError("no answer"), judge_name="new")
    assert (failed.status, failed.passed, failed.error, failed.verdict) == (FailureBucket.JUDGE_ERROR, None, "no answer", None)


def test_a_verdict_cut_at_the_output_cap_is_truncated_with_role_tokens_and_cap() -> None:
    cut = {"role": "judge", "model": "kimi-k2.6", "finish_reason": "length", "in": "reasoning",
           "completion_tokens": 8192, "reasoning_tokens": 8192, "answer_tokens": 0, "max_tokens": 8192}
    record = merge_verdict(_packet(FailureBucket.OK), JudgeTruncated("verdict truncated", cut=cut), judge_name="new")
    assert (record.status, record.passed, record.verdict) == (FailureBucket.TRUNCATED, None, None)
    assert record.extra["truncated"] == cut and record.error == "verdict truncated"


def test_a_failed_build_keeps_its_bucket_and_carries_the_verdict() -> None:
    verdict = Verdict(judge="new", passed=False)
    record = merge_verdict(_packet(FailureBucket.BUILD_FAILED, build="build_failed"), verdict, judge_name="new")
    assert (record.status, record.passed, record.verdict) == (FailureBucket.BUILD_FAILED, False, verdict)
    errored = merge_verdict(_packet(FailureBucket.BUILD_FAILED, build="build_failed"), JudgeError("x"), judge_name="new")
    assert errored.status is FailureBucket.BUILD_FAILED and errored.verdict is None


def test_the_packet_round_trips_through_json(tmp_path) -> None:
    from runner.turns.packets import read_packet, write_packet

    packet = _packet(FailureBucket.OK)
    packet.checks = {"r": {"status": "passed", "reason": ""}}
    packet.page_errors = ["boom"]
    write_packet(tmp_path, packet)
    again = read_packet(tmp_path)
    assert again.to_json() == packet.to_json()
    judge_input = again.judge_input(tmp_path)
    assert judge_input.session is None and judge_input.later_page_errors() == ["boom"]
    assert judge_input.check_outcomes == {"r": {"status": "passed", "reason": ""}}
