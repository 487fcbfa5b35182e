"""Turn scoring of MT-Web2Code (runner/suites/web2code/scoring.py): pixel alignment and the rubric."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from runner.judges.base import JudgeError
from runner.suites.web2code import scoring


def _page(h: int = 120, w: int = 160) -> np.ndarray:
    rng = np.random.default_rng(0)
    img = np.full((h, w, 3), 255, dtype=np.uint8)
    img[20:40, 20:140] = rng.integers(0, 255, (20, 120, 3), dtype=np.uint8)
    img[70:100, 30:90] = (30, 60, 200)
    return img


def test_micro_oracle_identity_and_per_dimension():
    golden = _page()
    broken = golden.copy()
    broken[70:100, 30:90] = (200, 30, 30)  # a colour defect
    defect = {"op": "color", "dimension": "color", "box_before": [30, 70, 60, 30], "box_after": [30, 70, 60, 30]}
    oracle = scoring.score_micro(golden, broken, golden, [defect])
    assert oracle["score"] == pytest.approx(1.0) and oracle["dimensions"] == {"color": pytest.approx(1.0)}
    identity = scoring.score_micro(golden, broken, broken, [defect])
    # eq. 11 as written: windows that straddle the footprint's edge lower S_outbox even for a model that
    # changed nothing; the guard-band option keeps untouched pixels at 1.
    assert identity["s_outbox"] < 0.99
    guarded = scoring.score_micro(golden, broken, broken, [defect], outbox_mask="guard_band")
    assert guarded["s_outbox"] == pytest.approx(1.0)
    assert identity["s_inbox"] < 0.5 and identity["score"] < 0.6
    assert identity["footprint_px"] == 60 * 30


def test_macro_outbox_masks_the_region_and_aligns_below_it():
    golden = _page(200)
    region = [0, 60, 160, 40]
    model = np.concatenate([golden[:60], np.full((10, 160, 3), 255, np.uint8), golden[100:]])  # region collapsed
    assert scoring.macro_outbox(golden, model, region, [0, 60, 160, 10]) == pytest.approx(1.0)
    assert scoring.crop(model, [0, 60, 160, 2]) is None  # collapsed: in-box 0 upstream
    assert scoring.crop_ssim(golden[60:100], golden[60:100]) == pytest.approx(1.0)


class _Judge:
    name = "fake-llm"

    def __init__(self, answers):
        self.answers = list(answers)

    async def complete(self, messages):
        assert sum(1 for p in messages[0]["content"] if p["type"] == "image_url") == 2
        return self.answers.pop(0)


def test_rubric_parsed_snapped_and_falls_back():
    good = '{"layout": 1, "elements": 0.75, "text": "0.5", "color": 0.25, "spacing": 0, "overall": 0.75, "reason": "ok"}'
    ratings, problem = asyncio.run(scoring.rubric_scores(_Judge(["not json", good]), b"g", b"m"))
    assert problem == "" and ratings["elements"] == 0.75 and ratings["text"] == 0.5 and ratings["overall"] == 0.75
    assert ratings["s_inbox"] == pytest.approx((1 + 0.75 + 0.5 + 0.25 + 0 + 0.75) / 6)  # eq. 8
    with pytest.raises(JudgeError, match="did not fit the scale"):
        asyncio.run(scoring.rubric_scores(_Judge(["nope", "{}"]), b"g", b"m"))
    ratings, problem = asyncio.run(scoring.rubric_scores(object(), b"g", b"m"))
    assert ratings is None and "no complete()" in problem


FOUR_OF_FIVE = '{"layout": 4, "elements": 4, "text": 4, "color": 4, "spacing": 4, "overall": 4, "reason": "1-5 scale"}'
PERCENT = '{"layout": 80, "elements": 75, "text": 75, "color": 75, "spacing": 75, "overall": 75, "reason": "percent"}'


def test_ratings_off_the_rubric_scale_are_rejected_not_guessed():
    """A "4" (a 1-5 scale) used to be read as 4 % and snapped to 0; it fits none of {1, .75, .5, .25, 0}:
    retried, then a judge error."""
    with pytest.raises(scoring.RubricScaleError, match="layout=4"):
        scoring.parse_rubric(FOUR_OF_FIVE)
    with pytest.raises(scoring.RubricScaleError):
        scoring.parse_rubric(PERCENT)
    judge = _Judge([FOUR_OF_FIVE, PERCENT])
    with pytest.raises(JudgeError):
        asyncio.run(scoring.rubric_scores(judge, b"g", b"m"))
    good = '{"layout": 0.75, "elements": 0.75, "text": 0.75, "color": 0.75, "spacing": 0.75, "overall": 0.75}'
    ratings, _ = asyncio.run(scoring.rubric_scores(_Judge([FOUR_OF_FIVE, good]), b"g", b"m"))
    assert ratings["s_inbox"] == pytest.approx(0.75), "the retry's answer on the scale is used"
