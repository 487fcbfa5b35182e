"""MT-Web2Code's judge rubrics (§3.5), asked through the LLM judge's structured-output path.

`RegionRubric` (eq. 8): the judge rates the reconstructed region against the golden crop on Layout, Elements,
Text, Color, Spacing and Overall, each on the five bands {1, .75, .5, .25, 0}; S_inbox is their mean.
`OutboxRubric`: with the region masked, the judge rates each block of the rest of the page on the same bands;
S_outbox is the block ratings averaged weighted by area, SSIM the reference (recorded) and the fallback.

Both are `Rubric`s (runner/judges/rubrics.py): an answer model (RegionVerdict, outbox_verdict_model) whose JSON
schema is the one sent as `response_format` and which the parser validates with, accepting only answers on the
scale, and no pass decision (the paper defines none). `ask_rubric` is the one retry rule:
an answer off the scale is retried with the rejection fed back (runner/models/structured.py); no answer is
retried, then the SSIM fallback of §3.5; off the scale on every attempt is a judge error, never a guess. A
judge that is not an LLM judge (judge=rules) scores by SSIM.
"""

from __future__ import annotations

import base64
import io
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model

from runner.judges.base import Judge, JudgeError, JudgeTruncated
from runner.judges.rubrics import Rubric, RubricBase, RubricOutcome
from runner.suites.web2code.image import (
    RUBRIC_BANDS, RUBRIC_DIMENSIONS, PerceptualColour, pad_to_common, rubric_inbox_score,
)
from runner.models.fitting import RequestRefused
from runner.models.structured import StructuredOutputError, TruncatedAnswer, decoding_schema
from runner.turns.records import DimensionScore
from runner.suites.web2code.scoring import OutboxBlock, macro_outbox, outbox_blocks

__all__ = [
    "OutboxRubric",
    "RegionRubric",
    "RegionVerdict",
    "RubricScaleError",
    "ask_rubric",
    "outbox_judge_scores",
    "outbox_messages",
    "outbox_verdict_model",
    "rubric_messages",
    "rubric_scores",
    "score_macro_outbox",
]

ATTEMPTS = 2  # per rubric question: one retry, then the SSIM fallback (or a judge error, off the scale)
MAX_REASON_CHARS = 500


class RubricScaleError(ValueError):
    """The judge answered, but not on the rubric's scale: never guessed into a band."""


def _band(key: str, value: Any) -> float:
    """A rating on the rubric's own five-band scale (MT-Web2Code §3.5: {1, .75, .5, .25, 0}), else
    RubricScaleError: "4" (a 1-5 scale) or "70" (percent) does not fit and is not read as something else."""
    if isinstance(value, bool):
        raise RubricScaleError(f"{key}={value!r} is not a number on the scale {RUBRIC_BANDS}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise RubricScaleError(f"{key}={value!r} is not a number on the scale {RUBRIC_BANDS}") from None
    for band in RUBRIC_BANDS:
        if abs(band - v) <= 1e-6:
            return band
    raise RubricScaleError(f"{key}={value!r} is not one of the rubric's bands {RUBRIC_BANDS}")


def _snap(value: Any) -> Any:
    """A number within 1e-6 of a band is that band; anything else is left for the enum to refuse."""
    try:
        return _band("rating", value)
    except RubricScaleError:
        return value


# One rating: exactly one of the five bands (in the schema sent: an enum of them).
Band = Annotated[Literal[RUBRIC_BANDS], BeforeValidator(_snap)]  # type: ignore[valid-type]


def _validated(model: type[BaseModel], data: Any) -> BaseModel:
    """`model` validating `data`; every problem as RubricScaleError "field=value: why" (a ValueError)."""
    if not isinstance(data, dict):
        raise RubricScaleError("the judge's answer is not a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors(include_url=False):
            where = ".".join(str(part) for part in item["loc"]) or "(answer)"
            if item["type"] == "missing":
                problems.append(f"rubric answer lacks {where!r}")
            else:
                problems.append(f"{where}={item.get('input')!r}: {item['msg']} (the bands are {RUBRIC_BANDS})")
        raise RubricScaleError("; ".join(problems)) from None


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


# --------------------------------------------------------------------------- the region rubric (eq. 8)

RUBRIC_PROMPT = """You are a strict judge of web UI reconstruction. Image 1 is the GOLDEN reference crop of a page
region. Image 2 is the region a coding agent reconstructed at the same place on its page (cropped between the
same surrounding elements). Rate how faithfully image 2 reproduces image 1 along five equally weighted
dimensions, and give one holistic overall rating:
- layout: arrangement, alignment and relative positions of blocks, columns and components;
- elements: presence and correctness of every component (headings, images, icons, buttons, lists, cards);
- text: the text content, its wording, font size and weight;
- color: foreground, background and border colours;
- spacing: margins, padding, sizes and decoration.
Each score must be one of 1.0, 0.75, 0.5, 0.25, 0.0:
1.0 = indistinguishable; 0.75 = minor deviations; 0.5 = clearly recognisable but with several visible errors;
0.25 = largely wrong, only a few parts match; 0.0 = missing, empty or unrelated.
Answer with one JSON object only:
{"layout": s, "elements": s, "text": s, "color": s, "spacing": s, "overall": s, "reason": "one sentence"}"""


RegionVerdict = create_model(
    "RegionVerdict", __config__=ConfigDict(extra="ignore"),
    **{key: (Band, ...) for key in (*RUBRIC_DIMENSIONS, "overall")}, reason=(str, ""),
)  # eq. 8's five dimensions and the holistic overall rating, each one band, and a one-sentence reason


class RegionRubric(RubricBase):
    """Implements Rubric: the in-box rating of one reconstructed region (MT-Web2Code §3.5, eq. 8)."""

    name = "web2code-region"
    version = "web2code-region-v1"  # recorded in lineage.json; bump when RUBRIC_PROMPT or the bands change
    dimensions: tuple[str, ...] = (*RUBRIC_DIMENSIONS, "overall")

    def instructions(self) -> str:
        return RUBRIC_PROMPT

    def answer_model(self, requirement_ids: list[str]) -> type[BaseModel]:
        return RegionVerdict

    def schema(self, requirement_ids: list[str]) -> dict[str, Any]:
        return decoding_schema(RegionVerdict)

    def parse(self, data: Any, requirement_ids: list[str]) -> RubricOutcome:
        """The six ratings on the five-band scale; RubricScaleError (a ValueError) when unusable."""
        verdict = _validated(RegionVerdict, data)
        scores: dict[str, float] = {key: float(getattr(verdict, key)) for key in self.dimensions}
        return RubricOutcome(dimensions={key: DimensionScore(score=value) for key, value in scores.items()},
                             scores=scores, passed=None, summary=verdict.reason[:MAX_REASON_CHARS])

    def decide(self, outcome: RubricOutcome | None, *, generation_ok: bool, evaluable: bool) -> bool | None:
        return None  # MT-Web2Code defines no pass/fail: the scores carry the result


def rubric_messages(golden_png: bytes, model_png: bytes) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [
            {"type": "text", "text": RegionRubric().instructions()},
            {"type": "text", "text": "Image 1 (golden reference):"},
            {"type": "image_url", "image_url": {"url": _data_url(golden_png)}},
            {"type": "text", "text": "Image 2 (reconstruction):"},
            {"type": "image_url", "image_url": {"url": _data_url(model_png)}},
        ]},
    ]


# --------------------------------------------------------------------------- the out-of-box rubric (§3.5)

MASK_GREY = 128  # the masked region's fill, the same on both pages
MAX_BLOCK_SIDE = 2048  # a block image's longer side is scaled down to this (pixels)

OUTBOX_PROMPT = """You are a strict judge of web page preservation. A coding agent rebuilt one region of a page; that
region is excluded (and, where it shares rows with other content, painted flat grey on both pages). Below, the
rest of the page is shown block by block: for each block, first the GOLDEN page, then the REPAIRED page.
Rate for each block how well the repaired page preserves the golden one: same content, positions, sizes,
colours and styles; penalize collateral reflow, restyling, and anything missing or added.
Each score must be one of 1.0, 0.75, 0.5, 0.25, 0.0:
1.0 = identical; 0.75 = minor deviations; 0.5 = clearly recognisable but with several visible changes;
0.25 = largely changed, only a few parts match; 0.0 = missing, replaced or unrelated.
Answer with one JSON object only, one score per block name listed below:
{"blocks": {BLOCK_KEYS}, "reason": "one sentence"}"""


@lru_cache(maxsize=64)
def outbox_verdict_model(block_names: tuple[str, ...]) -> type[BaseModel]:
    """{"blocks": {name: band} with exactly the asked blocks, "reason": str}: the block names are keys, each
    required, no other (field names are positional; the names are the aliases validation and the schema use)."""
    blocks = create_model(
        "OutboxBlocks", __config__=ConfigDict(extra="forbid"),
        **{f"block_{index}": (Band, Field(alias=name)) for index, name in enumerate(dict.fromkeys(block_names))},
    )
    return create_model("OutboxVerdict", __config__=ConfigDict(extra="ignore"), blocks=(blocks, ...),
                        reason=(str, ""))


class OutboxRubric(RubricBase):
    """Implements Rubric: one rating per block outside the region; the block names play the part of the
    requirement ids (the verdict must rate exactly those)."""

    name = "web2code-outbox"
    version = "web2code-outbox-v1"  # recorded in lineage.json; bump when OUTBOX_PROMPT changes
    dimensions: tuple[str, ...] = ("above", "below", "beside")  # the blocks outbox_blocks() can make

    def instructions(self) -> str:
        return OUTBOX_PROMPT

    def answer_model(self, requirement_ids: list[str]) -> type[BaseModel]:
        return outbox_verdict_model(tuple(requirement_ids))

    def schema(self, requirement_ids: list[str]) -> dict[str, Any]:
        return decoding_schema(self.answer_model(requirement_ids))

    def parse(self, data: Any, requirement_ids: list[str]) -> RubricOutcome:
        """{block: band} for every asked block; RubricScaleError (a ValueError) when unusable."""
        verdict = _validated(self.answer_model(requirement_ids), data)
        rated = verdict.blocks.model_dump(by_alias=True)  # type: ignore[attr-defined]
        scores = {name: float(rated[name]) for name in requirement_ids}
        return RubricOutcome(dimensions={name: DimensionScore(score=value) for name, value in scores.items()},
                             scores=scores, passed=None, summary=verdict.reason[:MAX_REASON_CHARS])  # type: ignore[attr-defined]

    def decide(self, outcome: RubricOutcome | None, *, generation_ok: bool, evaluable: bool) -> bool | None:
        return None  # MT-Web2Code defines no pass/fail


def _png_data_url(pixels: np.ndarray) -> str:
    from PIL import Image

    image = Image.fromarray(pixels)
    if max(image.size) > MAX_BLOCK_SIDE:
        scale = MAX_BLOCK_SIDE / max(image.size)
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return _data_url(buffer.getvalue())


def masked_block_images(block: OutboxBlock) -> tuple[np.ndarray, np.ndarray]:
    """The block's golden and model pixels, padded to one size, grey wherever the SSIM reference does not
    compare (the masked region), so the judge and the fallback look at the same pixels."""
    g, m = pad_to_common(block.golden, block.model)
    if block.mask is not None:
        keep = np.zeros(g.shape[:2], dtype=bool)
        keep[: block.mask.shape[0], : block.mask.shape[1]] = block.mask[: g.shape[0], : g.shape[1]]
        g, m = g.copy(), m.copy()
        g[~keep] = MASK_GREY
        m[~keep] = MASK_GREY
    return g, m


def outbox_messages(blocks: list[OutboxBlock]) -> list[dict[str, Any]]:
    keys = "{" + ", ".join(f'"{block.name}": s' for block in blocks) + "}"
    content: list[dict[str, Any]] = [{"type": "text", "text": OutboxRubric().instructions().replace("{BLOCK_KEYS}", keys)}]
    for block in blocks:
        golden, model = masked_block_images(block)
        content += [
            # One pair per block: a server taking fewer images gets it as one image (runner/models/fitting.py).
            {"type": "text", "text": f"Block {block.name!r}, golden page:", "fit": {"pair": block.name}},
            {"type": "image_url", "image_url": {"url": _png_data_url(golden)},
             "fit": {"pair": block.name, "name": f"{block.name} (golden)"}},
            {"type": "text", "text": f"Block {block.name!r}, repaired page:", "fit": {"pair": block.name}},
            {"type": "image_url", "image_url": {"url": _png_data_url(model)},
             "fit": {"pair": block.name, "name": f"{block.name} (repaired)"}},
        ]
    return [{"role": "user", "content": content}]


# --------------------------------------------------------------------------- asking the judge


async def ask_rubric(judge: Judge, rubric: Rubric, messages: list[dict[str, Any]], *, ids: list[str] | None = None,
                     what: str, attempts: int = ATTEMPTS, out_dir: Path | None = None) -> tuple[RubricOutcome | None, str]:
    """(outcome, "") or (None, why the SSIM fallback applies). `attempts` counts requests: an answer off the
    scale is retried by the structured-output path with the rejection fed back (which also keeps a response
    cache from replaying it); a call that got no answer counts as one attempt and is asked afresh. Every
    attempt off the scale: JudgeError (the slot is a judge_error, not a guessed score). A request the server
    (or the fitting) refuses is not asked again: the SSIM fallback, with the server's own message."""
    if not judge.answers_rubrics:
        return None, f"judge {judge.name!r} is not an LLM judge; SSIM fallback"
    problem, off_scale, left = "", 0, attempts
    while left > 0:
        try:
            result = await judge.ask(rubric, messages, ids=ids or [], max_attempts=left, out_dir=out_dir)
        except RequestRefused as error:  # asking again cannot help
            return None, f"{what} judging refused ({error.server_message or error}); SSIM fallback"
        except TruncatedAnswer as error:  # cut at the output cap, and its changed re-ask too: named, not guessed
            raise JudgeTruncated(f"the judge's {what} answer was truncated: {error}",
                                 cut={"role": "judge", "model": error.model, **(error.cut or {})}) from error
        except StructuredOutputError as error:  # every remaining attempt answered off the scale
            problem, off_scale, left = error.errors[-1] if error.errors else str(error), off_scale + left, 0
            break
        except Exception as error:  # no answer (the provider's retries are spent, a timeout): retry, then fall back
            problem, left = f"{type(error).__name__}: {error}", left - 1
            continue
        return result.value, ""
    if off_scale == attempts:
        raise JudgeError(f"the judge's {what} answers did not fit the scale {RUBRIC_BANDS} "
                         f"after {attempts} attempts: {problem}")
    return None, f"{what} judging failed ({problem}); SSIM fallback"


async def rubric_scores(judge: Judge, golden_png: bytes, model_png: bytes, *,
                        out_dir: Path | None = None) -> tuple[dict[str, Any] | None, str]:
    """Ask the judge for the eq. 8 rubric. Returns (ratings incl. s_inbox, "") or (None, why it failed)."""
    outcome, problem = await ask_rubric(judge, RegionRubric(), rubric_messages(golden_png, model_png), what="rubric",
                                        out_dir=out_dir)
    if outcome is None:
        return None, problem
    ratings: dict[str, Any] = dict(outcome.scores)
    ratings["reason"] = outcome.summary
    ratings["s_inbox"] = rubric_inbox_score({d: ratings[d] for d in RUBRIC_DIMENSIONS}, ratings["overall"])
    return ratings, ""


async def outbox_judge_scores(judge: Judge, blocks: list[OutboxBlock], *,
                              out_dir: Path | None = None) -> tuple[dict[str, Any] | None, str]:
    """Macro S_outbox by the judge (MT-Web2Code §3.5: "With the reconstructed region masked, the VLM judge
    compares the golden and repaired pages block by block"): each block present on both pages is rated on the
    five-band scale; S_outbox = the block ratings averaged weighted by area, a block that vanished or appeared
    wholesale counting 0. Returns (result incl. s_outbox, "") or (None, why), as `ask_rubric`."""
    judged = [block for block in blocks if block.present and block.weight > 0]
    total = sum(block.weight for block in blocks)
    if total == 0:
        return {"s_outbox": 1.0, "blocks": {}, "reason": "nothing outside the region"}, ""
    if not judged:  # everything outside vanished or appeared: nothing to ask about
        return {"s_outbox": 0.0, "blocks": {}, "reason": "no block is on both pages"}, ""
    outcome, problem = await ask_rubric(judge, OutboxRubric(), outbox_messages(judged),
                                        ids=[block.name for block in judged], what="out-of-box", out_dir=out_dir)
    if outcome is None:
        return None, problem
    rated = outcome.scores
    return {
        "blocks": dict(rated),
        "reason": outcome.summary,
        "weights": {block.name: block.weight for block in blocks},
        "s_outbox": float(sum(rated.get(block.name, 0.0) * block.weight for block in blocks) / total),
    }, ""


async def score_macro_outbox(judge: Judge, golden: np.ndarray, model: np.ndarray, golden_box: list[float],
                             model_box: list[float] | None, tau: int = 0, *, use_judge: bool = True,
                             out_dir: Path | None = None, perceptual: PerceptualColour | None = None) -> dict[str, Any]:
    """Macro S_outbox as §3.5 defines it: by the judge, block by block with the region masked; SSIM is always
    computed and recorded (`s_outbox_ssim`) as the reference, and is the value when judging fails.
    `use_judge=False` (an option, not the paper) scores by SSIM alone."""
    blocks = outbox_blocks(golden, model, golden_box, model_box)
    reference = macro_outbox(golden, model, golden_box, model_box, tau, perceptual=perceptual)
    result: dict[str, Any] = {"s_outbox_ssim": reference, "s_outbox": reference, "method": "ssim", "note": ""}
    if not use_judge:
        result["note"] = "S_outbox by SSIM (suite.macro_outbox=ssim)"
        return result
    judged, problem = await outbox_judge_scores(judge, blocks, out_dir=out_dir)
    if judged is None:
        result["note"] = problem
        return result
    result.update(s_outbox=judged["s_outbox"], method="judge", note=judged.get("reason", ""),
                  blocks=judged.get("blocks", {}), weights=judged.get("weights", {}))
    return result
