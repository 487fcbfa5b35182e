"""Long pages: evidence capture and MT-Web2Code scoring of one generated 1280 x 4000+ static page.

    .venv/bin/python bench/long_page.py [--height 4000] [--repeats 3] [--profile FILE]

Generates a static page of `--height` px (sections of text, coloured cards and a table, no scripts), then
times, in one run on one warm browser:
- evidence: runner.browser.capture.capture_evidence (viewport + full-page screenshot, DOM, visible text);
- full-page capture on one open page: Playwright's `screenshot(full_page=True)` (the capture before) against
  PageSession.full_page_png (the same pixels, fast PNG encoding), and the decode of each (load_rgb);
- micro scoring of one turn as a run does it: render the model's page (render_page: a fresh context, load,
  full-page PNG; the golden and input renders come from the trajectory cache in a run), decode the three
  PNGs and score_micro (eqs. 9-12, per-defect scores) for a broken page with one recoloured card;
- macro out-of-box: scoring.macro_outbox for a region in the middle of the page.
Prints the median of each stage, the capture ratio, and whether evidence and scoring are within the goal
(3 s each). `--profile FILE` writes a cProfile of the whole run (read with `python -m pstats FILE`).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner.browser.capture import capture_evidence, write_visit_logs  # noqa: E402
from runner.browser.launch import BrowserPool  # noqa: E402
from runner.suites.web2code.image import load_rgb  # noqa: E402
from runner.suites.web2code import scoring  # noqa: E402
from runner.suites.web2code.render import (  # noqa: E402
    PageSource,
    StaticSite,
    open_rendered_page,
    render_page,
    render_settings,
)

GOAL_S = 3.0
SECTION_PX = 400  # each generated section's height


def long_page(height: int, *, broken: bool = False) -> str:
    """A static page about `height` px tall; `broken` recolours one card in the middle section."""
    sections = []
    count = max(1, height // SECTION_PX)
    for i in range(count):
        colour = "#c0392b" if broken and i == count // 2 else f"hsl({(i * 37) % 360}, 60%, 70%)"
        cards = "".join(f'<div class="card" style="background:{colour if j == 1 else "#eef"}">'
                        f"<h3>Card {i}.{j}</h3><p>{'Lorem ipsum dolor sit amet. ' * 6}</p></div>"
                        for j in range(3))
        rows = "".join(f"<tr><td>{i}.{r}</td><td>{r * 7}</td><td>item {r}</td></tr>" for r in range(4))
        sections.append(f'<section id="s{i}"><h2>Section {i}</h2><div class="row">{cards}</div>'
                        f"<table>{rows}</table></section>")
    return ("<!DOCTYPE html><html><head><style>body{margin:0;font:16px sans-serif}"
            f"section{{height:{SECTION_PX - 20}px;padding:10px 40px;overflow:hidden}}"
            ".row{display:flex;gap:20px}.card{flex:1;padding:8px;border-radius:6px}"
            "table{border-collapse:collapse}td{border:1px solid #999;padding:2px 8px}</style></head>"
            f"<body>{''.join(sections)}</body></html>")


async def time_evidence(pool: BrowserPool, root: Path, scratch: Path) -> float:
    with StaticSite(root) as site:
        started = time.perf_counter()
        async with pool.session(site.url("index.html")) as session:
            evidence = await capture_evidence(session, scratch)
            await write_visit_logs(session, scratch, evidence)
        seconds = time.perf_counter() - started
    assert not evidence.load_error, evidence.load_error
    return seconds


async def time_capture(pool: BrowserPool, root: Path, stages: dict[str, list[float]]) -> None:
    """Playwright's full-page screenshot and full_page_png on one open page, each decoded."""
    async with open_rendered_page(pool, PageSource.folder(root)) as session:
        started = time.perf_counter()
        before = await session.page.screenshot(full_page=True, animations="disabled", caret="hide")
        stages["capture: playwright"].append(time.perf_counter() - started)
        started = time.perf_counter()
        after = await session.full_page_png()
        stages["capture: fast PNG"].append(time.perf_counter() - started)
    for name, png in (("decode: playwright", before), ("decode: fast PNG", after)):
        started = time.perf_counter()
        load_rgb(png)
        stages[name].append(time.perf_counter() - started)


async def main(height: int, repeats: int) -> dict[str, list[float]]:
    names = ("evidence", "capture: playwright", "capture: fast PNG", "decode: playwright", "decode: fast PNG",
             "render (model page)", "decode x3 + score_micro", "micro scoring", "macro out-of-box")
    stages: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="long-page-") as tmp:
        scratch = Path(tmp)
        golden_dir, broken_dir = scratch / "golden", scratch / "broken"
        for folder, broken in ((golden_dir, False), (broken_dir, True)):
            folder.mkdir()
            (folder / "index.html").write_text(long_page(height, broken=broken))
        async with BrowserPool(render_settings()) as pool:
            golden = await render_page(pool, PageSource.folder(golden_dir))  # also warms the browser
            broken = await render_page(pool, PageSource.folder(broken_dir))
            middle = (height // SECTION_PX // 2) * SECTION_PX
            box = [0, middle, 1280, SECTION_PX]
            defect = {"op": "recolor", "dimension": "color", "box_before": box, "box_after": box}
            for repeat in range(repeats):
                stages["evidence"].append(await time_evidence(pool, golden_dir, scratch / f"evidence{repeat}"))
                await time_capture(pool, golden_dir, stages)
                started = time.perf_counter()
                model = await render_page(pool, PageSource.folder(golden_dir))  # the oracle's repair
                rendered = time.perf_counter()
                g, b, m = (load_rgb(r.png) for r in (golden, broken, model))
                result = scoring.score_micro(g, b, m, [defect])
                stages["render (model page)"].append(rendered - started)
                stages["decode x3 + score_micro"].append(time.perf_counter() - rendered)
                stages["micro scoring"].append(time.perf_counter() - started)
                assert result["score"] == 1.0, result
                started = time.perf_counter()
                scoring.macro_outbox(g, b, box, box)
                stages["macro out-of-box"].append(time.perf_counter() - started)
            print(f"page: {golden.width} x {golden.height} px, PNG {len(golden.png) / 1e6:.1f} MB")
    return stages


def report(stages: dict[str, list[float]]) -> None:
    medians = {name: statistics.median(values) for name, values in stages.items()}
    for name, value in medians.items():
        print(f"{name:24s} median {value:6.3f} s  (max {max(stages[name]):.3f} s)")
    print(f"capture speed-up (playwright / fast PNG): "
          f"{medians['capture: playwright'] / medians['capture: fast PNG']:.2f}x; decode "
          f"{medians['decode: playwright'] / medians['decode: fast PNG']:.2f}x")
    for name in ("evidence", "micro scoring"):
        print(f"{name}: {'met' if medians[name] <= GOAL_S else 'NOT met'} (goal <= {GOAL_S} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--height", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", type=Path, default=None)
    args = parser.parse_args()
    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    measured = asyncio.run(main(args.height, args.repeats))
    if profiler:
        profiler.disable()
        profiler.dump_stats(str(args.profile))
    report(measured)
