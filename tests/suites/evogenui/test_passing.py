"""The §4.3 turn-pass rule for model-based verdicts."""

from __future__ import annotations

import math

import pytest

from runner.turns.records import DimensionScore, Verdict
from runner.suites.evogenui.passing import DIMENSIONS, PASS_THRESHOLD, turn_passes, verdict_passes

ALL_FOUR = {"presentation": 4, "execution": 4, "alignment": 4}


def test_constants_are_the_papers() -> None:
    assert DIMENSIONS == ("presentation", "execution", "alignment")
    assert PASS_THRESHOLD == 4


@pytest.mark.parametrize(
    "scores, expected",
    [
        (ALL_FOUR, True),
        ({"presentation": 5, "execution": 5, "alignment": 5}, True),
        ({"presentation": 3, "execution": 5, "alignment": 5}, False),
        ({"presentation": 5, "execution": 3.99, "alignment": 5}, False),
        ({"presentation": 5, "execution": 5, "alignment": 1}, False),
        ({"Presentation": 4, "EXECUTION": 4, "alignment": 4.0}, True),  # names are case-insensitive
        ({"presentation": 4, "execution": 4}, False),  # a missing score is no evidence of >= 4
        ({"presentation": 4, "execution": 4, "alignment": None}, False),
        ({"presentation": 4, "execution": 4, "alignment": "5"}, False),  # not a number
        ({"presentation": 4, "execution": 4, "alignment": True}, False),
        ({"presentation": 4, "execution": 4, "alignment": math.nan}, False),
        ({"presentation": 4, "execution": 4, "alignment": 6}, False),  # outside the 1-5 scale
        ({"presentation": 4, "execution": 4, "alignment": 4, "extra": 0}, True),
    ],
)
def test_all_three_scores_must_be_at_least_four(scores: dict, expected: bool) -> None:
    assert turn_passes(generation_succeeded=True, artifact_evaluable=True, scores=scores) is expected


def test_generation_and_artifact_gate_the_pass() -> None:
    assert turn_passes(generation_succeeded=False, artifact_evaluable=True, scores=ALL_FOUR) is False
    assert turn_passes(generation_succeeded=True, artifact_evaluable=False, scores=ALL_FOUR) is False


def test_verdict_passes_reads_the_dimensions() -> None:
    good = Verdict(judge="llm", passed=None, dimensions={name: DimensionScore(score=4.0) for name in DIMENSIONS})
    assert verdict_passes(good) is True
    assert verdict_passes(good, artifact_evaluable=False) is False
    weak = good.model_copy(deep=True)
    weak.dimensions["alignment"] = DimensionScore(score=None, reason="not assessed")
    assert verdict_passes(weak) is False
