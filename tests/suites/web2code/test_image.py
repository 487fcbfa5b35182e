"""Tests for the MT-Web2Code pixel metrics (runner/suites/web2code/image.py)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw
from skimage.metrics import structural_similarity

from runner.suites.web2code import image as im


def _skimage_mean(a: np.ndarray, b: np.ndarray) -> float:
    return float(structural_similarity(a, b, channel_axis=-1, data_range=255))


def _page_like(seed: int, h: int = 240, w: int = 320) -> np.ndarray:
    """A 'natural-ish' page: flat background, coloured blocks, text-like strokes."""
    rng = np.random.default_rng(seed)
    img = Image.new("RGB", (w, h), (250, 248, 240))
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, w, 30], fill=(30, 60, 110))
    for i in range(6):
        x, y = int(rng.integers(0, w - 60)), int(rng.integers(40, h - 40))
        d.rectangle([x, y, x + 50, y + 25], fill=tuple(int(c) for c in rng.integers(0, 255, 3)))
    for row in range(50, h - 10, 14):
        d.text((10, row), "Lorem ipsum bakery menu " * 2, fill=(20, 20, 20))
    arr = np.asarray(img, dtype=np.float64)
    arr += rng.normal(0, 2.0, arr.shape)  # mild sensor-like noise
    return np.clip(arr, 0, 255).astype(np.uint8)


def test_masked_ssim_equals_skimage_on_full_mask_random():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (64, 80, 3), dtype=np.uint8)
    b = np.clip(a.astype(int) + rng.integers(-40, 40, a.shape), 0, 255).astype(np.uint8)
    full = np.ones(a.shape[:2], bool)
    assert im.masked_ssim(a, b, full) == pytest.approx(_skimage_mean(a, b), abs=1e-6)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_masked_ssim_equals_skimage_on_full_mask_natural(seed):
    a = _page_like(seed)
    b = _page_like(seed + 100)
    full = np.ones(a.shape[:2], bool)
    assert im.masked_ssim(a, b, full) == pytest.approx(_skimage_mean(a, b), abs=1e-6)


def test_identical_images_score_one_everywhere():
    a = _page_like(7)
    mask = np.zeros(a.shape[:2], bool)
    mask[50:90, 100:200] = True
    assert im.masked_ssim(a, a.copy(), mask) == pytest.approx(1.0, abs=1e-12)
    assert im.outbox_score(a, _page_like(8), a.copy()) == pytest.approx(1.0, abs=1e-12)


def test_empty_mask_returns_none():
    a = _page_like(1)
    assert im.masked_ssim(a, a, np.zeros(a.shape[:2], bool)) is None


def test_masked_ssim_is_local():
    a = _page_like(3)
    b = a.copy()
    b[100:140, 100:160] = 0  # damage one block only
    near = np.zeros(a.shape[:2], bool)
    near[100:140, 100:160] = True
    far = np.zeros(a.shape[:2], bool)
    far[:40, :] = True
    assert im.masked_ssim(a, b, near) < 0.5
    assert im.masked_ssim(a, b, far) == pytest.approx(1.0)


def test_mask_only_in_border_strip_still_scored():
    a = _page_like(4)
    mask = np.zeros(a.shape[:2], bool)
    mask[0, :] = True
    assert im.masked_ssim(a, a, mask) == pytest.approx(1.0)


def test_footprint_on_synthetic_diff():
    g = np.full((50, 60, 3), 255, np.uint8)
    b = g.copy()
    b[10:20, 5:15] = (255, 0, 255)  # one-channel change counts (channel-max distance)
    b[30, 30] = (250, 255, 255)  # a 5-level change: in the footprint at tau=0, not at tau=5
    omega = im.diff_footprint(g, b)
    assert omega.dtype == bool and omega.shape == (50, 60)
    assert omega.sum() == 100 + 1
    assert omega[10:20, 5:15].all()
    assert im.diff_footprint(g, b, tau=5).sum() == 100
    assert not im.diff_footprint(g, g.copy()).any()


def test_inbox_and_outbox_on_synthetic_repair():
    g = _page_like(11)
    b = g.copy()
    b[60:100, 40:140] = (200, 30, 30)  # the injected defect
    perfect = g.copy()
    unrepaired = b.copy()
    assert im.inbox_score(g, b, perfect) == pytest.approx(1.0)
    assert im.inbox_score(g, b, unrepaired) < 0.5
    # unrepaired output left everything outside the footprint alone: no colour penalty, and
    # SSIM is below 1 only where 7x7 windows at the footprint's edge reach into it
    outside = ~im.diff_footprint(g, b)
    assert im.color_penalty(g, unrepaired, outside) == 0.0
    assert 0.99 < im.outbox_score(g, b, unrepaired) < 1.0
    # collateral damage outside the footprint lowers S_outbox
    collateral = g.copy()
    collateral[180:230, 200:300] = 0
    assert im.outbox_score(g, b, collateral) < 0.95
    assert im.inbox_score(g, g.copy(), perfect) is None  # no defect -> nothing to score


def test_color_penalty_catches_recolouring_ssim_misses():
    g = np.full((80, 100, 3), 240, np.uint8)
    g[:, 50:] = (40, 90, 160)
    m = g.copy()
    m[:, 50:] = (44, 94, 164)  # a slight recolour of a flat area
    region = np.ones(g.shape[:2], bool)
    ssim_only = im.masked_ssim(g, m, region)
    assert ssim_only > 0.99  # SSIM is nearly blind to it
    pen = im.color_penalty(g, m, region)
    assert pen == pytest.approx(0.5)
    assert im.outbox_score(g, g, m) == pytest.approx(ssim_only * 0.5, abs=1e-9)
    assert im.color_penalty(g, m, np.zeros_like(region)) == 0.0
    assert im.color_penalty(g, m, region, tau=10) == 0.0


def test_final_score_formula():
    assert im.final_score(1.0, 1.0) == pytest.approx(1.0)
    assert im.final_score(0.5, 1.0) == pytest.approx(0.6)
    assert im.final_score(0.794, 0.992) == pytest.approx(0.8 * 0.794 + 0.2 * 0.992)


def test_micro_turn_score_bundle():
    g = _page_like(5)
    b = g.copy()
    b[20:40, 20:80] = 0
    out = im.micro_turn_score(g, b, g.copy())
    assert out == {"s_inbox": pytest.approx(1.0), "s_outbox": pytest.approx(1.0),
                   "score": pytest.approx(1.0)}
    # the bundle agrees with the separate functions on an imperfect output
    m = g.copy()
    m[25:35, 30:60] = 90
    m[150:170, 200:260] = (10, 200, 10)
    out = im.micro_turn_score(g, b, m)
    s_in, s_out = im.inbox_score(g, b, m), im.outbox_score(g, b, m)
    assert out["s_inbox"] == pytest.approx(s_in, abs=1e-12)
    assert out["s_outbox"] == pytest.approx(s_out, abs=1e-12)
    assert out["score"] == pytest.approx(im.final_score(s_in, s_out), abs=1e-12)


def test_rubric_inbox_eq8():
    dims = {"layout": 1.0, "elements": 0.75, "text": 0.5, "color": 0.25, "spacing": 0.0}
    assert im.rubric_inbox_score(dims, 1.0) == pytest.approx(3.5 / 6)
    with pytest.raises(ValueError):
        im.rubric_inbox_score(dims | {"layout": 0.6}, 1.0)
    with pytest.raises(ValueError):
        im.rubric_inbox_score({"layout": 1.0}, 1.0)


def test_different_heights_padded_with_white():
    g = _page_like(6, h=200)
    longer = np.vstack([g, np.zeros((40, g.shape[1], 3), np.uint8)])  # extra dark content
    omega = im.diff_footprint(g, longer)
    assert omega.shape == (240, g.shape[1])
    assert not omega[:200].any() and omega[200:].all()
    # a longer page with white tail is identical to the padded shorter one
    white_tail = np.vstack([g, np.full((40, g.shape[1], 3), 255, np.uint8)])
    assert not im.diff_footprint(g, white_tail).any()
    assert im.masked_ssim(g, white_tail, np.ones((240, g.shape[1]), bool)) == pytest.approx(1.0)
    # a mask in the shorter image's coordinates is extended with False
    small_mask = np.ones(g.shape[:2], bool)
    small_mask[190:] = False  # keep the 7x7 windows clear of the added rows
    assert im.masked_ssim(g, longer, small_mask) == pytest.approx(1.0, abs=1e-9)
    # different widths too
    a, b = im.pad_to_common(g, g[:, :100])
    assert a.shape == b.shape == g.shape and (b[:, 100:] == 255).all()


def test_load_rgb_roundtrip(tmp_path):
    arr = _page_like(9)
    buf = io.BytesIO()
    Image.fromarray(arr).convert("RGBA").save(buf, format="PNG")
    back = im.load_rgb(buf.getvalue())
    assert back.dtype == np.uint8 and back.shape == arr.shape and (back == arr).all()
    p = tmp_path / "x.png"
    p.write_bytes(buf.getvalue())
    assert (im.load_rgb(p) == arr).all()


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        im.diff_footprint(np.zeros((10, 10), np.uint8), np.zeros((10, 10), np.uint8))
    tiny = np.zeros((5, 5, 3), np.uint8)
    with pytest.raises(ValueError):
        im.masked_ssim(tiny, tiny, np.ones((5, 5), bool))


def test_eq11_averages_ssim_over_the_whole_complement_of_the_footprint():
    """MT-Web2Code eq. 11: S_outbox = SSIM_Ω̄(G, M). G: a black 10x10 square on white 40x40; B and M: all
    white (the model changed nothing). Ω is the square; S_outbox is skimage's SSIM map (channel mean)
    averaged over every non-border pixel outside Ω, written out here apart from the module."""
    golden = np.full((40, 40, 3), 255, dtype=np.uint8)
    golden[15:25, 15:25] = 0
    broken = np.full_like(golden, 255)
    _, full = structural_similarity(golden, broken, channel_axis=-1, data_range=255, full=True)
    smap = full.mean(axis=2)
    outside = np.ones((40, 40), dtype=bool)
    outside[15:25, 15:25] = False
    interior = np.zeros_like(outside)
    interior[3:37, 3:37] = True
    expected = float(smap[outside & interior].mean())
    assert expected < 0.99  # the windows around the square's edge see it
    scores = im.micro_turn_score(golden, broken, broken)
    assert scores["s_outbox"] == pytest.approx(expected, abs=1e-12)
    assert im.outbox_score(golden, broken, broken) == pytest.approx(expected, abs=1e-12)
    assert im.micro_turn_score(golden, broken, broken, outbox_mask="guard_band")["s_outbox"] == pytest.approx(1.0)


def test_suite_scoring_uses_the_same_eqs_9_to_12():
    from runner.suites.web2code import scoring

    golden = _page_like(3)
    broken = golden.copy()
    broken[60:120, 40:200] = (200, 30, 30)
    model = _page_like(4)
    for mask in ("eq11", "guard_band"):
        suite = scoring.score_micro(golden, broken, model, [], outbox_mask=mask)
        metric = im.micro_turn_score(golden, broken, model, outbox_mask=mask)
        assert (suite["s_inbox"], suite["s_outbox"], suite["score"]) == (
            metric["s_inbox"], metric["s_outbox"], metric["score"])


def _whole_image_map(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _, full = structural_similarity(a, b, channel_axis=-1, data_range=255, full=True)
    return full.astype(np.float64).mean(axis=2)


@pytest.mark.parametrize("box", [(40, 60, 50, 90), (0, 5, 0, 4), (195, 200, 290, 300), (0, 200, 120, 121)])
def test_ssim_map_over_the_differing_box_equals_the_whole_image_map(box):
    # Only the differing pixels' surroundings are computed; the map must be skimage's, edges included.
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, size=(200, 300, 3), dtype=np.uint8)
    b = a.copy()
    top, bottom, left, right = box
    b[top:bottom, left:right] = rng.integers(0, 256, size=(bottom - top, right - left, 3), dtype=np.uint8)
    assert (a != b).any()
    np.testing.assert_allclose(im.ssim_map(a, b), _whole_image_map(a, b), rtol=0, atol=1e-12)


def test_ssim_map_of_scattered_differences_equals_the_whole_image_map():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, size=(64, 80, 3), dtype=np.uint8)
    b = a.copy()
    b[3, 70] = 255 - b[3, 70]
    b[60, 2, 1] = 255 - b[60, 2, 1]
    np.testing.assert_allclose(im.ssim_map(a, b), _whole_image_map(a, b), rtol=0, atol=1e-12)
    assert np.array_equal(im.ssim_map(a, a), np.ones((64, 80)))


def test_pixel_distance_is_the_channel_max_of_the_absolute_difference():
    rng = np.random.default_rng(11)
    a = rng.integers(0, 256, size=(30, 40, 3), dtype=np.uint8)
    b = rng.integers(0, 256, size=(30, 40, 3), dtype=np.uint8)
    expected = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)
    assert np.array_equal(im.pixel_distance(a, b), expected)
    assert im.pixel_distance(a, b).dtype == np.uint8 and im.pixel_distance(a, a).max() == 0


@pytest.mark.parametrize("band_rows", [7, 16, 50])
def test_ssim_map_in_bands_equals_the_whole_image_map(monkeypatch, band_rows):
    # Band edges fall inside the differing box; every band's rows must be skimage's whole-image values.
    monkeypatch.setattr(im, "SSIM_BAND_ROWS", band_rows)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, size=(130, 40, 3), dtype=np.uint8)
    b = a.copy()
    b[10:121, 5:30] = rng.integers(0, 256, size=(111, 25, 3), dtype=np.uint8)
    np.testing.assert_allclose(im.ssim_map(a, b), _whole_image_map(a, b), rtol=0, atol=1e-12)


def test_differing_box_is_the_bounding_box_of_the_differing_pixels():
    rng = np.random.default_rng(9)
    a = rng.integers(0, 256, size=(50, 60, 3), dtype=np.uint8)
    assert im._differing_box(a, a.copy()) is None
    for points in ([(3, 7)], [(0, 59), (49, 0)], [(20, 30), (25, 31), (22, 10)]):
        b = a.copy()
        for y, x in points:
            b[y, x, y % 3] ^= 1
        ys, xs = np.nonzero((a != b).any(axis=2))
        assert im._differing_box(a, b) == (ys.min(), ys.max() + 1, xs.min(), xs.max() + 1)


# --- the perceptual colour penalty (the default) and the earlier any-pixel reading ---------------------------------

from skimage.color import deltaE_cie76, rgb2lab  # noqa: E402

PERCEPTUAL = im.PerceptualColour()


def _text_page(height: int = 120, width: int = 160) -> np.ndarray:
    """Dark glyph-like strokes on a light page (edges everywhere a 1-px move would change)."""
    page = np.full((height, width, 3), 250, np.uint8)
    for row in range(10, height - 10, 12):
        for col in range(8, width - 8, 9):
            page[row : row + 7, col : col + 2] = (30, 30, 60)
            page[row + 6 : row + 7, col : col + 6] = (30, 30, 60)
    return page


def test_a_recolour_below_the_just_noticeable_difference_is_not_penalised():
    g = np.full((80, 100, 3), 240, np.uint8)
    g[:, 50:] = (200, 210, 230)  # light colours: +4 per channel is about 1.5 dE*ab
    m = g.copy()
    m[:, 50:] += 4
    region = np.ones(g.shape[:2], bool)
    delta = deltaE_cie76(rgb2lab(g[0, 60] / 255.0), rgb2lab(m[0, 60] / 255.0))
    assert delta < im.JND_DELTA_E
    assert im.color_penalty(g, m, region) == pytest.approx(0.5)  # the earlier reading counts every pixel
    assert im.color_penalty(g, m, region, perceptual=PERCEPTUAL) == 0.0


def test_a_visible_recolour_is_penalised_by_both_readings():
    g = np.full((80, 100, 3), 240, np.uint8)
    g[:, 50:] = (40, 90, 160)
    m = g.copy()
    m[:, 50:] = (60, 110, 180)  # about 8 dE*ab
    region = np.ones(g.shape[:2], bool)
    assert im.color_penalty(g, m, region, perceptual=PERCEPTUAL) == pytest.approx(0.5)
    assert im.color_penalty(g, m, region) == pytest.approx(0.5)
    # just over the threshold counts, just under does not
    just = im.PerceptualColour(delta_e=float(deltaE_cie76(rgb2lab(g[0, 60] / 255.0), rgb2lab(m[0, 60] / 255.0))))
    assert im.color_penalty(g, m, region, perceptual=im.PerceptualColour(delta_e=just.delta_e - 0.01)) == 0.5
    assert im.color_penalty(g, m, region, perceptual=im.PerceptualColour(delta_e=just.delta_e + 0.01)) == 0.0


@pytest.mark.parametrize("dy, dx", [(1, 0), (0, 1), (1, 1), (-1, 0)])
def test_a_one_pixel_reflow_is_not_a_recolouring(dy: int, dx: int):
    g = _text_page()
    m = np.full_like(g, 250)
    m[max(dy, 0) : g.shape[0] + min(dy, 0), max(dx, 0) : g.shape[1] + min(dx, 0)] = \
        g[max(-dy, 0) : g.shape[0] - max(dy, 0), max(-dx, 0) : g.shape[1] - max(dx, 0)]
    region = np.ones(g.shape[:2], bool)
    assert im.color_penalty(g, m, region) > 0.05  # the earlier reading: every moved edge pixel
    assert im.color_penalty(g, m, region, perceptual=PERCEPTUAL) == 0.0
    # a two-pixel move is more than the tolerance: counted again
    moved = np.full_like(g, 250)
    moved[2:] = g[:-2]
    assert im.color_penalty(g, moved, region, perceptual=PERCEPTUAL) > 0.05
    assert im.color_penalty(g, moved, region, perceptual=im.PerceptualColour(shift_px=2)) == 0.0


def test_content_added_on_a_blank_area_is_seen_from_either_side():
    g = np.full((60, 60, 3), 255, np.uint8)
    m = g.copy()
    m[20:40, 20:40] = (0, 0, 0)  # a new black block: each of its pixels has white (golden) neighbours at its edge
    region = np.ones(g.shape[:2], bool)
    assert im.color_penalty(g, m, region, perceptual=PERCEPTUAL) == pytest.approx(400 / 3600)


def test_outbox_scores_keep_both_readings_apart():
    g = _text_page()
    b = g.copy()
    b[10:30, 10:40] = 0
    m = np.full_like(g, 250)
    m[1:] = g[:-1]
    m[10:30, 10:40] = g[10:30, 10:40]
    old = im.outbox_score(g, b, m)
    new = im.outbox_score(g, b, m, perceptual=PERCEPTUAL)
    ssim_only = im.masked_ssim(g, m, ~im.diff_footprint(g, b))
    assert new == pytest.approx(ssim_only) and old < new  # SSIM still sees the move; the penalty no longer doubles it
    assert im.micro_turn_score(g, b, m, perceptual=PERCEPTUAL)["s_outbox"] == pytest.approx(new)
