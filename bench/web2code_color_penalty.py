"""MT-Web2Code's S_outbox under both colour penalties (runner/suites/web2code/image.py), on the project's pages.

    .venv/bin/python bench/web2code_color_penalty.py [--pages tasks/web2code/pages] [--limit N]

For each page: G is its render; B is G with a 200 x 120 px box blacked out (the defect, so Ω is that box); each
model page M repairs the box perfectly but differs elsewhere by one of
- faint: a 5/255 brighter recolour of the top 31% of the page (ΔE*ab about 1.5-2: below the JND),
- reflow 1px / reflow 0.5px: the page rendered again with its content 1 (0.5) CSS px lower (`html {padding-top}`),
- visible: a 40/255 brighter recolour of the same 31% (a change anyone sees),
- identical: G itself.
Prints S_outbox (eq. 11 times the colour penalty) with the earlier reading (`any_pixel`: every differing pixel)
and the perceptual one (the default: CIE76 ΔE*ab over 2.3, reflow of 1 px tolerated), per page and the mean,
with the seconds each penalty took (measured in this run).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner.browser.launch import BrowserPool  # noqa: E402
from runner.suites.web2code import image  # noqa: E402
from runner.suites.web2code.render import PageSource, render_page, render_settings  # noqa: E402

CASES = ("identical", "faint", "reflow 0.5px", "reflow 1px", "visible")


def _shifted_html(index: Path, px: float) -> str:
    html = index.read_text(encoding="utf-8")
    style = f"<style>html {{ padding-top: {px}px !important; }}</style>"
    return html.replace("</head>", style + "</head>", 1) if "</head>" in html else style + html


async def renders(pages: list[Path]) -> dict[str, dict[str, np.ndarray]]:
    found: dict[str, dict[str, np.ndarray]] = {}
    async with BrowserPool(render_settings()) as pool:
        for page in pages:
            golden = image.load_rgb((await render_page(pool, PageSource.folder(page))).png)
            shifted = {f"reflow {px:g}px": image.load_rgb((await render_page(
                pool, PageSource.from_html(_shifted_html(page / "index.html", px), page))).png) for px in (0.5, 1)}
            found[page.name] = {"golden": golden, **shifted}
    return found


def variants(golden: np.ndarray, shifted: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    rows = int(round(0.31 * golden.shape[0]))

    def brighter(by: int) -> np.ndarray:
        page = golden.copy()
        page[:rows] = np.clip(page[:rows].astype(np.int16) + by, 0, 255).astype(np.uint8)
        return page

    return {"identical": golden.copy(), "faint": brighter(5), **shifted, "visible": brighter(40)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=Path, default=REPO / "tasks" / "web2code" / "pages")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    pages = sorted(p for p in args.pages.iterdir() if (p / "index.html").is_file())[: args.limit]
    rendered = asyncio.run(renders(pages))
    table: dict[str, dict[str, list[float]]] = {case: {"any_pixel": [], "perceptual": []} for case in CASES}
    seconds: list[tuple[float, float]] = []
    print("page                      case           S_out any_pixel  S_out perceptual  (SSIM; penalty old / new)")
    for name, found in rendered.items():
        golden = found["golden"]
        broken = golden.copy()
        broken[200:320, 100:300] = 0  # the defect: Ω is this box
        for case, model in variants(golden, {k: v for k, v in found.items() if k != "golden"}).items():
            model = model.copy()
            if case != "visible" and case != "faint" and not case.startswith("reflow"):
                model[200:320, 100:300] = golden[200:320, 100:300]
            old = image.outbox_score(golden, broken, model)
            new = image.outbox_score(golden, broken, model, perceptual=image.PerceptualColour())
            table[case]["any_pixel"].append(old)
            table[case]["perceptual"].append(new)
            g, b, m = image.pad_to_common(golden, broken, model)
            outside = ~image.diff_footprint(g, b)
            ssim = image.masked_ssim(g, m, outside)
            started = time.perf_counter()
            old_pen = image.color_penalty(g, m, outside)
            middle = time.perf_counter()
            new_pen = image.color_penalty(g, m, outside, perceptual=image.PerceptualColour())
            seconds.append((middle - started, time.perf_counter() - middle))
            print(f"{name:25} {case:14} {old:16.3f} {new:17.3f}  ({ssim:.3f}; {old_pen:.3f} / {new_pen:.3f})")
    print(f"\nmean over {len(rendered)} pages (S_outbox; 1.000 = nothing outside the defect changed):")
    print("case           any_pixel  perceptual")
    for case in CASES:
        print(f"{case:14} {statistics.mean(table[case]['any_pixel']):9.3f} {statistics.mean(table[case]['perceptual']):11.3f}")
    old_s, new_s = [s[0] for s in seconds], [s[1] for s in seconds]
    print(f"\ncolour penalty alone, per page pair: any_pixel median {statistics.median(old_s):.3f} s "
          f"(max {max(old_s):.3f}), perceptual median {statistics.median(new_s):.3f} s (max {max(new_s):.3f}), "
          f"ratio of medians {statistics.median(new_s) / statistics.median(old_s):.0f}x")


if __name__ == "__main__":
    main()
