"""Turn scoring of MT-Web2Code: pixel alignment (runner/suites/web2code/scoring.py) and the judge's rubrics
(runner/suites/web2code/rubric.py)."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from runner.config import JudgeConfig
from runner.judges.base import JudgeError
from runner.judges.llm import LLMJudge
from runner.judges.llm_settings import LLMJudgeSettings
from runner.judges.registry import build_judge
from runner.models.base import GenerationRequest, ModelBase, ModelResponse
from runner.suites.web2code import rubric, scoring


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


class _ScriptedModel(ModelBase):
    """Implements Model: the judge model's answers, in order; every request shows both crops as images."""

    name = "fake-llm"

    def __init__(self, answers):
        self.answers = list(answers)

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        assert sum(1 for p in request.messages[0]["content"] if p["type"] == "image_url") == 2
        return ModelResponse(text=self.answers.pop(0))

    async def aclose(self) -> None:
        return None


def _Judge(answers):
    """An LLM judge whose model answers from a script (the fault injected: its answers)."""
    settings = LLMJudgeSettings.from_options({"model": {"provider": "openai", "model": "fake-llm",
                                                        "base_url": "http://127.0.0.1:9/v1"}})
    return LLMJudge(settings, name="fake-llm", model=_ScriptedModel(answers))


def test_rubric_parsed_snapped_and_falls_back():
    good = '{"layout": 1, "elements": 0.75, "text": "0.5", "color": 0.25, "spacing": 0, "overall": 0.75, "reason": "ok"}'
    ratings, problem = asyncio.run(rubric.rubric_scores(_Judge(["not json", good]), b"g", b"m"))
    assert problem == "" and ratings["elements"] == 0.75 and ratings["text"] == 0.5 and ratings["overall"] == 0.75
    assert ratings["s_inbox"] == pytest.approx((1 + 0.75 + 0.5 + 0.25 + 0 + 0.75) / 6)  # eq. 8
    with pytest.raises(JudgeError, match="did not fit the scale"):
        asyncio.run(rubric.rubric_scores(_Judge(["nope", "{}"]), b"g", b"m"))
    rules = build_judge(JudgeConfig(name="rules", kind="rules"))  # no LLM judge: the SSIM fallback (§3.5)
    ratings, problem = asyncio.run(rubric.rubric_scores(rules, b"g", b"m"))
    assert ratings is None and "not an LLM judge" in problem


FOUR_OF_FIVE = '{"layout": 4, "elements": 4, "text": 4, "color": 4, "spacing": 4, "overall": 4, "reason": "1-5 scale"}'
PERCENT = '{"layout": 80, "elements": 75, "text": 75, "color": 75, "spacing": 75, "overall": 75, "reason": "percent"}'


def test_ratings_off_the_rubric_scale_are_rejected_not_guessed():
    """A "4" (a 1-5 scale) used to be read as 4 % and snapped to 0; it fits none of {1, .75, .5, .25, 0}:
    retried, then a judge error."""
    with pytest.raises(rubric.RubricScaleError, match="layout=4"):
        rubric.RegionRubric().parse(json.loads(FOUR_OF_FIVE), [])
    with pytest.raises(rubric.RubricScaleError):
        rubric.RegionRubric().parse(json.loads(PERCENT), [])
    judge = _Judge([FOUR_OF_FIVE, PERCENT])
    with pytest.raises(JudgeError):
        asyncio.run(rubric.rubric_scores(judge, b"g", b"m"))
    good = '{"layout": 0.75, "elements": 0.75, "text": 0.75, "color": 0.75, "spacing": 0.75, "overall": 0.75}'
    ratings, _ = asyncio.run(rubric.rubric_scores(_Judge([FOUR_OF_FIVE, good]), b"g", b"m"))
    assert ratings["s_inbox"] == pytest.approx(0.75), "the retry's answer on the scale is used"


# ---------------------------------------------------------------- macro S_outbox by the judge (§3.5)

def _scripted_judge(server):
    from runner.config import JudgeConfig
    from runner.judges.registry import build_judge

    model = {"provider": "openai", "model": "judge-vl", "base_url": server.base_url, "vision": True,
             "max_retries": 0, "cache": False, "timeout_s": 10}
    return build_judge(JudgeConfig(name="scripted-judge", kind="llm", options={"model": model}))


def _outbox(answers, golden, model, golden_box, model_box, *, use_judge=True):
    from tests.support.fault_server import FaultServer, completion

    replies = iter(answers)

    def behaviour(messages):
        reply = next(replies)
        return reply if isinstance(reply, tuple) else (200, completion(reply))

    with FaultServer(behaviour) as server:
        judge = _scripted_judge(server)

        async def main():
            try:
                return await rubric.score_macro_outbox(judge, golden, model, golden_box, model_box, use_judge=use_judge)
            finally:
                await judge.aclose()

        result = asyncio.run(main())
        return result, list(server.requests)


def _image(url: str) -> np.ndarray:
    import base64
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))


def test_macro_outbox_is_the_judges_block_ratings_weighted_by_area():
    """Hand-computed: a 160 px wide page, region [0, 40, 80, 40] (narrower than the page). Blocks: above =
    rows 0-40 (40 x 160 = 6400 px), below = rows 80-120 (6400 px), beside = rows 40-80 outside columns 0-80
    (40 x 80 = 3200 px). Ratings 1.0, 0.5, 0.0: S_outbox = (6400 x 1 + 6400 x 0.5 + 3200 x 0) / 16000 = 0.6."""
    golden = _page(120, 160)
    model = golden.copy()
    model[90:110, 10:150] = (0, 0, 0)  # collateral restyling below the region
    region = [0, 40, 80, 40]
    answer = '{"blocks": {"above": 1.0, "below": 0.5, "beside": 0.0}, "reason": "the block below was restyled"}'
    result, requests = _outbox([answer], golden, model, region, region)
    assert result["method"] == "judge"
    assert result["s_outbox"] == pytest.approx(0.6)
    assert result["weights"] == {"above": 6400, "below": 6400, "beside": 3200}
    assert result["s_outbox_ssim"] == pytest.approx(scoring.macro_outbox(golden, model, region, region))
    assert result["s_outbox_ssim"] != pytest.approx(0.6)  # the reference is recorded, not used
    # One request: each block as a golden/repaired image pair; the region is masked grey in the beside band.
    content = requests[0]["messages"][-1]["content"]
    images = [_image(p["image_url"]["url"]) for p in content if p["type"] == "image_url"]
    assert [im.shape[:2] for im in images] == [(40, 160)] * 6
    beside_golden, beside_model = images[4], images[5]
    assert (beside_golden[:, :80] == rubric.MASK_GREY).all() and (beside_model[:, :80] == rubric.MASK_GREY).all()
    assert (beside_golden[:, 80:] == golden[40:80, 80:]).all()


def test_macro_outbox_falls_back_to_ssim_when_judging_fails():
    golden = _page(120, 160)
    overloaded = (500, '{"error": {"message": "overloaded"}}')
    result, requests = _outbox([overloaded, overloaded], golden, golden.copy(), [0, 40, 160, 40],
                               [0, 40, 160, 40])
    assert len(requests) == 2  # no answer: retried once, then SSIM
    assert result["method"] == "ssim" and "SSIM fallback" in result["note"]
    assert result["s_outbox"] == result["s_outbox_ssim"] == pytest.approx(1.0)
    # Off the five-band scale on every attempt: a judge_error, never a guessed score.
    with pytest.raises(JudgeError, match="out-of-box answers did not fit"):
        _outbox(['{"blocks": {"above": 4, "below": 4}}'] * 2, golden, golden.copy(), [0, 40, 160, 40], [0, 40, 160, 40])
    # The option: SSIM only, no judge call.
    only, asked = _outbox([], golden, golden.copy(), [0, 40, 160, 40], [0, 40, 160, 40], use_judge=False)
    assert only["method"] == "ssim" and asked == []
