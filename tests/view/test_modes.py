"""The viewer's working modes in a real Chromium at 1280 x 800, driven by the keyboard only (no clicks):

- annotation (runner/view/annotate_mode.py): pass/fail, dimension scores, a mechanism and a note are written to
  the labels file; j/k move between items and show the annotator's own saved label; a restarted app (same
  port, so the browser remembers the annotator) resumes at the first unlabelled item; the evidence and the
  decision panel fit the window; the page never names the model or the judge.
- arena (runner/suites/floweval/arena/view_mode.py): a / b / t votes are written, s skips to the back of the
  queue without writing, a restarted app resumes at the first undecided pair; no model name anywhere.
- both show a sample's or a prompt's markup as text.

Each writes its page's screenshot to SCREENSHOTS (docs/img/viewer/annotate.png, arena.png).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from runner.suites.floweval.arena.queue import Arena, build_pairs
from runner.suites.floweval.arena.server import SiteServers
from runner.suites.floweval.arena.sites import collect_sites
from runner.suites.floweval.arena.view_mode import ArenaMode
from runner.suites.floweval.pair_labels import read_labels as read_votes
from runner.validity.annotate import Annotation
from runner.validity.labels import read_labels
from runner.validity.sampling import write_sample
from runner.view.annotate_mode import AnnotationMode
from runner.view.app import ViewMode, ViewState, create_app, serve
from runner.view.catalog import Catalog
from tests.suites.floweval.test_arena import PROMPTS, _run_dir
from tests.validity.handmade import record, write_run
from tests.view.conftest import SCREENSHOTS, chromium

pytestmark = pytest.mark.browser

WINDOW = {"width": 1280, "height": 800}
SECRETS = ("model-secret", "judge-secret")
# What a screenshot in the sample looks like (the handmade packets' images are 1 x 1 pixels).
SHOT_PAGE = """<html><body style="margin:0;font:16px sans-serif;background:#f5f7fb">
<header style="background:#2d4a7a;color:#fff;padding:14px 20px;font-size:20px">Counter</header>
<main style="padding:30px 20px"><p style="font-size:28px">Count: {count}</p>
<button style="font-size:18px;padding:8px 18px">Increment</button></main></body></html>"""
# A generated site of the arena, in one of two looks; it names no model, so the screenshot shows what a rater sees.
SITE_PAGE = """<!doctype html><html><body style="margin:0;font:15px sans-serif;background:{bg}">
<header style="background:{accent};color:#fff;padding:16px 22px;font-size:22px" id="title">{name}</header>
<main style="padding:22px"><p>{description}</p><input placeholder="Search" style="padding:8px;width:60%">
<button style="padding:8px 14px;background:{accent};color:#fff;border:0">Go</button>
<ul><li>First result</li><li>Second result</li><li>Third result</li></ul></main></body></html>"""
LOOKS = {"m-one": ("#ffffff", "#0f766e"), "m-two": ("#fdf6ec", "#9a3412")}


def _app(mode: ViewMode) -> object:
    return create_app(ViewState(Catalog([]), modes={mode.name: mode}))


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


async def _blinded(page: Page, secrets: tuple[str, ...]) -> None:
    text, source = await page.locator("body").inner_text(), await page.content()
    for secret in secrets:
        assert secret not in text and secret not in source, f"the page names {secret!r}"


async def _real_screenshots(sample: Path) -> None:
    """Replace every sample screenshot by a rendered page, for a screenshot of the annotation page worth looking at."""
    async with chromium() as browser:
        page = await browser.new_page(viewport={"width": 1024, "height": 640})
        for n, item in enumerate(sorted((sample / "items").iterdir())):
            await page.set_content(SHOT_PAGE.format(count=n))
            for path in item.glob("*.png"):
                await page.screenshot(path=str(path))


def test_annotation_by_keyboard_only_is_written_and_resumed(tmp_path: Path) -> None:
    records = [record(f"task-{n}", n % 2 == 0, model="model-secret", judge="judge-secret") for n in range(3)]
    run = write_run(tmp_path / "run", records, packets=True)
    sample = tmp_path / "sample"
    keys = write_sample([run], sample, per_pair=3, seed=7)
    asyncio.run(_real_screenshots(sample))
    items = json.loads((sample / "sample.json").read_text())["items"]
    assert sorted(items) == sorted(key.item for key in keys)
    labels = sample / "labels.jsonl"

    async def expect_item(page: Page, index: int, progress: str) -> None:
        await expect(page.locator("#progress")).to_have_text(progress)
        await expect(page.locator("#item-id")).to_have_text(items[index])
        await _blinded(page, SECRETS)

    async def scenario() -> None:
        async with chromium() as browser:
            context = await browser.new_context(viewport=WINDOW)
            page = await context.new_page()
            mode = AnnotationMode(Annotation(sample, labels))
            with serve(_app(mode)) as url:
                port = _port(url)
                await page.goto(f"{url}/annotate")
                await page.keyboard.type("ann-1")  # the id field has the focus on a first visit
                await page.keyboard.press("Enter")
                await expect_item(page, 0, "0 of 3 labelled by ann-1")
                await page.keyboard.press("?")
                await expect(page.locator("#help")).to_be_visible()
                await page.keyboard.press("Escape")
                await expect(page.locator("#help")).to_be_hidden()
                # leave item 0 for now: j moves on without labelling
                await page.keyboard.press("j")
                await expect_item(page, 1, "0 of 3 labelled by ann-1")
                # item 1: fail, presentation 3, a mechanism from the list (m, arrows, Esc) and a note (n, Enter saves)
                for key in ("f", "3", "m", "ArrowDown", "ArrowDown", "ArrowDown", "ArrowDown", "Escape", "n"):
                    await page.keyboard.press(key)
                await expect(page.locator("#mechanism")).to_have_value("affordance_binding")
                await page.keyboard.type("keys only")
                await page.keyboard.press("Enter")
                await expect_item(page, 2, "1 of 3 labelled by ann-1")  # the next unlabelled item after the saved one
                await page.keyboard.press("k")  # item 1 shows the label just saved
                await expect_item(page, 1, "1 of 3 labelled by ann-1")
                await expect(page.locator("#fail")).to_be_checked()
                await expect(page.locator("#mechanism")).to_have_value("affordance_binding")
                await expect(page.locator("#labelled")).to_be_visible()
                await page.keyboard.press("ArrowLeft")
                await expect_item(page, 0, "1 of 3 labelled by ann-1")
                await expect(page.locator("#labelled")).to_be_hidden()
                # item 0: pass, presentation 4, execution 5 (1-5 score the highlighted dimension, then the next)
                for key in "p45":
                    await page.keyboard.press(key)
                await expect(page.locator("#pass")).to_be_checked()
                await expect(page.locator("#dim-execution-5")).to_be_checked()
                await page.wait_for_function("() => document.querySelector('#shot').complete"
                                             " && document.querySelector('#shot').naturalWidth > 100")
                # One screen: the screenshot, the request, the criteria and the whole decision panel are in view.
                assert await page.evaluate("document.scrollingElement.scrollHeight") <= WINDOW["height"]
                for selector in ("#shot", "#prompt", "#criteria", "#pass", "#mechanism", "#note", "#save"):
                    box = await page.locator(selector).bounding_box()
                    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= WINDOW["height"], selector
                assert (await page.locator("#shot").bounding_box())["height"] >= 400, "the screenshot is large"
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=str(SCREENSHOTS / "annotate.png"))
                await page.keyboard.press("Enter")
                await expect_item(page, 2, "2 of 3 labelled by ann-1")
            assert [label.item for label in read_labels(labels)] == [items[1], items[0]]

            # A restart on the same port: this browser remembers the annotator, and the page resumes at the first
            # unlabelled item, the last one.
            page = await context.new_page()
            with serve(_app(AnnotationMode(Annotation(sample, labels))), port=port) as url:
                await page.goto(f"{url}/annotate")
                await expect_item(page, 2, "2 of 3 labelled by ann-1")
                await expect(page.locator("#who")).to_have_text("ann-1")
                await page.keyboard.press("j")  # round to item 0: the annotator's own label is shown
                await expect_item(page, 0, "2 of 3 labelled by ann-1")
                await expect(page.locator("#pass")).to_be_checked()
                await expect(page.locator("#dim-presentation-4")).to_be_checked()
                await page.keyboard.press("k")
                await expect_item(page, 2, "2 of 3 labelled by ann-1")
                await page.keyboard.press("Enter")  # nothing chosen: refused, nothing written
                await expect(page.locator("#message")).to_contain_text("choose pass (p) or fail (f)")
                await page.keyboard.press("p")
                await page.keyboard.press("Enter")
                await expect(page.locator("#done")).to_be_visible()
                await expect(page.locator("#progress")).to_have_text("3 of 3 labelled by ann-1")

    asyncio.run(scenario())
    saved = read_labels(labels)
    assert [(label.item, label.passed, label.dimensions, label.mechanism, label.note) for label in saved] == [
        (items[1], False, {"presentation": 3.0}, "affordance_binding", "keys only"),
        (items[0], True, {"presentation": 4.0, "execution": 5.0}, None, ""),
        (items[2], True, {}, None, "")]
    assert {label.annotator for label in saved} == {"ann-1"}


def test_arena_votes_by_keyboard_only_are_written_and_resumed(tmp_path: Path) -> None:
    run_dirs = [_run_dir(tmp_path, "m-one"), _run_dir(tmp_path, "m-two")]
    sites = collect_sites(run_dirs)
    for site in sites:
        background, accent = LOOKS[site.model]
        name, _, description = site.description.partition(": ")
        (site.folder / "index.html").write_text(SITE_PAGE.format(bg=background, accent=accent, name=name,
                                                                 description=description))
    pairs = build_pairs(sites, seed=0)
    labels = tmp_path / "votes.jsonl"

    async def at_pair(page: Page, index: int, decided: int) -> None:
        await expect(page.locator("#progress")).to_have_text(f"{decided} of 3 comparisons decided")
        await expect(page.locator("#description")).to_have_text(PROMPTS[pairs[index].left.task_id])
        await page.wait_for_load_state()  # the page's script is in: its keys work
        await _blinded(page, ("m-one", "m-two", str(tmp_path)))
        for letter, site in (("A", pairs[index].left), ("B", pairs[index].right)):  # the sides as drawn
            frame = page.frame_locator(f"iframe[name=site-{letter}]")
            await expect(frame.locator("#title")).to_have_text(site.description.partition(": ")[0])
            accent = LOOKS[site.model][1]
            rgb = f"rgb({int(accent[1:3], 16)}, {int(accent[3:5], 16)}, {int(accent[5:7], 16)})"
            assert await frame.locator("#title").evaluate("el => getComputedStyle(el).backgroundColor") == rgb

    async def scenario() -> None:
        async with chromium() as browser:
            page = await browser.new_page(viewport=WINDOW)
            mode = ArenaMode(Arena(pairs, labels, "r1"), SiteServers())
            try:
                with serve(_app(mode)) as url:
                    port = _port(url)
                    await page.goto(f"{url}/arena")
                    await at_pair(page, 0, 0)
                    await page.keyboard.press("1")
                    await expect(page.locator("#pane-A")).to_have_class("pane expanded")
                    await page.keyboard.press("1")
                    await expect(page.locator("#pane-A")).to_have_class("pane")
                    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                    await page.screenshot(path=str(SCREENSHOTS / "arena.png"))
                    await page.keyboard.press("a")
                    await at_pair(page, 1, 1)
                    await page.keyboard.press("s")  # skip: pair 1 goes to the back, nothing written
                    await at_pair(page, 2, 1)
                    assert len(read_votes(labels)) == 1
                    await page.keyboard.press("t")
                    await at_pair(page, 1, 2)
            finally:
                mode.close()
            mode = ArenaMode(Arena(pairs, labels, "r1"), SiteServers())
            try:
                with serve(_app(mode), port=port) as url:  # a restart resumes at the undecided pair
                    await page.goto(f"{url}/arena")
                    await at_pair(page, 1, 2)
                    await page.keyboard.press("b")
                    await expect(page.locator("#progress")).to_have_text("3 of 3 comparisons decided")
                    await expect(page.get_by_text("All done")).to_be_visible()
            finally:
                mode.close()

    asyncio.run(scenario())
    votes = read_votes(labels)
    assert [(vote.winner, vote.site_a, vote.site_b) for vote in votes] == [
        (winner, pairs[index].left.site_id, pairs[index].right.site_id)
        for winner, index in (("a", 0), ("tie", 2), ("b", 1))]
    assert {vote.rater for vote in votes} == {"r1"}


def test_apr_attribution_by_keyboard_only(tmp_path: Path) -> None:
    """EvoGenUI-Bench Appendix C.2.1's audit sample opens the same page in its attribution mode: 1-3 choose."""
    from runner.validity.apr_audit import read_audit_labels, write_audit_sample
    from tests.validity.test_apr_audit import _write_run

    run = _write_run(tmp_path / "run", {"t1": "PF", "t2": "PPF"})
    audit = tmp_path / "audit"
    items = write_audit_sample([run], audit, seed=1)["items"]
    labels = audit / "labels.jsonl"

    async def scenario() -> None:
        async with chromium() as browser:
            page = await browser.new_page(viewport=WINDOW)
            with serve(_app(AnnotationMode(Annotation(audit, labels)))) as url:
                await page.goto(f"{url}/annotate")
                await page.keyboard.type("ann-2")
                await page.keyboard.press("Enter")
                await expect(page.locator("#progress")).to_have_text("0 of 2 labelled by ann-2")
                await expect(page.locator("#previous-turn")).to_be_visible()
                for selector in ("#prev-shot", "#shot", "#attr-insufficient_evidence", "#save"):
                    box = await page.locator(selector).bounding_box()
                    assert box is not None and box["y"] + box["height"] <= WINDOW["height"], selector
                await _blinded(page, SECRETS)
                for key, progress in (("1", "1 of 2"), ("3", "2 of 2")):
                    await page.keyboard.press(key)
                    await page.keyboard.press("Enter")
                    await expect(page.locator("#progress")).to_have_text(f"{progress} labelled by ann-2")
                await expect(page.locator("#done")).to_be_visible()

    asyncio.run(scenario())
    assert [(label.item, label.attribution) for label in read_audit_labels(labels)] == [
        (items[0], "prior_regression"), (items[1], "insufficient_evidence")]


def test_untrusted_text_is_shown_as_text_in_both_modes(tmp_path: Path) -> None:
    """A sample's texts and an arena prompt carrying markup are shown as text: no script runs, no element appears."""
    from tests.report.conftest import XSS_TEXT

    run = write_run(tmp_path / "run", [record("task-0", True)], packets=True)
    sample = tmp_path / "sample"
    write_sample([run], sample, per_pair=1, seed=0)
    item_file = next((sample / "items").rglob("item.json"))
    item = json.loads(item_file.read_text())
    item.update(prompt=XSS_TEXT, assistant_text=XSS_TEXT, title=XSS_TEXT,
                criteria=[{"id": "<b>x</b>", "description": XSS_TEXT}])
    item_file.write_text(json.dumps(item))
    run_dirs = [_run_dir(tmp_path, "m-one"), _run_dir(tmp_path, "m-two")]
    for run_dir in run_dirs:
        library = json.loads((run_dir / "tasks.json").read_text())
        for task in library:
            task["turns"][0]["prompt"] = XSS_TEXT
        (run_dir / "tasks.json").write_text(json.dumps(library))
    arena = ArenaMode(Arena(build_pairs(collect_sites(run_dirs)), tmp_path / "votes.jsonl", "r1"), SiteServers())

    async def scenario() -> None:
        async with chromium() as browser:
            page = await browser.new_page(viewport=WINDOW)
            with serve(_app(AnnotationMode(Annotation(sample, sample / "labels.jsonl")))) as url:
                await page.goto(f"{url}/annotate")
                await page.keyboard.type("ann-1")
                await page.keyboard.press("Enter")
                await expect(page.locator("#prompt")).to_have_text(XSS_TEXT)
                await expect(page.locator("#assistant")).to_have_text(XSS_TEXT)
                await expect(page.locator("#criteria li")).to_have_text(f"<b>x</b> {XSS_TEXT}")
                assert await page.evaluate("window.__pwned") is None
                assert await page.locator("#content script, #content b, #content img[src=x]").count() == 0
            try:
                with serve(_app(arena)) as url:
                    await page.goto(f"{url}/arena")
                    await expect(page.locator("#description")).to_have_text(XSS_TEXT)
                    assert await page.evaluate("window.__pwned") is None
                    assert await page.locator("#content script, #content b, #content img[src=x]").count() == 0
            finally:
                arena.close()

    asyncio.run(scenario())
