"""The annotation page in a real browser: Playwright labels three slots of a blinded sample, the labels file
holds them, and a restarted page resumes at the first unlabelled item. The page never shows the model or the
judge's decision."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.async_api import Page, async_playwright, expect

from runner.validity.annotate import Annotation, build_page
from runner.browser.launch import BrowserSettings
from runner.validity.labels import read_labels
from runner.validity.sampling import read_key, write_sample
from tests.validity.handmade import record, write_run

pytestmark = pytest.mark.browser


async def _label(page: Page, tasks: dict[str, str], *, passed: bool, mechanism: str | None) -> str:
    item = await page.locator("#item-id").inner_text()
    progress = await page.locator("#progress").inner_text()
    body = await page.locator("body").inner_text()
    assert "model-secret" not in body and "judge-secret" not in body  # blinded
    assert await page.locator("#prompt").inner_text() == f"Build the page of {tasks[item]}."
    # the item's screenshot is fetched after its text is shown: wait for it to load, then check it decoded
    await page.wait_for_function("() => { const img = document.querySelector('#screenshots img');"
                                 " return img !== null && img.complete; }")
    assert await page.locator("#screenshots img").first.evaluate("img => img.naturalWidth") == 1
    await page.locator("#pass" if passed else "#fail").check()
    await page.locator("#dim-presentation").select_option("4")
    if mechanism:
        await page.locator("#mechanism").select_option(mechanism)
    await page.locator("#save").click()
    await expect(page.locator("#progress")).not_to_have_text(progress)  # saved: the next item (or the end)
    return item


def test_three_slots_labelled_in_a_browser_and_resumed_after_a_restart(tmp_path: Path) -> None:
    records = [record(f"task-{n}", n % 2 == 0, model="model-secret", judge="judge-secret") for n in range(3)]
    run = write_run(tmp_path / "run", records, packets=True)
    sample = tmp_path / "sample"
    keys = write_sample([run], sample, per_pair=3, seed=7)
    assert len(keys) == 3 and sorted(k.task_id for k in keys) == ["task-0", "task-1", "task-2"]
    tasks = {k.item: k.task_id for k in keys}
    shown = "".join(path.read_text() for path in (sample / "items").rglob("item.json"))
    assert "model-secret" not in shown and "judge-secret" not in shown and "passed" not in shown
    labels = sample / "labels.jsonl"

    async def scenario() -> list[str]:
        settings = BrowserSettings()
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=settings.executable_path, args=settings.launch_args)
            page = await browser.new_page()
            server = build_page(Annotation(sample, labels))
            url = server.start()
            try:
                await page.goto(url)
                await page.locator("#annotator").fill("ann-1")
                await page.locator("#start").click()
                await expect(page.locator("#progress")).to_have_text("0 of 3 labelled by ann-1")
                first = await _label(page, tasks, passed=True, mechanism=None)
                second = await _label(page, tasks, passed=False, mechanism="affordance_binding")
                # the image route serves the item's own screenshots only; unknown paths are not found
                for path in (f"images/{first}/../../key.jsonl", f"images/{first}/item.json", "key.jsonl"):
                    with pytest.raises(urllib.error.HTTPError) as refused:
                        await asyncio.to_thread(urllib.request.urlopen, url + path)
                    assert refused.value.code == 404
            finally:
                server.close()
            server = build_page(Annotation(sample, labels))  # a restart: a new server on the same labels file
            url = server.start()
            try:
                await page.goto(url)
                await page.locator("#annotator").fill("ann-1")
                await page.locator("#start").click()
                await expect(page.locator("#progress")).to_have_text("2 of 3 labelled by ann-1")
                assert await page.locator("#item-id").inner_text() not in (first, second)
                third = await _label(page, tasks, passed=False, mechanism="information_architecture")
                await expect(page.locator("#done")).to_be_visible()
                await expect(page.locator("#progress")).to_have_text("3 of 3 labelled by ann-1")
            finally:
                server.close()
            await browser.close()
        return [first, second, third]

    order = asyncio.run(scenario())
    assert order == json.loads((sample / "sample.json").read_text())["items"]
    saved = read_labels(labels)
    key = read_key(sample)
    assert [label.item for label in saved] == order
    assert [(label.passed, label.mechanism, label.dimensions) for label in saved] == [
        (True, None, {"presentation": 4.0}), (False, "affordance_binding", {"presentation": 4.0}),
        (False, "information_architecture", {"presentation": 4.0})]
    assert all((label.task_id, label.turn) == (key[label.item].task_id, key[label.item].turn) for label in saved)
    assert {label.annotator for label in saved} == {"ann-1"}
