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


def test_the_colour_penalty_is_perceptual_by_default_and_the_summary_says_which_was_used():
    from runner.suites.registry import build_suite
    from runner.suites.web2code.image import JND_DELTA_E, PerceptualColour
    from tests.conftest import REPO_ROOT

    task = Task(id="page-1", suite="micro", sub_suite="chain", turns=[TurnSpec(index=1, prompt="a")])
    records = [_record(1, FailureBucket.OK, 0.8)]
    suite = build_suite({"name": "micro"}, project_root=REPO_ROOT)
    assert suite.perceptual_colour == PerceptualColour(delta_e=JND_DELTA_E, shift_px=1)
    assert suite.summarize(records, [task])["color_penalty"] == {"mode": "perceptual", "delta_e": 2.3, "shift_px": 1}
    earlier = build_suite({"name": "micro", "color_penalty": "any_pixel"}, project_root=REPO_ROOT)
    assert earlier.perceptual_colour is None
    assert earlier.summarize(records, [task])["color_penalty"] == {"mode": "any_pixel", "tau": 0}
