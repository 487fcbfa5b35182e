"""Dual-axis scoring of one MT-Web2Code turn (§3.5, eqs. 8-12).

Micro (pixel alignment): G = golden repaired page H_{t-1}, B = the page the turn started from, M = the
model's page, all rendered deterministically in one coordinate system. eqs. 9-11 come from
runner.metrics.image.micro_scores (the one implementation): Ω = 1[|G - B| > τ], S_inbox = SSIM_Ω(G, M),
S_outbox = SSIM_Ω̄(G, M) x (1 - colour penalty), eq. 11 as written unless `outbox_mask="guard_band"`.
Per defect (OURS, for Table 3's per-dimension columns): SSIM over Ω restricted to
that defect's boxes on G and B; a dimension's score is the mean over its defects; "overall" is the mean over
all defects (each defect weighs the same, whereas S_inbox weighs each footprint pixel the same).

Macro (rubric): the region bracketed on the model's page by the surviving anchors a-, a+ is cropped and
compared with the golden crop. With an LLM judge (an object with `async complete(messages) -> str`), the
judge rates Layout, Elements, Text, Color, Spacing and Overall on {1, .75, .5, .25, 0} and S_inbox is their
mean (eq. 8); when judging fails, or with judge=rules, SSIM of the two crops is the fallback (§3.5). A region
that cannot be found or is collapsed or empty scores 0 in-box. S_outbox compares the rest of the page block by
block with the region masked: the rows above the region, the rows below it (aligned at the region's bottom on
each page, so a region of another height is judged in-box, not as collateral reflow) and, for a region narrower
than the page, the band beside it; each block's SSIM x (1 - colour penalty), averaged weighted by area.
Score = 0.8 S_inbox + 0.2 S_outbox (eq. 12) in both tracks.
"""

from __future__ import annotations

import base64
import io
import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from runner.judges.base import JudgeError

from runner.metrics.image import (
    RUBRIC_BANDS,
    RUBRIC_DIMENSIONS,
    SSIM_WIN,
    OutboxMask,
    color_penalty,
    final_score,
    masked_ssim,
    mean_over,
    micro_scores,
    pad_to_common,
    rubric_inbox_score,
)

MIN_REGION_PX = 4  # a region thinner than this is "collapsed" (§3.5: in-box score 0)


def _box_mask(shape: tuple[int, int], boxes: list[list[float] | None]) -> np.ndarray:
    mask = np.zeros(shape, dtype=bool)
    for b in boxes:
        if not b:
            continue
        x0, y0 = max(0, int(np.floor(b[0]))), max(0, int(np.floor(b[1])))
        x1, y1 = min(shape[1], int(np.ceil(b[0] + b[2]))), min(shape[0], int(np.ceil(b[1] + b[3])))
        if x1 > x0 and y1 > y0:
            mask[y0:y1, x0:x1] = True
    return mask


def score_micro(golden: np.ndarray, broken: np.ndarray, model: np.ndarray, defects: list[dict[str, Any]],
                tau: int = 0, *, outbox_mask: OutboxMask = "eq11") -> dict[str, Any]:
    """eqs. 9-12 (runner.metrics.image.micro_scores) plus per-defect and per-dimension in-box scores."""
    scores = micro_scores(golden, broken, model, tau, outbox_mask=outbox_mask)
    omega, smap = scores.omega, scores.smap
    result: dict[str, Any] = {"outbox_mask": outbox_mask}
    s_in = scores.s_inbox
    if s_in is None:  # G == B: nothing to repair (possible only from a chained input)
        s_in = 1.0
        result["note"] = "empty footprint: the input already equals the golden page"
    s_out = scores.s_outbox
    result.update(s_inbox=s_in, s_outbox=s_out, score=final_score(s_in, s_out))
    per_defect = []
    for d in defects:
        boxes = _box_mask(omega.shape, [d.get("box_before"), d.get("box_after")])
        local = omega & boxes
        value = mean_over(smap, local if local.any() else boxes)
        per_defect.append({"op": d["op"], "dimension": d["dimension"], "score": 1.0 if value is None else value})
    dims: dict[str, float] = {}
    for dim in RUBRIC_DIMENSIONS:
        values = [p["score"] for p in per_defect if p["dimension"] == dim]
        if values:
            dims[dim] = float(np.mean(values))
    result["per_defect"] = per_defect
    result["dimensions"] = dims
    result["overall"] = float(np.mean([p["score"] for p in per_defect])) if per_defect else s_in
    result["footprint_px"] = int(omega.sum())
    return result


def crop(image: np.ndarray, box: list[float] | None) -> np.ndarray | None:
    if not box:
        return None
    x0, y0 = max(0, int(np.floor(box[0]))), max(0, int(np.floor(box[1])))
    x1, y1 = min(image.shape[1], int(np.ceil(box[0] + box[2]))), min(image.shape[0], int(np.ceil(box[1] + box[3])))
    if x1 - x0 < MIN_REGION_PX or y1 - y0 < MIN_REGION_PX:
        return None
    return image[y0:y1, x0:x1]


def crop_ssim(golden_crop: np.ndarray, model_crop: np.ndarray) -> float:
    """SSIM fallback of the macro in-box term: the two crops anchored top-left, padded white to one size."""
    g, m = pad_to_common(golden_crop, model_crop)
    if min(g.shape[:2]) < SSIM_WIN:
        return float((g == m).all())
    value = masked_ssim(g, m, np.ones(g.shape[:2], dtype=bool))
    return 0.0 if value is None else max(0.0, value)


def _rows(image: np.ndarray, y0: int, y1: int) -> np.ndarray:
    y0, y1 = max(0, min(image.shape[0], y0)), max(0, min(image.shape[0], y1))
    return image[y0:max(y0, y1)]


@dataclass
class OutboxBlock:
    """One block of the page outside the macro region: golden and model pixels, the compared-pixel mask
    (False over the masked region) and its weight (golden pixels compared)."""

    name: str  # above | below | beside
    golden: np.ndarray
    model: np.ndarray
    mask: np.ndarray | None  # None: every pixel
    weight: int

    @property
    def present(self) -> bool:
        """Both pages have content here (a block that vanished or appeared wholesale scores 0, unjudged)."""
        return self.golden.shape[0] > 0 and self.model.shape[0] > 0


def _block(name: str, g: np.ndarray, m: np.ndarray, mask: np.ndarray | None) -> OutboxBlock | None:
    if g.shape[0] == 0 and m.shape[0] == 0:
        return None
    weight = int(mask.sum()) if mask is not None else g.shape[0] * g.shape[1]
    if g.shape[0] == 0 or m.shape[0] == 0:
        return OutboxBlock(name, g, m, mask, max(weight, m.shape[0] * m.shape[1]))
    return OutboxBlock(name, g, m, mask, weight)


def _block_ssim(block: OutboxBlock, tau: int) -> tuple[float, int]:
    """(SSIM x (1 - colour penalty), weight) of one out-of-box block."""
    if not block.present:
        return 0.0, block.weight
    g, m = pad_to_common(block.golden, block.model)
    full = np.ones(g.shape[:2], dtype=bool)
    if block.mask is not None:
        full = np.zeros(g.shape[:2], dtype=bool)
        full[: block.mask.shape[0], : block.mask.shape[1]] = block.mask[: g.shape[0], : g.shape[1]]
    if not full.any():
        return 1.0, 0
    if min(g.shape[:2]) < SSIM_WIN:
        same = float((g[full] == m[full]).all())
        return same, int(full.sum())
    value = masked_ssim(g, m, full)
    value = 0.0 if value is None else max(0.0, value)
    return value * (1.0 - color_penalty(g, m, full, tau)), int(full.sum())


def outbox_blocks(golden: np.ndarray, model: np.ndarray, golden_box: list[float],
                  model_box: list[float] | None) -> list[OutboxBlock]:
    """The page outside the region, block by block, region masked (module docstring)."""
    gx0, gy0 = int(round(golden_box[0])), int(round(golden_box[1]))
    gx1, gy1 = int(round(golden_box[0] + golden_box[2])), int(round(golden_box[1] + golden_box[3]))
    if model_box:
        my0, my1 = int(round(model_box[1])), int(round(model_box[1] + model_box[3]))
    else:  # not found or collapsed: the rest of the page closed up where the region belongs
        my0 = my1 = gy0
    blocks = [
        _block("above", _rows(golden, 0, gy0), _rows(model, 0, my0), None),
        _block("below", _rows(golden, gy1, golden.shape[0]), _rows(model, my1, model.shape[0]), None),
    ]
    width = golden.shape[1]
    if gx1 - gx0 < 0.9 * width and gy1 > gy0:  # content beside a narrow region shares its rows
        band_g = _rows(golden, gy0, gy1)
        band_m = _rows(model, my0, max(my1, my0 + (gy1 - gy0)))
        mask = np.ones(band_g.shape[:2], dtype=bool)
        mask[:, max(0, gx0) : max(0, gx1)] = False
        blocks.append(_block("beside", band_g, band_m, mask))
    return [block for block in blocks if block is not None]


def macro_outbox(golden: np.ndarray, model: np.ndarray, golden_box: list[float], model_box: list[float] | None,
                 tau: int = 0) -> float:
    """Macro S_outbox by structural similarity (the reference and fallback of §3.5): area-weighted mean of
    each block's SSIM x (1 - colour penalty)."""
    scored = [_block_ssim(block, tau) for block in outbox_blocks(golden, model, golden_box, model_box)]
    total = sum(w for _, w in scored)
    if total == 0:
        return 1.0
    return float(sum(v * w for v, w in scored) / total)


# --------------------------------------------------------------------------- the LLM rubric (eq. 8)

RUBRIC_VERSION = "web2code-region-v1"  # recorded in lineage.json; bump when RUBRIC_PROMPT or the bands change

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


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def rubric_messages(golden_png: bytes, model_png: bytes) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [
            {"type": "text", "text": RUBRIC_PROMPT},
            {"type": "text", "text": "Image 1 (golden reference):"},
            {"type": "image_url", "image_url": {"url": _data_url(golden_png)}},
            {"type": "text", "text": "Image 2 (reconstruction):"},
            {"type": "image_url", "image_url": {"url": _data_url(model_png)}},
        ]},
    ]


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


def _answer_json(text: str) -> Any:
    """The JSON object of a judge's answer; RubricScaleError when there is none or it does not parse."""
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not match:
        raise RubricScaleError("no JSON object in the judge's answer")
    try:
        return json.loads(match.group(0))
    except ValueError as error:
        raise RubricScaleError(f"the judge's JSON does not parse: {error}") from None


def parse_rubric(text: str) -> dict[str, float]:
    """The six ratings of a rubric answer on the five-band scale; RubricScaleError when unusable."""
    data = _answer_json(text)
    if not isinstance(data, dict):
        raise RubricScaleError("the judge's answer is not a JSON object")
    out = {}
    for key in (*RUBRIC_DIMENSIONS, "overall"):
        if key not in data:
            raise RubricScaleError(f"rubric answer lacks {key!r}")
        out[key] = _band(key, data[key])
    out["reason"] = str(data.get("reason", ""))[:500]  # type: ignore[assignment]
    return out


async def rubric_scores(judge: Any, golden_png: bytes, model_png: bytes, *, attempts: int = 2) -> tuple[dict[str, Any] | None, str]:
    """Ask an LLM judge for the eq. 8 rubric. Returns (ratings incl. s_inbox, "") or (None, why it failed):
    no LLM judge, or no answer, falls back to SSIM (§3.5). An answer off the rubric's scale is retried;
    when every attempt is off the scale, JudgeError (the slot is a judge_error, not a guessed score)."""
    complete = getattr(judge, "complete", None)
    if not callable(complete):
        return None, f"judge {getattr(judge, 'name', '?')!r} has no complete(); SSIM fallback"
    problem, off_scale = "", 0
    for _ in range(attempts):
        try:
            text = await complete(rubric_messages(golden_png, model_png))
            ratings = parse_rubric(text if isinstance(text, str) else getattr(text, "text", ""))
        except RubricScaleError as error:
            problem, off_scale = f"{error}", off_scale + 1
            continue
        except Exception as error:  # no answer: retry, then fall back (§3.5)
            problem = f"{type(error).__name__}: {error}"
            continue
        dims = {d: ratings[d] for d in RUBRIC_DIMENSIONS}
        ratings["s_inbox"] = rubric_inbox_score(dims, ratings["overall"])
        return ratings, ""
    if off_scale == attempts:
        raise JudgeError(f"the judge's rubric answers did not fit the scale {RUBRIC_BANDS} "
                         f"after {attempts} attempts: {problem}")
    return None, f"rubric judging failed ({problem}); SSIM fallback"


# --------------------------------------------------------------------------- the out-of-box judge (§3.5)

OUTBOX_RUBRIC_VERSION = "web2code-outbox-v1"  # recorded in lineage.json; bump when OUTBOX_PROMPT changes
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
    content: list[dict[str, Any]] = [{"type": "text", "text": OUTBOX_PROMPT.replace("{BLOCK_KEYS}", keys)}]
    for block in blocks:
        golden, model = masked_block_images(block)
        content += [
            {"type": "text", "text": f"Block {block.name!r}, golden page:"},
            {"type": "image_url", "image_url": {"url": _png_data_url(golden)}},
            {"type": "text", "text": f"Block {block.name!r}, repaired page:"},
            {"type": "image_url", "image_url": {"url": _png_data_url(model)}},
        ]
    return [{"role": "user", "content": content}]


def parse_outbox(text: str, names: list[str]) -> dict[str, Any]:
    """{"blocks": {name: band}, "reason"} from a judge answer; RubricScaleError when unusable."""
    data = _answer_json(text)
    ratings = data.get("blocks") if isinstance(data, dict) else None
    if not isinstance(ratings, dict):
        raise RubricScaleError("the judge's answer has no 'blocks' object")
    missing = [name for name in names if name not in ratings]
    if missing:
        raise RubricScaleError(f"the judge's answer lacks block(s) {missing}")
    return {"blocks": {name: _band(name, ratings[name]) for name in names}, "reason": str(data.get("reason", ""))[:500]}


async def outbox_judge_scores(judge: Any, blocks: list[OutboxBlock], *, attempts: int = 2) -> tuple[dict[str, Any] | None, str]:
    """Macro S_outbox by the judge (MT-Web2Code §3.5: "With the reconstructed region masked, the VLM judge
    compares the golden and repaired pages block by block"): each block present on both pages is rated on the
    five-band scale; S_outbox = the block ratings averaged weighted by area, a block that vanished or appeared
    wholesale counting 0. Returns (result incl. s_outbox, "") or (None, why): no LLM judge or no answer falls
    back to SSIM; answers off the scale on every attempt raise JudgeError (as the in-box rubric does)."""
    complete = getattr(judge, "complete", None)
    if not callable(complete):
        return None, f"judge {getattr(judge, 'name', '?')!r} has no complete(); SSIM fallback"
    judged = [block for block in blocks if block.present and block.weight > 0]
    total = sum(block.weight for block in blocks)
    if total == 0:
        return {"s_outbox": 1.0, "blocks": {}, "reason": "nothing outside the region"}, ""
    if not judged:  # everything outside vanished or appeared: nothing to ask about
        return {"s_outbox": 0.0, "blocks": {}, "reason": "no block is on both pages"}, ""
    names = [block.name for block in judged]
    problem, off_scale = "", 0
    for _ in range(attempts):
        try:
            text = await complete(outbox_messages(judged))
            result = parse_outbox(text if isinstance(text, str) else getattr(text, "text", ""), names)
        except RubricScaleError as error:
            problem, off_scale = f"{error}", off_scale + 1
            continue
        except Exception as error:  # no answer: retry, then fall back (§3.5)
            problem = f"{type(error).__name__}: {error}"
            continue
        rated = result["blocks"]
        result["weights"] = {block.name: block.weight for block in blocks}
        result["s_outbox"] = float(sum(rated.get(block.name, 0.0) * block.weight for block in blocks) / total)
        return result, ""
    if off_scale == attempts:
        raise JudgeError(f"the judge's out-of-box answers did not fit the scale {RUBRIC_BANDS} "
                         f"after {attempts} attempts: {problem}")
    return None, f"out-of-box judging failed ({problem}); SSIM fallback"


async def score_macro_outbox(judge: Any, golden: np.ndarray, model: np.ndarray, golden_box: list[float],
                             model_box: list[float] | None, tau: int = 0, *, use_judge: bool = True) -> dict[str, Any]:
    """Macro S_outbox as §3.5 defines it: by the judge, block by block with the region masked; SSIM is always
    computed and recorded (`s_outbox_ssim`) as the reference, and is the value when judging fails.
    `use_judge=False` (an option, not the paper) scores by SSIM alone."""
    blocks = outbox_blocks(golden, model, golden_box, model_box)
    reference = macro_outbox(golden, model, golden_box, model_box, tau)
    result: dict[str, Any] = {"s_outbox_ssim": reference, "s_outbox": reference, "method": "ssim", "note": ""}
    if not use_judge:
        result["note"] = "S_outbox by SSIM (suite.macro_outbox=ssim)"
        return result
    judged, problem = await outbox_judge_scores(judge, blocks)
    if judged is None:
        result["note"] = problem
        return result
    result.update(s_outbox=judged["s_outbox"], method="judge", note=judged.get("reason", ""),
                  blocks=judged.get("blocks", {}), weights=judged.get("weights", {}))
    return result
