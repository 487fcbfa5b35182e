"""Dual-axis scoring of one MT-Web2Code turn (§3.5, eqs. 8-12).

Micro (pixel alignment): G = golden repaired page H_{t-1}, B = the page the turn started from, M = the
model's page, all rendered deterministically in one coordinate system. eqs. 9-11 come from
runner.suites.web2code.image.micro_scores (the one implementation): Ω = 1[|G - B| > τ], S_inbox = SSIM_Ω(G, M),
S_outbox = SSIM_Ω̄(G, M) x (1 - colour penalty), eq. 11 as written unless `outbox_mask="guard_band"`.
Per defect (OURS, for Table 3's per-dimension columns): SSIM over Ω restricted to
that defect's boxes on G and B; a dimension's score is the mean over its defects; "overall" is the mean over
all defects (each defect weighs the same, whereas S_inbox weighs each footprint pixel the same).

Macro: the region bracketed on the model's page by the surviving anchors a-, a+ is cropped and compared
with the golden crop. The judge's rubrics (eq. 8 in-box, block by block out-of-box) are runner/suites/web2code/
rubric.py; here are the pixel measures: the crops, the SSIM of two crops (the in-box fallback, §3.5), and the
out-of-box blocks with their SSIM reference. A region that cannot be found or is collapsed or empty scores 0
in-box. S_outbox compares the rest of the page block by block with the region masked: the rows above the
region, the rows below it (aligned at the region's bottom on each page, so a region of another height is judged
in-box, not as collateral reflow) and, for a region narrower than the page, the band beside it; each block's
SSIM x (1 - colour penalty), averaged weighted by area. Score = 0.8 S_inbox + 0.2 S_outbox (eq. 12) in both
tracks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from runner.suites.web2code.image import (
    RUBRIC_DIMENSIONS,
    SSIM_WIN,
    OutboxMask,
    PerceptualColour,
    color_penalty,
    final_score,
    masked_ssim,
    mean_over,
    micro_scores,
    pad_to_common,
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
                tau: int = 0, *, outbox_mask: OutboxMask = "eq11",
                perceptual: PerceptualColour | None = None) -> dict[str, Any]:
    """eqs. 9-12 (runner.suites.web2code.image.micro_scores) plus per-defect and per-dimension in-box scores.
    `perceptual`: what the colour penalty counts (None: any pixel over tau)."""
    scores = micro_scores(golden, broken, model, tau, outbox_mask=outbox_mask, perceptual=perceptual)
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


def _block_ssim(block: OutboxBlock, tau: int, perceptual: PerceptualColour | None = None) -> tuple[float, int]:
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
    return value * (1.0 - color_penalty(g, m, full, tau, perceptual=perceptual)), int(full.sum())


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
                 tau: int = 0, *, perceptual: PerceptualColour | None = None) -> float:
    """Macro S_outbox by structural similarity (the reference and fallback of §3.5): area-weighted mean of
    each block's SSIM x (1 - colour penalty)."""
    scored = [_block_ssim(block, tau, perceptual) for block in outbox_blocks(golden, model, golden_box, model_box)]
    total = sum(w for _, w in scored)
    if total == 0:
        return 1.0
    return float(sum(v * w for v, w in scored) / total)
