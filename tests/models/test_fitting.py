"""Request fitting (runner/models/fitting.py): the documented rule on real PNGs, no server needed."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from runner.models.fitting import RequestLimits, RequestTooLarge, collapse_text, fit_messages


def png_url(width: int, height: int, colour: tuple[int, int, int] = (200, 30, 30)) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def image_sizes(messages: list[dict[str, Any]]) -> list[tuple[int, int]]:
    sizes = []
    for message in messages:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                with Image.open(io.BytesIO(base64.b64decode(data))) as image:
                    sizes.append(image.size)
    return sizes


def pair_parts(index: int, size: tuple[int, int] = (320, 200)) -> list[dict[str, Any]]:
    mark = {"pair": f"step-{index}"}
    return [
        {"type": "text", "text": f"Action {index}. Before:", "fit": mark},
        {"type": "image_url", "image_url": {"url": png_url(*size)}, "fit": {**mark, "name": f"before{index}.png"}},
        {"type": "text", "text": "After:", "fit": mark},
        {"type": "image_url", "image_url": {"url": png_url(*size, (30, 200, 30))}, "fit": {**mark, "name": f"after{index}.png"}},
    ]


def test_a_request_within_the_limits_is_sent_as_given() -> None:
    content = [{"type": "text", "text": "look"}, *pair_parts(0)]
    fitted = fit_messages([{"role": "user", "content": content}], RequestLimits(images_per_prompt=4))
    assert fitted.messages[0]["content"] == [{k: v for k, v in part.items() if k != "fit"} for part in content]
    assert fitted.record["images_fitted"] == [] and fitted.record["images_sent"] == 2


def test_pairs_are_composed_side_by_side_when_two_images_each_are_too_many() -> None:
    content = [{"type": "image_url", "image_url": {"url": png_url(320, 200)}, "fit": {"name": "load.png"}}]
    content += pair_parts(0) + pair_parts(1) + pair_parts(2)  # 7 images; composed: 4
    fitted = fit_messages([{"role": "user", "content": content}], RequestLimits(images_per_prompt=4))
    sizes = image_sizes(fitted.messages)
    assert len(sizes) == 4
    assert sizes[1:] == [(320 * 2 + 16, 200)] * 3  # BEFORE | gap | AFTER
    composed = [entry for entry in fitted.record["images_fitted"] if entry["fitted"] == "composed"]
    assert [entry["images"] for entry in composed][0] == ["before0.png", "after0.png"]
    texts = [part["text"] for part in fitted.messages[0]["content"] if part["type"] == "text"]
    assert any("Action 1. Before:" in text and "BEFORE on the left" in text for text in texts)
    assert all("fit" not in part for part in fitted.messages[0]["content"])  # private marks never leave


def test_many_pairs_go_on_contact_sheets_in_order() -> None:
    content = [{"type": "image_url", "image_url": {"url": png_url(320, 200)}, "fit": {"name": "load.png", "priority": 1}}]
    for index in range(12):
        content += pair_parts(index)
    fitted = fit_messages([{"role": "user", "content": content}], RequestLimits(images_per_prompt=4))
    assert fitted.record["images_given"] == 25 and fitted.record["images_sent"] == 4
    sheets = [entry for entry in fitted.record["images_fitted"] if entry["fitted"] == "contact sheet"]
    assert [entry["sheet"] for entry in sheets] == [1, 2, 3]
    assert sheets[0]["images"][:2] == ["before0.png", "after0.png"] and len(sheets[0]["images"]) == 8
    assert sheets[2]["images"][-1] == "after11.png"
    assert image_sizes(fitted.messages)[1] == (656, 4 * 200 + 3 * 16)  # four rows stacked


def test_a_tall_full_page_becomes_full_width_tiles_one_viewport_tall() -> None:
    page = {"type": "image_url", "image_url": {"url": png_url(1280, 8000)},
            "fit": {"full_page": True, "viewport_height": 800, "name": "full.png"}}
    unlimited = fit_messages([{"role": "user", "content": [page]}], RequestLimits(), max_side=2048)
    assert image_sizes(unlimited.messages) == [(1280, 800)] * 10
    four = fit_messages([{"role": "user", "content": [page]}], RequestLimits(images_per_prompt=4), max_side=2048)
    assert image_sizes(four.messages) == [(1280, 2000)] * 4  # fewer, taller tiles: still full width
    (entry,) = four.record["images_fitted"]
    assert entry["fitted"] == "tiled" and entry["tiles"] == 4 and "left_out" not in entry
    two = fit_messages([{"role": "user", "content": [page]}], RequestLimits(images_per_prompt=2), max_side=2048)
    assert image_sizes(two.messages) == [(1280, 2048)] * 2  # never taller than the cap ...
    assert two.record["images_fitted"][0]["left_out"] == "page rows 4096-8000 (image limit)"  # ... and said so


def test_a_page_that_fits_the_size_cap_stays_one_image() -> None:
    page = {"type": "image_url", "image_url": {"url": png_url(1280, 1500)}, "fit": {"full_page": True}}
    fitted = fit_messages([{"role": "user", "content": [page]}], RequestLimits(images_per_prompt=4), max_side=2048)
    assert image_sizes(fitted.messages) == [(1280, 1500)] and fitted.record["images_fitted"] == []


def test_single_images_over_the_limit_leave_by_priority_then_earliest() -> None:
    content = [
        {"type": "image_url", "image_url": {"url": png_url(50, 50)}, "fit": {"name": "step0.png"}},
        {"type": "image_url", "image_url": {"url": png_url(50, 50)}, "fit": {"name": "page.png", "priority": 1}},
        {"type": "image_url", "image_url": {"url": png_url(50, 50)}, "fit": {"name": "step1.png"}},
    ]
    fitted = fit_messages([{"role": "user", "content": content}], RequestLimits(images_per_prompt=2))
    assert fitted.record["images_sent"] == 2
    assert [(e["image"], e["fitted"]) for e in fitted.record["images_fitted"]] == [("step0.png", "left out")]
    notes = [part["text"] for part in fitted.messages[0]["content"] if part["type"] == "text"]
    assert notes == ["(step0.png: left out, the model takes no more images in one prompt)"]  # said, in place


def test_text_is_cut_in_the_stated_order_to_fit_context_minus_output() -> None:
    content = [
        {"type": "text", "text": "REQUEST: keep me"},
        {"type": "text", "text": "D" * 30_000, "fit": {"section": "dom"}},
        {"type": "text", "text": "S" * 60_000, "fit": {"section": "source"}},
    ]
    limits = RequestLimits(context_tokens=13_000, chars_per_token=3.0)
    fitted = fit_messages([{"role": "user", "content": content}], limits, max_tokens=8_000,
                          trim_order=["source", "dom"])
    trimmed = fitted.record["sections_trimmed"]
    assert [entry["section"] for entry in trimmed] == ["source", "dom"]  # the source went first, whole
    assert trimmed[0]["chars_removed"] == 60_000
    assert fitted.record["estimated_prompt_tokens"] <= fitted.record["prompt_budget_tokens"] == 5_000
    text = collapse_text(fitted.messages)[0]["content"]
    assert text.startswith("REQUEST: keep me")
    assert "[60000 characters left out to fit the model's context]" in text
    assert f"[... {trimmed[1]['chars_removed']} characters left out" in text


def test_nothing_left_to_cut_is_refused_before_sending() -> None:
    content = [{"type": "text", "text": "R" * 90_000}]
    with pytest.raises(RequestTooLarge, match="32768 tokens of context, 8192 of them kept for the answer"):
        fit_messages([{"role": "user", "content": content}], RequestLimits(context_tokens=32_768), max_tokens=8_192)
    fitted = fit_messages([{"role": "user", "content": content}], RequestLimits(context_tokens=32_768),
                          max_tokens=8_192, overflow="record")  # the generator's check: sent, and said so
    assert fitted.record["fits"] is False and fitted.record["over_budget_tokens"] > 0


def test_the_rule_is_deterministic() -> None:
    content = [{"type": "text", "text": "x" * 5000, "fit": {"section": "source"}}]
    for index in range(5):
        content += pair_parts(index)
    limits = RequestLimits(images_per_prompt=2, context_tokens=3000)
    first = fit_messages([{"role": "user", "content": content}], limits, max_tokens=500, trim_order=["source"])
    second = fit_messages([{"role": "user", "content": content}], limits, max_tokens=500, trim_order=["source"])
    assert first.messages == second.messages and first.record == second.record


def test_a_section_cut_to_nothing_keeps_its_heading_line() -> None:
    """A bundle section's `## ` heading is the harness's own: cut to fit, the section says what it was."""
    body = "## Source files\n" + "x = 1\n" * 5_000
    messages = [{"role": "user", "content": [
        {"type": "text", "text": "## Task\nkeep me", "fit": {"section": "task"}},
        {"type": "text", "text": body, "fit": {"section": "source", "heading": True}},
    ]}]
    fitted = fit_messages(messages, RequestLimits(context_tokens=250, chars_per_token=1.0), max_tokens=100,
                          trim_order=("source",))
    text = fitted.messages[0]["content"][1]["text"]
    assert text == f"## Source files\n[{len(body) - len('## Source files') - 1} characters left out to fit the model's context]"
    assert fitted.messages[0]["content"][0]["text"] == "## Task\nkeep me"
