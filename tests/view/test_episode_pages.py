"""The episode filmstrip in a real Chromium over real runs: one card per turn, left to right, with the
turn's screenshot, pass mark, bucket, dimension scores and prompt; a card opens the turn's detail."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.async_api import Page

from tests.view.conftest import SCREENSHOTS, chromium

pytestmark = [pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox, pytest.mark.slow]

async def _cards(page: Page) -> list[dict[str, str]]:
    return await page.locator("#filmstrip > li").evaluate_all(
        "cards => cards.map(c => ({turn: c.dataset.turn, mark: c.dataset.mark, bucket: c.dataset.bucket,"
        " x: c.getBoundingClientRect().left}))")


async def _decoded(page: Page, selector: str) -> list[int]:
    """naturalWidth of every image the selector finds, each scrolled to (they load lazily) and loaded."""
    for image in await page.locator(selector).all():
        await image.scroll_into_view_if_needed()
    images = page.locator(selector)
    await page.wait_for_function("sel => [...document.querySelectorAll(sel)].every(i => i.complete)", arg=selector)
    return await images.evaluate_all("imgs => imgs.map(i => i.naturalWidth)")


def test_the_mixed_probe_filmstrip_shows_pass_fail_and_build_failed(served: tuple[str, dict[str, str]]) -> None:
    url, ids = served

    async def scenario() -> None:
        async with chromium() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await page.goto(f"{url}/runs/{ids['mixed']}/tasks/viewer-probe")
            cards = await _cards(page)
            assert [(c["turn"], c["mark"], c["bucket"]) for c in cards] == [
                ("1", "pass", "ok"), ("2", "fail", "ok"), ("3", "build failed", "build_failed")]
            assert cards[0]["x"] < cards[1]["x"] < cards[2]["x"]  # left to right
            assert await page.locator("#task-title").inner_text() == "Viewer probe"
            meta = await page.locator("#episode-meta").inner_text()
            assert "suite smoke" in meta and "domain testing" in meta and ids["mixed"] in meta
            # turns 1 and 2 show their screenshot (thumbnailed, lazy, decoded); turn 3 did not build: a placeholder
            assert await _decoded(page, "#filmstrip li[data-turn='1'] img, #filmstrip li[data-turn='2'] img") == [320, 320]
            assert await page.locator("#filmstrip img").first.get_attribute("loading") == "lazy"
            assert "/thumbs/320/" in (await page.locator("#filmstrip img").first.get_attribute("src") or "")
            third = page.locator("#filmstrip li[data-turn='3']")
            assert await third.locator("img").count() == 0 and await third.locator(".no-shot").count() == 1
            assert "Unexpected flag" in await third.locator(".card-error").inner_text()
            second = await page.locator("#filmstrip li[data-turn='2']").inner_text()
            assert "Add a \"Reset\" button" in second and "requirements" in second and "0.00" in second
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(SCREENSHOTS / "episode.png"), full_page=True)
            await page.locator("#filmstrip li[data-turn='2'] a").click()
            await page.wait_for_url(f"{url}/runs/{ids['mixed']}/tasks/viewer-probe/turns/2")
            assert "viewer-probe · turn 2" in await page.locator("h1").inner_text()

    asyncio.run(scenario())


def test_the_oracle_filmstrip_passes_every_turn_and_blocked_turns_show_no_screenshot(
        served: tuple[str, dict[str, str]]) -> None:
    url, ids = served

    async def scenario() -> None:
        async with chromium() as browser:
            page = await browser.new_page()
            await page.goto(f"{url}/runs/{ids['oracle']}/tasks/smoke-counter")
            cards = await _cards(page)
            assert [(c["turn"], c["mark"]) for c in cards] == [("1", "pass"), ("2", "pass"), ("3", "pass")]
            assert await _decoded(page, "#filmstrip img") == [320, 320, 320]
            await page.goto(f"{url}/runs/{ids['null']}/tasks/smoke-counter")
            cards = await _cards(page)
            assert [c["mark"] for c in cards] == ["invalid output", "blocked", "blocked"]
            assert await page.locator("#filmstrip img").count() == 0
            assert await page.locator("#filmstrip .no-shot").count() == 3

    asyncio.run(scenario())


def test_an_unknown_task_is_not_found(served: tuple[str, dict[str, str]]) -> None:
    url, ids = served
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{url}/runs/{ids['mixed']}/tasks/no-such-task")
    assert missing.value.code == 404
