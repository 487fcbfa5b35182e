"""Pixel-grounded image metrics of MT-Web2Code (§3.5, eqs. 8-12): the one implementation of eqs. 9-12.

Images are numpy ``uint8`` arrays of shape ``(H, W, 3)`` (RGB), e.g. full-page renders
loaded with :func:`load_rgb`. Three renders of one micro-level turn share a coordinate
system (§3.5 "Pixel Alignment"): the golden repaired page ``G``, the broken input ``B``
and the model output ``M``.

What the paper fixes and what it leaves open (our choices are marked OURS):
- eq. 9  footprint ``Ω = 1[|R(G) - R(B)| > τ]``. The paper gives neither the per-pixel
  norm nor a value for τ. OURS: the distance is the largest absolute difference over
  the three channels (so a change in one channel alone counts), and τ defaults to 0
  because our renders are deterministic (the same page twice gives identical pixels,
  tested), so any difference is a real change.
- eq. 10/11 ``S_inbox = SSIM_Ω(G, M)``, ``S_outbox = SSIM_Ω̄(G, M)``: SSIM averaged over
  the pixels of a mask. OURS: the SSIM map is scikit-image's (7x7 uniform window,
  data_range 255, per channel, channels averaged) and, like skimage's own mean, the
  ``(7-1)//2 = 3`` px border strip is excluded, so on a full mask the value equals
  ``structural_similarity(G, M, channel_axis=-1, data_range=255)``.
- "complemented by a color-sensitive pixel-difference penalty" (§3.5, after eq. 11): the
  paper gives no formula. OURS: the penalty is the fraction of out-of-box pixels whose
  colour changed, and ``S_outbox = SSIM_Ω̄(G, M) * (1 - penalty)``: it equals plain SSIM when
  no colour changed and falls to 0 when every out-of-box pixel was recoloured. What counts as
  changed (`PerceptualColour`, the suite's `color_penalty` setting):
  * "perceptual" (the default): a change a person can see. The colour distance is CIE76 ΔE*ab
    (Euclidean in CIELAB, D65, from sRGB; scikit-image's rgb2lab), against the just-noticeable
    difference ΔE*ab ≈ 2.3 (Mahy, Van Eycken & Oosterlinck 1994, "Evaluation of uniform color
    spaces developed after the adoption of CIELAB and CIELUV", Color Res. Appl. 19(2); the JND
    Sharma's Digital Color Imaging Handbook, 2003, cites), so a faint 5/255 recolour (ΔE ≈ 1.5-2)
    is not counted. Sub-pixel and 1-pixel reflow is tolerated: a pixel counts only if neither
    image's colour there is matched (within the JND) by the other image anywhere in a
    (2r+1) x (2r+1) neighbourhood (r = 1 px), so content moved by at most r pixels is not
    "recoloured" (SSIM, which sees the move, still does).
  * "any_pixel" (the earlier reading, kept as an option): any pixel whose channel-max distance
    exceeds τ_color (eq. 9's distance, τ_color = τ = 0 by default).
- eq. 11 is applied as written by default: the SSIM map averaged over every pixel of Ω̄.
  `outbox_mask="guard_band"` (an option, not the paper) averages only pixels whose 7x7 window
  lies wholly outside Ω, so an untouched page keeps S_outbox = 1 at the footprint's edges.
- eq. 12 ``Score = 0.8 * S_inbox + 0.2 * S_outbox`` (exact).
- eq. 8 (macro level) ``S_inbox = (sum of 5 rubric dimensions + overall) / 6`` (exact).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from PIL import Image
from scipy.ndimage import binary_dilation
from skimage.color import rgb2lab
from skimage.metrics import structural_similarity

# eq. 9 threshold; the paper leaves τ unspecified (see module docstring).
DEFAULT_TAU = 0
# skimage's default SSIM window (uniform 7x7); its mean drops a (7-1)//2 px border.
SSIM_WIN = 7
SSIM_BORDER = (SSIM_WIN - 1) // 2
# Rows of one band of the SSIM map (ssim_map): bounds skimage's float64 intermediates on a tall page.
SSIM_BAND_ROWS = 256
# eq. 12 weights.
INBOX_WEIGHT = 0.8
OUTBOX_WEIGHT = 0.2
# eq. 8: five perceptual dimensions, five-band scale.
RUBRIC_DIMENSIONS = ("layout", "elements", "text", "color", "spacing")
RUBRIC_BANDS = (1.0, 0.75, 0.5, 0.25, 0.0)

WHITE = 255

OutboxMask = Literal["eq11", "guard_band"]
ColorPenaltyMode = Literal["perceptual", "any_pixel"]
# The just-noticeable colour difference in CIE76 ΔE*ab (Mahy et al. 1994; module docstring).
JND_DELTA_E = 2.3
# Content moved by up to this many pixels is not a colour change (sub-pixel and 1-pixel reflow).
REFLOW_TOLERANCE_PX = 1


@dataclass(frozen=True)
class PerceptualColour:
    """What the colour penalty counts as a visible recolouring (module docstring): a CIE76 ΔE*ab above
    `delta_e` that no pixel within `shift_px` in the other image explains."""

    delta_e: float = JND_DELTA_E
    shift_px: int = REFLOW_TOLERANCE_PX

    def __post_init__(self) -> None:
        if self.delta_e < 0 or self.shift_px < 0:
            raise ValueError(f"delta_e and shift_px must be >= 0, got {self.delta_e}, {self.shift_px}")


def load_rgb(source: Path | str | bytes) -> np.ndarray:
    """Load a PNG (path or bytes) as an ``(H, W, 3)`` uint8 RGB array (alpha dropped)."""
    if isinstance(source, bytes):
        img = Image.open(io.BytesIO(source))
    else:
        img = Image.open(source)
    if img.mode != "RGB":
        img = img.convert("RGB")
    return np.array(img, dtype=np.uint8)  # one writable copy


def png_bytes(pixels: np.ndarray) -> bytes:
    """An ``(H, W, 3)`` uint8 array as PNG bytes (the inverse of load_rgb)."""
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def _check_rgb(img: np.ndarray, name: str) -> None:
    if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"{name} must be uint8 (H, W, 3), got {img.dtype} {img.shape}")


def pad_to_common(*images: np.ndarray) -> list[np.ndarray]:
    """Pad every image at the bottom/right with white to the largest height and width.

    Why: full-page screenshots of G, B and M differ in height whenever an edit changes
    the document length (a removed or duplicated element, a larger font). The renders
    share one coordinate system anchored at the page's top-left (§3.5), so padding at
    the bottom/right keeps every pixel at its page coordinate, and white is what the
    browser shows past the end of a page with the default canvas. Rows that exist on
    only one page then compare against white and count as differences, which is right:
    content that appears or disappears is a change.
    """
    for i, img in enumerate(images):
        _check_rgb(img, f"image {i}")
    h = max(img.shape[0] for img in images)
    w = max(img.shape[1] for img in images)
    out = []
    for img in images:
        if img.shape[:2] == (h, w):
            out.append(img)
            continue
        canvas = np.full((h, w, 3), WHITE, dtype=np.uint8)
        canvas[: img.shape[0], : img.shape[1]] = img
        out.append(canvas)
    return out


def _pad_mask(mask: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Extend a boolean mask to ``shape`` with False (padding is outside any footprint)."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D (H, W), got shape {mask.shape}")
    if mask.shape == shape:
        return mask
    if mask.shape[0] > shape[0] or mask.shape[1] > shape[1]:
        raise ValueError(f"mask {mask.shape} is larger than the images {shape}")
    out = np.zeros(shape, dtype=bool)
    out[: mask.shape[0], : mask.shape[1]] = mask
    return out


def pixel_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-pixel distance used by eq. 9 (OURS): max over RGB of ``|a - b|``, uint8 in 0..255."""
    a, b = pad_to_common(a, b)
    # |a - b| in uint8 as max - min (no widening copy), then the max over the three channel planes: several
    # times faster on a full page than a reduction along the short last axis.
    diff = np.maximum(a, b) - np.minimum(a, b)
    return np.maximum(np.maximum(diff[..., 0], diff[..., 1]), diff[..., 2])


def ssim_map(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """scikit-image's full SSIM map averaged over channels, shape ``(H, W)`` float64.

    Computed only where it can differ from 1: where a window holds the same pixels in both images, SSIM is
    exactly 1 (numerator and denominator are the same products), so the map is 1 outside the differing
    pixels' bounding box grown by a window radius. The box is grown by twice that (plus one), so every pixel
    whose window touches a difference sees the same neighbours as in the whole image, and reflected borders
    of the box reflect identical pixels. Inside the box the map is computed in bands of SSIM_BAND_ROWS rows,
    each read with a window radius of rows above and below, so skimage's float64 intermediates (about a
    dozen arrays of the box's size per channel) stay a band's size on a tall page. The result equals
    skimage's map over the whole image (to float rounding, ~1e-15: its running window sums start
    elsewhere); an edit of a few elements on a full page costs a fraction of it.
    """
    a, b = pad_to_common(a, b)
    smap = np.ones(a.shape[:2], dtype=np.float64)
    box = _differing_box(a, b)
    if box is None:
        return smap
    margin = 2 * SSIM_BORDER + 1
    height, width = a.shape[:2]
    top, bottom = _grown_span(box[0], box[1], margin, height)
    left, right = _grown_span(box[2], box[3], margin, width)
    for start in range(top, bottom, SSIM_BAND_ROWS):
        stop = min(bottom, start + SSIM_BAND_ROWS)
        if bottom - stop < SSIM_WIN:  # no band thinner than a window at the end
            stop = bottom
        # Rows read: the band plus a window radius each side, within the box (its reflected edge as before).
        read_top, read_bottom = max(top, start - SSIM_BORDER), min(bottom, stop + SSIM_BORDER)
        _, band = structural_similarity(a[read_top:read_bottom, left:right], b[read_top:read_bottom, left:right],
                                        channel_axis=-1, data_range=255, full=True)
        smap[start:stop, left:right] = band[start - read_top : stop - read_top].mean(axis=2, dtype=np.float64)
        if stop == bottom:
            break
    return smap


def _differing_box(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right) of the pixels where two same-shape images differ, None if none do.

    Rows are found by reducing each row's bytes (a long axis: fast), columns within those rows only."""
    height, width = a.shape[:2]
    rows = np.flatnonzero((a != b).reshape(height, -1).any(axis=1))
    if rows.size == 0:
        return None
    top, bottom = int(rows[0]), int(rows[-1]) + 1
    columns = (a[top:bottom] != b[top:bottom]).any(axis=(0, 2))
    differing = np.flatnonzero(columns)
    return top, bottom, int(differing[0]), int(differing[-1]) + 1


def _grown_span(start: int, stop: int, margin: int, size: int) -> tuple[int, int]:
    """[start, stop) grown by `margin` on each side within [0, size), and at least one SSIM window wide."""
    start, stop = max(0, start - margin), min(size, stop + margin)
    if stop - start < SSIM_WIN:
        start = max(0, min(start, size - SSIM_WIN))
        stop = min(size, start + SSIM_WIN)
    return start, stop


def _interior(shape: tuple[int, int]) -> np.ndarray:
    """The pixels skimage's mean SSIM uses (the border strip of the window radius dropped)."""
    inner = np.zeros(shape, dtype=bool)
    p = SSIM_BORDER
    inner[p : shape[0] - p, p : shape[1] - p] = True
    return inner


def masked_ssim(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> float | None:
    """SSIM_mask(a, b): the SSIM map averaged over the pixels of ``mask`` (eqs. 10-11).

    ``mask`` is boolean ``(H, W)`` in the coordinates of the (padded) images. Border pixels
    within the window radius are dropped like in skimage's own mean, so a full mask gives
    exactly ``structural_similarity(a, b, channel_axis=-1, data_range=255)``. If the mask
    touches only that border strip, those border pixels are used rather than nothing.
    Returns None for an empty mask (there is nothing to score).
    """
    a, b = pad_to_common(a, b)
    if min(a.shape[:2]) < SSIM_WIN:
        raise ValueError(f"images must be at least {SSIM_WIN}x{SSIM_WIN}, got {a.shape[:2]}")
    mask = _pad_mask(mask, a.shape[:2])
    if not mask.any():
        return None
    return _masked_mean(ssim_map(a, b), mask)


def _masked_mean(smap: np.ndarray, mask: np.ndarray) -> float | None:
    """Mean of an SSIM map over a mask, border strip dropped as in skimage (see masked_ssim)."""
    if not mask.any():
        return None
    use = mask & _interior(mask.shape)
    if not use.any():
        use = mask
    return float(smap[use].mean(dtype=np.float64))


def diff_footprint(golden: np.ndarray, broken: np.ndarray, tau: int = DEFAULT_TAU) -> np.ndarray:
    """Repair footprint Ω (eq. 9): True where golden and broken renders differ by more than τ.

    Images of different size are padded with white first (see :func:`pad_to_common`), so Ω
    has the larger shape.
    """
    return pixel_distance(golden, broken) > tau


def _packed(image: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8 -> (H, W) int32 0xRRGGBB, one number per colour."""
    return (image[..., 0].astype(np.int32) << 16) | (image[..., 1].astype(np.int32) << 8) | image[..., 2]


class _LabLookup:
    """CIELAB (D65) of the colours two packed images show, each distinct colour converted once (a page has few:
    its palette and the anti-aliasing between them). Distinct colours are found through a dense 24-bit table,
    linear in the pixels (a sort of every pixel, as np.unique does, costs seconds on a tall page)."""

    def __init__(self, *packed: np.ndarray) -> None:
        present = np.zeros(1 << 24, dtype=bool)
        for colours in packed:
            present[colours] = True
        distinct = np.flatnonzero(present)
        self._index = np.zeros(1 << 24, dtype=np.int32)
        self._index[distinct] = np.arange(distinct.size, dtype=np.int32)
        rgb = np.stack([(distinct >> 16) & 255, (distinct >> 8) & 255, distinct & 255], axis=-1) / 255.0
        self._lab = rgb2lab(rgb[:, None, :])[:, 0, :]

    def __call__(self, colours: np.ndarray) -> np.ndarray:
        return self._lab[self._index[colours]]


def _squared_gap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    diff = a - b
    return np.einsum("...k,...k->...", diff, diff)


def perceptually_changed(golden: np.ndarray, model: np.ndarray, region: np.ndarray,
                         rule: PerceptualColour) -> np.ndarray:
    """Boolean (H, W): pixels of ``region`` whose colour changed visibly (PerceptualColour): the CIE76 ΔE*ab
    from golden's colour to the nearest model colour within `shift_px`, or from model's to the nearest golden
    colour there, exceeds `delta_e`.

    Only pixels that differ at all are looked at; a pixel whose own ΔE is within the threshold is settled without
    its neighbourhood (the unshifted comparison is one of the shifts, so neither nearest distance can exceed its
    own), and a pixel leaves the neighbourhood search as soon as some shift explains it both ways."""
    golden, model = pad_to_common(golden, model)
    region = _pad_mask(region, golden.shape[:2])
    changed = region & (pixel_distance(golden, model) > 0)
    if not changed.any():
        return changed
    packed_g, packed_m = _packed(golden), _packed(model)
    lab = _LabLookup(packed_g, packed_m)
    ys, xs = np.nonzero(changed)
    limit = rule.delta_e * rule.delta_e  # squared distances: no square root per comparison
    own_g, own_m = lab(packed_g[ys, xs]), lab(packed_m[ys, xs])
    visible = _squared_gap(own_g, own_m) > limit
    ys, xs, own_g, own_m = ys[visible], xs[visible], own_g[visible], own_m[visible]
    r, (height, width) = rule.shift_px, golden.shape[:2]
    shifts = [(dy, dx) for dy in range(-r, r + 1) for dx in range(-r, r + 1) if (dy, dx) != (0, 0)]
    # the closest shifts first: a reflow of one pixel is mostly explained by them, and leaves the search early
    shifts.sort(key=lambda shift: abs(shift[0]) + abs(shift[1]))
    gap_g = np.full(ys.shape, np.inf)
    gap_m = np.full(ys.shape, np.inf)
    for dy, dx in shifts:
        yy, xx = np.clip(ys + dy, 0, height - 1), np.clip(xs + dx, 0, width - 1)
        gap_g = np.minimum(gap_g, _squared_gap(own_g, lab(packed_m[yy, xx])))
        gap_m = np.minimum(gap_m, _squared_gap(own_m, lab(packed_g[yy, xx])))
        open_ = (gap_g > limit) | (gap_m > limit)
        if not open_.all():
            ys, xs, own_g, own_m, gap_g, gap_m = ys[open_], xs[open_], own_g[open_], own_m[open_], gap_g[open_], gap_m[open_]
    changed = np.zeros(golden.shape[:2], dtype=bool)
    changed[ys, xs] = True
    return changed


def color_penalty(
    golden: np.ndarray,
    model: np.ndarray,
    region: np.ndarray,
    tau: int = DEFAULT_TAU,
    *,
    perceptual: PerceptualColour | None = None,
) -> float:
    """Colour-sensitive pixel-difference penalty of S_outbox (§3.5 after eq. 11; formula OURS).

    The fraction of pixels in ``region`` (normally Ω̄, the complement of the footprint) whose colour
    changed: with `perceptual`, visibly (CIE76 ΔE*ab over the JND, reflow of up to `shift_px` tolerated;
    `perceptually_changed`); without, by more than ``tau`` in channel-max distance (the earlier reading).
    SSIM barely moves when a flat area is recoloured (its luminance term stays near 1 for close means),
    which this count catches. 0.0 for an empty region.
    """
    golden, model = pad_to_common(golden, model)
    region = _pad_mask(region, golden.shape[:2])
    n = int(region.sum())
    if n == 0:
        return 0.0
    if perceptual is not None:
        return float(perceptually_changed(golden, model, region, perceptual).sum() / n)
    dist = pixel_distance(golden, model)
    return float((dist[region] > tau).sum() / n)


def inbox_score(
    golden: np.ndarray, broken: np.ndarray, model: np.ndarray, tau: int = DEFAULT_TAU
) -> float | None:
    """S_inbox = SSIM_Ω(G, M) (eq. 10). None when Ω is empty (G == B: no defect to repair;
    eq. 7's visibility check is meant to make this impossible)."""
    golden, broken, model = pad_to_common(golden, broken, model)
    omega = diff_footprint(golden, broken, tau)
    return masked_ssim(golden, model, omega)


def outbox_score(
    golden: np.ndarray,
    broken: np.ndarray,
    model: np.ndarray,
    tau: int = DEFAULT_TAU,
    *,
    color_tau: int = DEFAULT_TAU,
    perceptual: PerceptualColour | None = None,
) -> float:
    """S_outbox = SSIM_Ω̄(G, M) * (1 - colour penalty on Ω̄) (eq. 11 plus §3.5's penalty).

    If Ω covers the whole page there is nothing to preserve and the score is 1.0.
    """
    golden, broken, model = pad_to_common(golden, broken, model)
    outside = ~diff_footprint(golden, broken, tau)
    ssim_out = masked_ssim(golden, model, outside)
    if ssim_out is None:
        return 1.0
    return ssim_out * (1.0 - color_penalty(golden, model, outside, color_tau, perceptual=perceptual))


def final_score(s_in: float, s_out: float) -> float:
    """Score = 0.8 * S_inbox + 0.2 * S_outbox (eq. 12), for both tracks."""
    return INBOX_WEIGHT * float(s_in) + OUTBOX_WEIGHT * float(s_out)


def rubric_inbox_score(dimension_scores: Mapping[str, float], overall: float) -> float:
    """Macro-level S_inbox (eq. 8): mean of the five rubric dimensions and the overall rating.

    Every score must lie on the five-band scale {1.0, 0.75, 0.5, 0.25, 0.0} (§3.5).
    """
    if set(dimension_scores) != set(RUBRIC_DIMENSIONS):
        raise ValueError(
            f"rubric needs exactly {RUBRIC_DIMENSIONS}, got {sorted(dimension_scores)}"
        )
    scores = [float(dimension_scores[d]) for d in RUBRIC_DIMENSIONS] + [float(overall)]
    for s in scores:
        if s not in RUBRIC_BANDS:
            raise ValueError(f"rubric score {s} is not one of {RUBRIC_BANDS}")
    return sum(scores) / 6.0


@dataclass(frozen=True)
class MicroScores:
    """eqs. 9-11 of one micro turn, with the footprint and SSIM map they came from (for per-defect scores)."""

    omega: np.ndarray  # eq. 9 footprint, in the padded coordinates
    smap: np.ndarray  # SSIM map of (G, M)
    s_inbox: float | None  # eq. 10; None for an empty footprint
    s_outbox: float  # eq. 11 times the colour penalty


def micro_scores(
    golden: np.ndarray, broken: np.ndarray, model: np.ndarray, tau: int = DEFAULT_TAU,
    *, outbox_mask: OutboxMask = "eq11", perceptual: PerceptualColour | None = None,
) -> MicroScores:
    """eqs. 9-11 from one SSIM map. `outbox_mask`: "eq11" (the paper: every pixel of Ω̄) or
    "guard_band" (only pixels whose SSIM window lies wholly outside Ω; see the module docstring).
    `perceptual`: what the colour penalty counts (None: any pixel over τ, the earlier reading)."""
    golden, broken, model = pad_to_common(golden, broken, model)
    if min(golden.shape[:2]) < SSIM_WIN:
        raise ValueError(f"images must be at least {SSIM_WIN}x{SSIM_WIN}, got {golden.shape[:2]}")
    if outbox_mask not in ("eq11", "guard_band"):
        raise ValueError(f"outbox_mask {outbox_mask!r}: choose eq11 or guard_band")
    omega = diff_footprint(golden, broken, tau)  # eq. 9
    smap = ssim_map(golden, model)  # one SSIM map serves both eq. 10 and eq. 11
    s_in = _masked_mean(smap, omega)  # eq. 10
    outside = ~omega
    if outbox_mask == "guard_band":
        guarded = ~binary_dilation(omega, structure=np.ones((SSIM_WIN, SSIM_WIN), dtype=bool))
        outside = guarded if guarded.any() else outside
    ssim_out = _masked_mean(smap, outside)  # eq. 11
    # The colour penalty (§3.5) always counts every pixel of Ω̄.
    s_out = 1.0 if ssim_out is None else ssim_out * (1.0 - color_penalty(golden, model, ~omega, tau,
                                                                         perceptual=perceptual))
    return MicroScores(omega=omega, smap=smap, s_inbox=s_in, s_outbox=s_out)


def mean_over(smap: np.ndarray, mask: np.ndarray) -> float | None:
    """An SSIM map's mean over a mask, border strip dropped as in skimage (None for an empty mask)."""
    return _masked_mean(smap, mask)


def micro_turn_score(
    golden: np.ndarray, broken: np.ndarray, model: np.ndarray, tau: int = DEFAULT_TAU,
    *, outbox_mask: OutboxMask = "eq11", perceptual: PerceptualColour | None = None,
) -> dict[str, float | None]:
    """All micro-level numbers of one turn: ``s_inbox``, ``s_outbox``, ``score`` (eqs. 9-12).

    ``score`` is None when the footprint is empty (no defect was visible).
    """
    scores = micro_scores(golden, broken, model, tau, outbox_mask=outbox_mask, perceptual=perceptual)
    return {
        "s_inbox": scores.s_inbox,
        "s_outbox": scores.s_outbox,
        "score": None if scores.s_inbox is None else final_score(scores.s_inbox, scores.s_outbox),
    }
