"""The §5 tables in the iwebgen summary from the slots' verdicts, and the canvas colour rule (no browser)."""

from __future__ import annotations

from runner.turns.records import FailureBucket, TurnRecord, Verdict
from runner.suites.iwebgen.background import canvas_background
from runner.suites.iwebgen.structure import AppStructure
from runner.suites.iwebgen.structure_summary import structure_summary


def test_the_root_background_paints_the_canvas_unless_transparent() -> None:
    assert canvas_background("rgb(20, 20, 20)", "rgb(255, 255, 255)") == "rgb(20, 20, 20)"
    assert canvas_background("rgba(0, 0, 0, 0)", "rgb(15, 23, 42)") == "rgb(15, 23, 42)"
    assert canvas_background("rgba(0, 0, 0, 0)", "") == "rgba(0, 0, 0, 0)"  # both transparent: the white canvas


def record(task_id: str, model: str, raw: dict | None) -> TurnRecord:
    verdict = Verdict(judge="rules", passed=None, raw=raw) if raw is not None else None
    return TurnRecord(task_id=task_id, suite="iwebgen", turn=1, status=FailureBucket.OK, evidence_dir="e",
                      model=model, verdict=verdict)


def test_summary_rows_come_from_the_verdicts_structure_and_theme() -> None:
    sidebar = AppStructure(state_declarations=5, has_sidebar=True, click_handlers=9, view_switching=True).to_json()
    plain = AppStructure(state_declarations=1, click_handlers=2).to_json()
    records = [record("a", "m", {"structure": sidebar, "theme": "dark"}),
               record("b", "m", {"structure": plain, "theme": "light"}),
               record("c", "m", None)]  # no verdict structure (e.g. no answer): not an analysed app
    app_rows = [{"task_id": "a", "score": 60.0, "ir": 0.5, "V": 24.0},
                {"task_id": "b", "score": None, "ir": 0.25, "V": None},
                {"task_id": "c", "score": 0.0, "ir": None, "V": 0.0}]
    summary = structure_summary(records, app_rows)
    assert [app["task_id"] for app in summary["apps"]] == ["a", "b"]
    with_sidebar, without = summary["table4_sidebar"]
    assert with_sidebar["apps"] == 1 and with_sidebar["mean_score"] == 60.0 and with_sidebar["view_switching_share"] == 1.0
    assert without["mean_score"] is None and without["mean_interaction_rate"] == 0.25
    assert summary["table5_theme"] == [{"model": "m", "apps": 2, "light_share": 0.5, "dark_share": 0.5,
                                        "mean_score_light": None, "mean_score_dark": 24.0}]
