"""The judged dimensions of the 100-point score (B.1): schema, parse (no clipping), no pass decision."""

from __future__ import annotations

import pytest

from runner.suites.iwebgen.rubric import JUDGED_POINTS, IWebGenRubric


def _answer(**points: object) -> dict:
    values = {"topic": 12, "visual": 25, "interaction": 30, "clarity": 8, **points}
    return {key: {"score": value, "reason": f"{key} ok"} for key, value in values.items()} | {"summary": "fine"}


def test_points_and_maxima_are_the_papers() -> None:
    assert JUDGED_POINTS == {"topic": 15, "visual": 30, "interaction": 40, "clarity": 10}
    assert sum(JUDGED_POINTS.values()) + 5 == 100  # + Rule & Stability
    schema = IWebGenRubric().schema([])
    assert schema["properties"]["interaction"]["properties"]["score"]["maximum"] == 40
    assert set(schema["required"]) == {*JUDGED_POINTS, "summary"}  # the decoder writes every field


def test_parse_reads_points_and_reasons() -> None:
    outcome = IWebGenRubric().parse(_answer(), [])
    assert outcome.scores == {"topic": 12.0, "visual": 25.0, "interaction": 30.0, "clarity": 8.0}
    assert outcome.dimensions["visual"].reason == "visual ok" and outcome.summary == "fine"
    assert outcome.passed is None
    assert IWebGenRubric().decide(outcome, generation_ok=True, evaluable=True) is None


@pytest.mark.parametrize("bad", [
    _answer(interaction=41), _answer(topic=-1), _answer(visual=12.5), _answer(clarity=True), _answer(topic="12"),
    {"topic": {"score": 3}}, "not an object",
])
def test_answers_off_the_scale_are_rejected_not_clipped(bad: object) -> None:
    with pytest.raises(ValueError):
        IWebGenRubric().parse(bad, [])
