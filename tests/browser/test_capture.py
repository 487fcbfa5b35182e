"""capture_evidence: files written, blank detection, load errors, deterministic screenshots."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
from PIL import Image

from runner.browser.capture import capture_evidence, capture_final_state, write_visit_logs
from runner.browser.launch import BrowserPool
from runner.turns.evidence import Evidence

pytestmark = pytest.mark.browser

RICH_PAGE = """<!doctype html><html><head><style>
  body { font-family: sans-serif; margin: 0; background: linear-gradient(90deg, #fff, #cde); }
  h1 { font-family: serif; font-size: 40px; } .spin { animation: spin 1s linear infinite; display: inline-block; }
  @keyframes spin { to { transform: rotate(360deg); } }
  .tall { height: 1500px; border: 1px solid #999; }
</style></head><body>
  <h1>Evidence page &mdash; <span class=spin>&#9881;</span></h1>
  <p>Small text, <em>italic</em>, <b>bold</b> and a long line to check glyph placement 0123456789.</p>
  <input id=field value="typed value" autofocus> <button>Press</button>
  <svg width=60 height=60><circle cx=30 cy=30 r=25 fill=teal /></svg>
  <div class=tall>tall block</div>
  <img src="http://example.invalid/tracker.png">
  <script>console.log("loaded"); document.getElementById('field').focus();</script>
</body></html>"""


def _capture(settings, url: str, out_dir: Path):
    async def main():
        async with BrowserPool(settings) as pool:
            async with pool.session(url) as session:
                started = time.monotonic()
                evidence = await capture_evidence(session, out_dir)
                elapsed = time.monotonic() - started
                await write_visit_logs(session, out_dir, evidence)
                return evidence, elapsed

    return asyncio.run(main())


def test_capture_writes_all_files_with_relative_paths(site, browser_settings, tmp_path) -> None:
    url = site.add("/", RICH_PAGE)
    evidence, elapsed = _capture(browser_settings, url, tmp_path)
    print(f"session goto + evidence: {elapsed:.2f} s")

    assert evidence.load_error == "" and not evidence.blank
    assert evidence.screenshot_full == "screenshot_full.png" and evidence.screenshot_viewport == "screenshot.png"
    assert evidence.dom_path == "dom.html"
    with Image.open(tmp_path / "screenshot.png") as shot:
        assert shot.size == (1280, 800)
    with Image.open(tmp_path / "screenshot_full.png") as full:
        assert full.size[0] == 1280 and full.size[1] > 1500  # the whole page, not just the viewport
    assert "tall block" in (tmp_path / "dom.html").read_text()
    assert "Evidence page" in evidence.visible_text
    console = json.loads((tmp_path / "console.json").read_text())
    assert any(c["text"] == "loaded" for c in console)
    network = json.loads((tmp_path / "network.json").read_text())
    assert any(n["url"] == "http://example.invalid/tracker.png" and n["blocked"] for n in network)
    assert json.loads((tmp_path / "page_errors.json").read_text()) == []
    assert evidence.load_s > 0
    json.dumps(evidence.to_json())  # serialisable as is


BLANK_CASES = [
    ("<div></div><div style='height:300px'></div>", True),
    # the usual broken React app: the script throws before rendering anything
    ("<div id=root></div><script>undefinedFunction()</script>", True),
    ("<p style='visibility:hidden'>hidden</p><img style='display:none' src='/x.png'>", True),
    ("<canvas width=100 height=100></canvas>", False),
    ("<svg width=10 height=10></svg>", False),
    ("<input placeholder=''>", False),
    ("<p>words</p>", False),
]


def test_blank_page_detection(site, browser_settings, tmp_path) -> None:
    urls = [site.add(f"/{i}", f"<!doctype html><html><body>{body}</body></html>") for i, (body, _) in enumerate(BLANK_CASES)]

    async def main():
        results = []
        async with BrowserPool(browser_settings) as pool:  # one browser, a fresh context per case
            for i, url in enumerate(urls):
                async with pool.session(url) as session:
                    results.append(await capture_evidence(session, tmp_path / str(i)))
        return results

    results = asyncio.run(main())
    for (body, blank), evidence in zip(BLANK_CASES, results):
        assert evidence.blank is blank, body
        assert evidence.load_error == ""
    assert any("undefinedFunction" in e for e in results[1].page_errors)


def test_unreachable_artifact_sets_load_error_without_raising(browser_settings, tmp_path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    evidence, _ = _capture(browser_settings, f"http://127.0.0.1:{port}/", tmp_path)
    assert evidence.load_error.startswith("navigation failed")
    assert "ERR_CONNECTION_REFUSED" in evidence.load_error
    assert evidence.screenshot_full == ""
    assert (tmp_path / "network.json").exists() and (tmp_path / "console.json").exists()


def test_http_error_status_is_a_load_error(site, browser_settings, tmp_path) -> None:
    url = site.add("/broken", "<p>server exploded</p>", status=500)
    evidence, _ = _capture(browser_settings, url, tmp_path / "body")
    assert evidence.load_error.startswith("HTTP 500")
    assert evidence.screenshot_viewport == "screenshot.png" and "exploded" in evidence.visible_text
    evidence, _ = _capture(browser_settings, site.url("/does-not-exist"), tmp_path / "empty")
    # An empty 4xx/5xx body: the headless shell loads it (the full browser refuses it outright with
    # ERR_HTTP_RESPONSE_CODE_FAILURE, "navigation failed"); a load error either way
    assert evidence.load_error.startswith("HTTP 404 for ")


def test_screenshots_are_deterministic_across_browser_launches(site, browser_settings, tmp_path) -> None:
    url = site.add("/", RICH_PAGE)
    first, _ = _capture(browser_settings, url, tmp_path / "a")
    second, _ = _capture(browser_settings, url, tmp_path / "b")
    for name in (first.screenshot_viewport, first.screenshot_full):
        with Image.open(tmp_path / "a" / name) as a, Image.open(tmp_path / "b" / name) as b:
            assert a.size == b.size
            assert np.array_equal(np.asarray(a), np.asarray(b)), f"{name} differs between runs"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_page_that_hangs_after_load_is_bounded(site, browser_settings, tmp_path) -> None:
    url = site.add("/", "<p>about to hang</p><script>addEventListener('load', () => setTimeout(() => { while (true) {} }, 50))</script>")
    settings = browser_settings.model_copy(update={"nav_timeout_ms": 3000, "settle_ms": 300})

    async def main():
        async with BrowserPool(settings) as pool:
            async with pool.session(url) as session:
                evidence = await capture_evidence(session, tmp_path, capture_timeout_s=3)
            async with pool.session(site.add("/ok", "<p>fine</p>")) as session:
                await session.goto()
                return evidence, await session.visible_text()

    started = time.monotonic()
    evidence, next_text = asyncio.run(main())
    assert time.monotonic() - started < 40
    assert any(w in evidence.load_error for w in ("did not answer", "timed out", "Timeout")), evidence.load_error
    assert next_text == "fine"


GROWING_PAGE = """<!doctype html><html><body style="margin:0"><p id=out>Clicks: 0</p>
<button id=grow onclick="
  document.getElementById('out').textContent = 'Clicks: 1';
  const block = document.createElement('div'); block.style.height = '2000px'; block.textContent = 'grown block';
  document.body.appendChild(block);">Grow</button></body></html>"""


def test_final_capture_keeps_the_load_time_files_and_adds_the_page_after_the_actor(site, browser_settings, tmp_path):
    """EvoGenUI-Bench §4.2/§5.2: the final DOM and a refreshed full-page screenshot, taken after the actor,
    beside the load-time capture (which stays as it was)."""

    url = site.add("/", GROWING_PAGE)

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                evidence = await capture_evidence(session, tmp_path)
                loaded_png = (tmp_path / "screenshot_full.png").read_bytes()
                await session.page.click("#grow")  # what an actor does
                await capture_final_state(session, tmp_path, evidence)
                return evidence, loaded_png

    evidence, loaded_png = asyncio.run(main())
    assert evidence.final_error == ""
    assert "Clicks: 0" in (tmp_path / "dom.html").read_text() and ">grown block</div>" not in (tmp_path / "dom.html").read_text()
    assert ">grown block</div>" in (tmp_path / evidence.final_dom_path).read_text()
    assert "Clicks: 1" in (tmp_path / evidence.final_dom_path).read_text()
    assert "grown block" in evidence.final_visible_text and "Clicks: 0" in evidence.visible_text
    assert (tmp_path / "screenshot_full.png").read_bytes() == loaded_png  # the load-time shot is kept
    with Image.open(tmp_path / evidence.final_screenshot_full) as full:
        assert full.size[1] > 2000  # the whole grown page, not the viewport
    with Image.open(tmp_path / evidence.final_screenshot_viewport) as view:
        assert view.size == (1280, 800)
    saved = json.loads((tmp_path / "evidence.json").read_text())
    assert saved["final_dom_path"] == "final_dom.html" and saved["dom_path"] == "dom.html"


def test_a_page_in_view_gets_the_pixels_a_full_page_shot_would_have(site, browser_settings, tmp_path):
    """The full-page shot of a page that fits the viewport is the viewport capture (taken once): it must be the
    same pixels as Playwright's own full-page screenshot, at load and after the actor."""

    url = site.add("/", "<!doctype html><body style='margin:0;background:#fed'><h1>Short</h1><button>b</button></body>")

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                evidence = await capture_evidence(session, tmp_path)
                await capture_final_state(session, tmp_path, evidence)
                await session.screenshot(tmp_path / "playwright_full.png", full_page=True)
                return evidence

    evidence = asyncio.run(main())
    with Image.open(tmp_path / "playwright_full.png") as reference:
        expected = np.asarray(reference.convert("RGB"))
    for name in (evidence.screenshot_full, evidence.final_screenshot_full):
        with Image.open(tmp_path / name) as shot:
            assert np.array_equal(np.asarray(shot.convert("RGB")), expected), name


POPUP_PAGE = """<!doctype html><html><body><p>Popups</p>
<script>window.open('about:blank');</script>
<button id=more onclick="window.open('about:blank'); console.log('clicked'); alert('saved');">More</button>
</body></html>"""


def test_visit_logs_hold_the_whole_visit(site, browser_settings, tmp_path):
    """The load opens one popup, the actor's click another and an alert: dialogs.json, written once the visit
    is over, lists all of them, and evidence.json agrees; console.json holds what the click logged."""
    url = site.add("/", POPUP_PAGE)

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                evidence = await capture_evidence(session, tmp_path)
                assert not (tmp_path / "dialogs.json").exists()  # the visit is not over yet
                assert not (tmp_path / "network.json").exists()
                await session.page.click("#more")  # what an actor does
                for _ in range(100):  # the popup's and the dialog's events arrive on their own
                    if len(session.popups) == 2 and session.dialogs:
                        break
                    await asyncio.sleep(0.05)
                await capture_final_state(session, tmp_path, evidence)
                await write_visit_logs(session, tmp_path, evidence)
                return evidence

    evidence = asyncio.run(main())
    written = json.loads((tmp_path / "dialogs.json").read_text())
    assert len(written["popups"]) == 2
    assert written["dialogs"] == [{"type": "alert", "message": "saved"}]
    saved = json.loads((tmp_path / "evidence.json").read_text())
    assert saved["popups"] == written["popups"] and saved["dialogs"] == written["dialogs"]
    assert evidence.popups == written["popups"]
    console = json.loads((tmp_path / "console.json").read_text())
    assert any(c["text"] == "clicked" for c in console), console


def test_visit_logs_wait_for_a_popup_whose_page_arrives_late(site, browser_settings, tmp_path, monkeypatch):
    """A window the page opened is announced before its page's own event, which a loaded machine can deliver
    after the visit's last step: the logs wait for it (bounded), so dialogs.json holds both popups. The late
    delivery is injected (each new page's handler starts 0.4 s late)."""
    from runner.browser.session import PageSession

    on_new_page = PageSession._on_new_page

    async def late(self, page):
        await asyncio.sleep(0.4)
        await on_new_page(self, page)

    monkeypatch.setattr(PageSession, "_on_new_page", late)
    url = site.add("/", "<!doctype html><body><p>two windows</p>"
                        "<script>window.open('about:blank'); window.open('about:blank');</script></body>")

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                evidence = await capture_evidence(session, tmp_path)
                assert len(session.popups) < 2  # not yet: the injected delay holds them back
                await write_visit_logs(session, tmp_path, evidence)

    asyncio.run(main())
    assert len(json.loads((tmp_path / "dialogs.json").read_text())["popups"]) == 2


SLOW_BACKEND_PAGE = """<!doctype html><html><body><p>Loading</p>
<script>setTimeout(() => { fetch('/slow'); fetch('/never'); }, 0);</script></body></html>"""


def test_network_log_waits_briefly_for_answers_on_their_way(site, browser_settings, tmp_path):
    """A request the page made just before the visit ended is written with its status once it arrives; one
    that never answers is written without a status after the bounded wait, not waited for."""
    site.add("/slow", "{}", content_type="application/json", delay_s=0.4)
    site.add("/never", "{}", content_type="application/json", delay_s=20)
    url = site.add("/", SLOW_BACKEND_PAGE)

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                evidence = await capture_evidence(session, tmp_path)
                started = time.monotonic()
                await write_visit_logs(session, tmp_path, evidence, answers_wait_s=1.5)
                return time.monotonic() - started

    waited = asyncio.run(main())
    statuses = {urlsplit(e["url"]).path: e["status"] for e in json.loads((tmp_path / "network.json").read_text())}
    assert statuses["/slow"] == 200 and statuses["/never"] is None, statuses
    assert 1.0 < waited < 3.0


def test_a_very_tall_page_is_shot_to_the_capture_height_and_its_dom_kept(site, browser_settings, tmp_path) -> None:
    from runner.browser.session import MAX_FULL_PAGE_HEIGHT

    url = site.add("/", "<!doctype html><body style='margin:0'><p>tall one</p>"
                        "<div style='height:400000px;background:linear-gradient(red,blue)'></div></body>")
    evidence, _ = _capture(browser_settings, url, tmp_path)
    assert evidence.load_error == "", evidence.load_error
    assert evidence.dom_path == "dom.html" and "tall one" in (tmp_path / "dom.html").read_text()
    with Image.open(tmp_path / "screenshot_full.png") as full:
        assert full.size == (1280, MAX_FULL_PAGE_HEIGHT)
    assert "400" in evidence.screenshot_full_clipped and str(MAX_FULL_PAGE_HEIGHT) in evidence.screenshot_full_clipped


def test_downloads_and_unload_traps_are_recorded(site, browser_settings, tmp_path) -> None:
    url = site.add("/", "<!doctype html><p>ready</p><script>"
                        "window.addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = 'x'; });"
                        "window.onbeforeunload = () => 'stay';"
                        "const a = document.createElement('a'); a.href = URL.createObjectURL(new Blob(['abc']));"
                        "a.download = 'payload.bin'; document.body.append(a); a.click();</script>")
    evidence, _ = _capture(browser_settings, url, tmp_path)
    assert evidence.load_error == ""
    dialogs = json.loads((tmp_path / "dialogs.json").read_text())
    assert [d["suggested_filename"] for d in dialogs["downloads"]] == ["payload.bin"], dialogs
    assert sorted(dialogs["unload_traps"]) == ["addEventListener", "onbeforeunload"], dialogs
    assert not list(tmp_path.glob("**/payload.bin"))


@pytest.mark.parametrize("leave", [
    "location.replace('http://127.0.0.1:9/replaced')",
    "const f = document.createElement('form'); f.method = 'post'; f.action = 'http://127.0.0.1:9/posted';"
    " document.body.append(f); f.submit();",
], ids=["location-replace", "form-post"])
def test_a_page_that_tries_to_leave_is_a_runtime_failure_and_the_attempt_is_logged(site, browser_settings,
                                                                                 tmp_path, leave) -> None:
    url = site.add("/", "<!doctype html><meta http-equiv='Content-Security-Policy' content=\"form-action 'self'\">"
                        f"<p>leaving</p><script>setTimeout(() => {{ {leave} }}, 50);</script>")
    evidence, _ = _capture(browser_settings, url, tmp_path)
    assert evidence.load_error.startswith("the page navigated away from the artifact (to http://127.0.0.1:9/"), \
        evidence.load_error
    network = json.loads((tmp_path / "network.json").read_text())
    assert any(n["url"].startswith("http://127.0.0.1:9/") and n["blocked"] for n in network), network


def test_without_page_files_the_text_and_blankness_are_read_and_nothing_is_written(site, browser_settings,
                                                                                 tmp_path) -> None:
    """page_files=False (lean evidence): no screenshot and no DOM file, the same visible text and blankness."""
    shown = site.add("/", "<!doctype html><h1>Total: 3</h1>")
    blank = site.add("/blank", "<!doctype html><body></body>")

    async def capture(url: str, folder: Path, page_files: bool) -> Evidence:
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                return await capture_evidence(session, folder, page_files=page_files)

    for name, url in (("shown", shown), ("blank", blank)):
        full = asyncio.run(capture(url, tmp_path / name / "full", True))
        lean = asyncio.run(capture(url, tmp_path / name / "lean", False))
        assert (lean.visible_text, lean.blank, lean.load_error) == (full.visible_text, full.blank, full.load_error)
        assert (lean.screenshot_viewport, lean.screenshot_full, lean.dom_path) == ("", "", "")
        assert list((tmp_path / name / "lean").iterdir()) == []
    assert full.blank and not lean.visible_text.strip()
