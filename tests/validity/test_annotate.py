"""The annotation page (the viewer app's annotation mode) in a real browser: Playwright labels three slots of a
blinded sample with the mouse, the labels file holds them, and a restarted app resumes at the first unlabelled
item. The page never shows the model or the judge's decision. (Keyboard-only labelling, the layout and the
remembered annotator: tests/view/test_modes.py.)"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.async_api import Page, async_playwright, expect

from runner.browser.launch import BrowserSettings
from runner.validity.annotate import Annotation, main
from runner.validity.labels import LabelsError, read_labels
from runner.validity.sampling import read_key, write_sample
from runner.view.annotate_mode import AnnotationMode
from runner.view.app import ViewState, create_app, serve
from runner.view.catalog import Catalog
from tests.validity.handmade import record, write_run

pytestmark = pytest.mark.browser


def serve_annotation(annotation: Annotation, port: int = 0):  # type: ignore[no-untyped-def]
    """The viewer app with only the annotation mode (as `python -m runner.annotate` starts it)."""
    mode = AnnotationMode(annotation)
    return serve(create_app(ViewState(Catalog([]), modes={mode.name: mode})), port=port)


async def _label(page: Page, tasks: dict[str, str], *, passed: bool, mechanism: str | None) -> str:
    item = await page.locator("#item-id").inner_text()
    progress = await page.locator("#progress").inner_text()
    body = await page.locator("body").inner_text()
    assert "model-secret" not in body and "judge-secret" not in body  # blinded
    assert "model-secret" not in await page.content()
    assert await page.locator("#prompt").inner_text() == f"Build the page of {tasks[item]}."
    # the item's screenshots are fetched after its text is shown: wait for them to load, then check they decoded
    await page.wait_for_function("() => { const img = document.querySelector('#screenshots img');"
                                 " return img !== null && img.complete && document.querySelector('#shot').complete; }")
    assert await page.locator("#screenshots img").first.evaluate("img => img.naturalWidth") == 1
    assert await page.locator("#shot").evaluate("img => img.naturalWidth") == 1
    await page.locator("#pass" if passed else "#fail").check()
    await page.locator("#dim-presentation-4 + span").click()
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

    async def start(page: Page, url: str) -> None:
        await page.goto(url + "/annotate")
        await page.locator("#annotator").fill("ann-1")
        await page.locator("#start").click()

    async def scenario() -> list[str]:
        settings = BrowserSettings()
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=settings.executable_path, args=settings.launch_args)
            page = await browser.new_page()
            with serve_annotation(Annotation(sample, labels)) as url:
                await start(page, url)
                await expect(page.locator("#progress")).to_have_text("0 of 3 labelled by ann-1")
                first = await _label(page, tasks, passed=True, mechanism=None)
                second = await _label(page, tasks, passed=False, mechanism="affordance_binding")
                # the image route serves the item's own screenshots only; unknown paths are not found
                for path in (f"annotate/images/{first}/../../key.jsonl", f"annotate/images/{first}/item.json",
                             f"annotate/images/{first}/%2E%2E%2Fkey.jsonl", "key.jsonl", "annotate/key.jsonl"):
                    with pytest.raises(urllib.error.HTTPError) as refused:
                        await asyncio.to_thread(urllib.request.urlopen, f"{url}/{path}")
                    assert refused.value.code == 404
            # a restart: a new app (another port, so this browser has not remembered the id) on the same labels
            with serve_annotation(Annotation(sample, labels)) as url:
                page = await browser.new_page()
                await start(page, url)
                await expect(page.locator("#progress")).to_have_text("2 of 3 labelled by ann-1")
                assert await page.locator("#item-id").inner_text() not in (first, second)
                third = await _label(page, tasks, passed=False, mechanism="information_architecture")
                await expect(page.locator("#done")).to_be_visible()
                await expect(page.locator("#progress")).to_have_text("3 of 3 labelled by ann-1")
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


def test_the_api_refuses_bad_labels_and_the_command_bad_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fastapi.testclient import TestClient

    run = write_run(tmp_path / "run", [record("task-0", True)], packets=True)
    keys = write_sample([run], tmp_path / "sample", per_pair=1, seed=0)
    annotation = Annotation(tmp_path / "sample", tmp_path / "sample" / "labels.jsonl")
    mode = AnnotationMode(annotation)
    client = TestClient(create_app(ViewState(Catalog([]), modes={mode.name: mode})))
    assert client.get("/annotate/api/next").status_code == 400, "no annotator id"
    answer = client.post("/annotate/api/label", json={"item": keys[0].item, "annotator": "a", "passed": False,
                                                      "mechanism": "made_up"})
    assert answer.status_code == 400 and "mechanism: 'made_up' is not one of" in answer.json()["error"]
    assert client.post("/annotate/api/label", content=b"[1]").status_code == 400
    assert client.get("/annotate/api/item/7?annotator=a").status_code == 404
    assert not (tmp_path / "sample" / "labels.jsonl").exists(), "nothing written for a refused label"
    page = client.get("/annotate")
    assert "script-src 'self'" in page.headers["content-security-policy"] and "<style" not in page.text
    (tmp_path / "sample" / "labels.jsonl").write_text("{not json\n")
    with pytest.raises(LabelsError, match="labels.jsonl"):
        Annotation(tmp_path / "sample", tmp_path / "sample" / "labels.jsonl")
    assert main([str(tmp_path / "nothing")]) == 2
    assert "not a sample" in capsys.readouterr().err
