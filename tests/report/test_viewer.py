"""The static evidence viewer in real Chromium, opened from disk (file://) as a user would."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from playwright.async_api import Page, async_playwright

from runner.report.viewer import REPORT_FILE, write_run_report
from tests.report.conftest import XSS_TEXT

pytestmark = [pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox, pytest.mark.slow]

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking"]


async def _open(path: Path, check) -> None:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            problems: list[str] = []
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
            await page.goto(path.resolve().as_uri(), wait_until="load")
            await check(page)
            assert not problems, problems  # no script errors and no CSP violations (they log console errors)
        finally:
            await browser.close()


async def _click_metric(page: Page, name: str) -> None:
    await page.locator("a.metric", has_text=re.compile(rf"^{re.escape(name)}$")).click()
    assert page.url.endswith("#turns")


async def _visible_rows(page: Page) -> list[str]:
    return await page.locator("#turn-table tbody tr:not([hidden])").all_inner_texts()


def test_report_is_written_by_the_run(report_runs: dict[str, Path]) -> None:
    for run in report_runs.values():
        page = (run / REPORT_FILE).read_text()
        assert "Content-Security-Policy" in page and "script-src 'nonce-" in page
        assert (run / "tasks.json").is_file()  # the task library behind the viewer


def test_failing_turn_evidence_from_a_score(report_runs: dict[str, Path], tmp_path: Path) -> None:
    report = report_runs["probe"] / REPORT_FILE

    async def check(page: Page) -> None:
        # The task library lists the task with its domain and turns.
        library = page.locator("#library")
        assert "viewer-probe" in await library.inner_text() and "testing" in await library.inner_text()
        # turn_pass is computed from all turns: clicking it shows every turn.
        await _click_metric(page, "turn_pass")
        assert len(await _visible_rows(page)) == 3
        # The build_failed count links to exactly the build_failed turn ...
        await _click_metric(page, "status_counts.build_failed")
        rows = await _visible_rows(page)
        assert len(rows) == 1 and "build_failed" in rows[0]
        # ... whose row links to its evidence.
        await page.locator("#turn-table tbody tr:not([hidden]) td a").first.click()
        assert page.url.endswith("#ev-viewer-probe-3")
        section = page.locator("#ev-viewer-probe-3")
        await section.scroll_into_view_if_needed()
        assert await section.is_visible() and "target" in (await section.get_attribute("class") or "")
        await section.screenshot(path=str(tmp_path / "build_failed_turn.png"))
        assert (tmp_path / "build_failed_turn.png").stat().st_size > 1000
        text = await section.inner_text()
        assert "build_failed" in await section.locator(".failure-bucket").inner_text()
        assert "artifact did not build" in text  # the judge's reason
        assert "Build failed" in await section.locator("pre.build-log").inner_text()  # the evidence behind it
        # Turn 2: built and loaded, but a requirement failed; the reason and the actor trace are shown.
        await page.goto(report.resolve().as_uri() + "#ev-viewer-probe-2")
        section = page.locator("#ev-viewer-probe-2")
        await section.screenshot(path=str(tmp_path / "failed_requirement_turn.png"))
        failed = section.locator("tr.req-failed")
        assert "text 'Count: 0' is not visible" in await failed.inner_text()
        images = section.locator("img")
        assert await images.count() >= 2  # the screenshot and the actor's step screenshots
        sources = await images.evaluate_all("els => els.map(e => e.getAttribute('src').slice(0, 11))")
        assert set(sources) <= {"data:image/"}
        assert await images.first.evaluate("img => img.complete && img.naturalWidth > 0")
        assert "Reset" in await section.locator("pre.source").first.inner_text()
        # Untrusted model text is shown as text, never run.
        await page.goto(report.resolve().as_uri() + "#ev-viewer-probe-1")
        assistant = await page.locator("#ev-viewer-probe-1 pre.assistant").inner_text()
        assert assistant.strip() == XSS_TEXT
        assert await page.evaluate("() => window.__pwned === undefined")
        assert await page.locator("#ev-viewer-probe-1 b", has_text="bold?").count() == 0

    asyncio.run(_open(report, check))


def test_null_run_shows_blocked_turns_and_their_cause(report_runs: dict[str, Path], tmp_path: Path) -> None:
    async def check(page: Page) -> None:
        await _click_metric(page, "status_counts.blocked")
        rows = await _visible_rows(page)
        assert len(rows) == 2 and all("blocked" in row for row in rows)
        assert "2 of 3 turns" in await page.locator("#filter-note").inner_text()
        await page.locator("#turn-table tbody tr:not([hidden]) td a").first.click()
        section = page.locator("#ev-smoke-counter-2")
        await section.screenshot(path=str(tmp_path / "blocked_turn.png"))
        text = await section.inner_text()
        assert "blocked" in await section.locator(".failure-bucket").inner_text()
        assert "the previous turn left no artifact" in text
        assert "No judge verdict" in text
        await page.locator("#clear-filter").click()
        assert len(await _visible_rows(page)) == 3
        await page.goto(page.url.split("#")[0] + "#ev-smoke-counter-1")
        first = page.locator("#ev-smoke-counter-1")
        assert "invalid_output" in await first.locator(".failure-bucket").inner_text()
        assert "empty response" in await first.inner_text()

    asyncio.run(_open(report_runs["null"] / REPORT_FILE, check))


def test_viewer_written_elsewhere_keeps_working(report_runs: dict[str, Path], tmp_path: Path) -> None:
    """--out elsewhere: images are embedded, so the copy shows them; over the image budget they become
    links relative to the report file that still resolve to the run dir's evidence."""
    out = write_run_report(report_runs["probe"], tmp_path / "copy" / "viewer.html", image_budget=0)

    async def check(page: Page) -> None:
        links = page.locator("#ev-viewer-probe-2 a.imglink")
        assert await links.count() >= 1
        href = await links.first.get_attribute("href")
        assert href and (out.parent / href).resolve().is_file()
        assert await page.locator("img").count() == 0

    asyncio.run(_open(out, check))
