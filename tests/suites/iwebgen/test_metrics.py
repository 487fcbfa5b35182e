"""BSR (first pass and after repair), IR per app and pooled, the score table, on hand-made records."""

from __future__ import annotations

import pytest

from runner.turns.records import DimensionScore, FailureBucket, TurnRecord, Verdict
from runner.suites.iwebgen.metrics import app_row, iwebgen_summary
from runner.turns.tasks import Task, TurnSpec


def _task(task_id: str, domain: str) -> Task:
    return Task(id=task_id, suite="iwebgen", sub_suite=domain, domain=domain, turns=[TurnSpec(index=1, prompt="p")])


def _record(task_id: str, *, built: bool, ir: tuple[int, int] | None = None, builds: list[bool] | None = None,
            judged: dict[str, float | None] | None = None, rule: float = 5.0) -> TurnRecord:
    extra: dict = {"build_status": "ok" if built else "build_failed"}
    if builds is not None:
        extra["generation"] = {"strategy": "self_repair", "rounds": len(builds), "builds": builds}
    scores = {}
    if ir is not None:
        scores = {"interaction_rate": ir[0] / ir[1], "ir_responsive": float(ir[0]), "ir_actions": float(ir[1])}
    dims = {name: DimensionScore(score=value) for name, value in (judged or {}).items()}
    dims["rule"] = DimensionScore(score=rule if built else 0.0)
    return TurnRecord(task_id=task_id, suite="iwebgen", turn=1, status=FailureBucket.OK if built else FailureBucket.BUILD_FAILED,
                      passed=None, scores=scores, extra=extra, verdict=Verdict(judge="x", passed=None, dimensions=dims))


JUDGED = {"visual": 20.0, "interaction": 30.0, "topic": 10.0, "clarity": 8.0}


def test_bsr_first_pass_and_after_repair_and_ir() -> None:
    tasks = [_task("a", "Biology"), _task("b", "Biology"), _task("c", "HCI"), _task("d", "HCI")]
    records = [
        _record("a", built=True, ir=(3, 4), judged=JUDGED),
        _record("b", built=True, ir=(1, 1), builds=[False, True], judged=JUDGED),  # repaired in round 2
        _record("c", built=False, builds=[False, False]),
        # "d": never recorded; an app that does not build
    ]
    summary = iwebgen_summary(records, tasks)
    assert summary["bsr"] == 0.5 and summary["bsr_first_pass"] == 0.25
    assert summary["ir"] == pytest.approx((0.75 + 1.0) / 2)  # mean over probed apps
    assert summary["ir_pooled"] == pytest.approx(4 / 5)  # all responsive actions over all actions
    biology, hci = summary["domains"]["Biology"], summary["domains"]["HCI"]
    assert (biology["bsr"], biology["bsr_first_pass"], biology["ir"]) == (1.0, 0.5, pytest.approx(0.875))
    assert (hci["bsr"], hci["ir"], hci["score"]) == (0.0, None, 0.0)  # no IR where nothing built (Table 2 '--')
    # 100-point score: built apps 20 + 30 + 10 + 8 + 5 = 73, the two that did not build 0 (C.3).
    assert summary["score"] == pytest.approx(73 * 2 / 4)
    assert summary["dimensions"] == {"V": 10.0, "I": 15.0, "T": 5.0, "C": 4.0, "R": 2.5}


def test_unassessed_judged_points_stay_none_never_zero() -> None:
    tasks = [_task("a", "Economics"), _task("b", "Economics")]
    records = [_record("a", built=True, ir=(2, 2), judged={k: None for k in JUDGED}, rule=4.0),
               _record("b", built=False)]
    row = app_row(tasks[0], records[0])
    assert (row["V"], row["I"], row["T"], row["C"], row["R"], row["score"]) == (None, None, None, None, 4.0, None)
    summary = iwebgen_summary(records, tasks)
    assert summary["dimensions"] == {"V": None, "I": None, "T": None, "C": None, "R": 2.0}
    assert summary["score"] is None and summary["bsr"] == 0.5
