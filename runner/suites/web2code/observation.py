"""The observation of one MT-Web2Code repair turn (seed paper 003, §3.3 and §3.4 "Repair Task Formulation").

A turn shows: the full-page screenshot of the current page with red boxes on the targets; for the macro
track the cropped golden rendering of the missing region (and, for the §5.1 ablation, a caption of it); the
strict instruction; the resource assets (the region's for macro, the page's for micro); and the current
HTML/CSS as file sections (`### index.html` + fenced block), data-fp stripped. Text-only models get the boxes
as page coordinates plus the surrounding anchors instead of images.
"""

from __future__ import annotations

import base64
import io
from typing import Any

from PIL import Image, ImageDraw

PROMPT_VERSION = "web2code-v1"

# §3.3 and §3.4: the paper's instructions, verbatim.
MACRO_INSTRUCTION = ("Do not modify any other content on the page; replicate the target according to the reference "
                     "image at the position marked by the red bounding box.")
MICRO_INSTRUCTION = ("Fix the styling and structural defects for the elements marked by the red bounding boxes. "
                     "Do not modify any other content on the page.")

SYSTEM_PROMPT = """You are a front-end engineer editing an existing static web page made of HTML and CSS files
(no JavaScript, no build step). Images and other media are already on disk at the paths given; do not invent
new asset files. The page must stay offline: no external URLs, fonts or CDNs.

Reply with a short note, then the COMPLETE updated content of every file of the page (at least index.html and
its stylesheets), each as a path heading followed by one fenced code block:

### index.html
```html
<!DOCTYPE html> ...
```

### style.css
```css
...
```

Files you omit are deleted; write every file in full, never a diff."""

RED = (255, 0, 0)


def draw_boxes(png: bytes, boxes: list[list[float] | None], *, width: int = 3) -> bytes:
    """The screenshot with a red rectangle on each box (clamped into the image)."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    draw = ImageDraw.Draw(image)
    w, h = image.size
    for b in boxes:
        if not b:
            continue
        x0 = max(0, min(w - 1, int(b[0]) - width))
        y0 = max(0, min(h - 1, int(b[1]) - width))
        x1 = max(x0 + 1, min(w - 1, int(b[0] + b[2]) + width))
        y1 = max(y0 + 1, min(h - 1, int(b[1] + b[3]) + width))
        draw.rectangle([x0, y0, x1, y1], outline=RED, width=width)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def format_files(files: dict[str, str]) -> str:
    parts = []
    for path in sorted(files, key=lambda p: (p != "index.html", p)):
        language = path.rsplit(".", 1)[-1] if "." in path else ""
        language = "html" if language in ("html", "htm") else language
        parts.append(f"### {path}\n```{language}\n{files[path].rstrip()}\n```")
    return "\n\n".join(parts)


def _fmt_box(b: list[float] | None) -> str:
    if not b:
        return "(not found on the current page)"
    return f"x={b[0]:.0f}, y={b[1]:.0f}, width={b[2]:.0f}, height={b[3]:.0f}"


def describe_targets(track: str, targets: list[dict[str, Any]], boxes: list[list[float] | None]) -> str:
    """Text-only localisation: each box as page coordinates plus the elements around it."""
    lines = ["Coordinates are CSS pixels on the full page (1280 px wide, y measured from the top of the page)."]
    for i, (target, box) in enumerate(zip(targets, boxes), start=1):
        d = target.get("describe_after") or {}
        label = "Missing region" if track == "macro" else f"Target {i}"
        lines.append(f"- {label}: box {_fmt_box(box)}")
        if d.get("target"):
            lines.append(f"  element: {d['target']}")
        if d.get("prev"):
            lines.append(f"  after: {d['prev']}")
        if d.get("next"):
            lines.append(f"  before: {d['next']}")
        if d.get("parent"):
            lines.append(f"  inside: {d['parent']}")
    return "\n".join(lines)


def build_messages(
    *,
    track: str,
    turn: int,
    turns: int,
    screenshot: bytes,
    targets: list[dict[str, Any]],
    boxes: list[list[float] | None],
    files: dict[str, str],
    assets: list[str],
    vision: bool,
    crop_png: bytes | None = None,
    caption: str | None = None,
    region_text: str | None = None,
) -> list[dict[str, Any]]:
    """OpenAI chat messages of one turn. File sections come last and are the only fenced blocks, so a model
    that returns its input (IdentityModel) hands back exactly the current files."""
    instruction = MACRO_INSTRUCTION if track == "macro" else MICRO_INSTRUCTION
    parts: list[dict[str, Any]] = []

    def text(value: str) -> None:
        parts.append({"type": "text", "text": value})

    text(f"## Repair turn {turn} of {turns}")
    if vision:
        text("## Current page\nFull-page screenshot of the current page (1280 px wide). "
             + ("The red box marks where the missing region belongs." if track == "macro"
                else "Each red box marks one defective element."))
        parts.append({"type": "image_url", "image_url": {"url": data_url(draw_boxes(screenshot, boxes))}})
    else:
        text("## Target location\n" + describe_targets(track, targets, boxes))
    if track == "macro":
        if vision and crop_png is not None:
            text("## Target visual reference\nThe golden rendering of the missing region:")
            parts.append({"type": "image_url", "image_url": {"url": data_url(crop_png)}})
        elif region_text:
            text("## Target reference (text)\nThe visible text of the missing region, in reading order:\n" + region_text)
        if caption:
            text("## Caption of the target reference\n" + caption.strip())
    text("## Instruction\n" + instruction)
    asset_lines = "\n".join(f"- {a}" for a in assets) if assets else "- (none)"
    scope = "the missing region" if track == "macro" else "the page"
    text(f"## Resource assets\nMedia files of {scope}, as paths relative to index.html:\n{asset_lines}")
    text("## Current files\n" + format_files(files))
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": parts}]
