"""MT-Web2Code summary: a slot's status and the score it contributes agree."""

from runner.turns.records import FailureBucket, TurnRecord
from runner.suites.web2code.suite import slot_scores, summarize_web2code
from runner.turns.tasks import Task, TurnSpec


def _record(turn: int, status: FailureBucket, score: float) -> TurnRecord:
    return TurnRecord(task_id="page-1", suite="micro", sub_suite="chain", turn=turn, status=status,
                      scores={"s_inbox": score, "s_outbox": score, "score": score})


def test_runtime_error_slot_contributes_no_score():
    records = [_record(1, FailureBucket.OK, 0.8), _record(2, FailureBucket.RUNTIME_ERROR, 1.0)]
    task = Task(id="page-1", suite="micro", sub_suite="chain",
                turns=[TurnSpec(index=1, prompt="a"), TurnSpec(index=2, prompt="b")])
    summary = summarize_web2code(records, [task], track="micro")
    assert summary["score"] == 0.4  # (0.8 + 0) / 2 requested slots, not (0.8 + 1.0) / 2
    assert summary["unassessed_turns"] == 1
    assert summary["web2code"]["table3"]["overall"]["scored_turns"] == 1
    assert summary["web2code"]["per_task"]["page-1"]["turn_scores"] == [0.8, None]
    assert slot_scores(records[1]) == {}
