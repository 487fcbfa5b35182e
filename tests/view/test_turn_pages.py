"""The turn detail in a real Chromium over real runs: both screenshots and the actor's steps decoded, the
source diff against the previous turn, a requirement next to the check it cites, blocked turns saying why,
and a model's HTML shown as text that never runs."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from playwright.async_api import Page

from runner.turns.records import FailureBucket, TurnRecord
from runner.view.catalog import Catalog
from runner.view.turn_evidence import error_line, load_turn, mark
from tests.report.conftest import XSS_TEXT
from tests.view.conftest import SCREENSHOTS, chromium

pytestmark = [pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox, pytest.mark.slow]

async def _decoded(page: Page, selector: str) -> list[int]:
    """naturalWidth of every image the selector finds, each scrolled to (they load lazily) and loaded."""
    for image in await page.locator(selector).all():
        await image.scroll_into_view_if_needed()
    await page.wait_for_function("sel => { const imgs = [...document.querySelectorAll(sel)];"
                                 " return imgs.length > 0 && imgs.every(i => i.complete); }", arg=selector)
    return await page.locator(selector).evaluate_all("imgs => imgs.map(i => i.naturalWidth)")


def test_the_oracle_turn_shows_both_screenshots_and_the_actor_steps(served: tuple[str, dict[str, str]]) -> None:
    url, ids = served
    base = f"{url}/runs/{ids['oracle']}/tasks/smoke-counter/turns"

    async def scenario() -> None:
        async with chromium() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            await page.goto(f"{base}/2")
            assert await page.locator("#turn-mark").inner_text() == "pass"
            assert all(w > 0 for w in await _decoded(page, "#shot-load img"))
            assert all(w > 0 for w in await _decoded(page, "#shot-final img"))
            # each side links to the full screenshot file
            assert (await page.locator("#shot-final a").get_attribute("href") or "").endswith("/final_screenshot.png")
            steps = page.locator("#steps > li")
            assert await steps.count() >= 1
            first = await steps.first.inner_text()
            assert "click" in first and "DOM" in first
            widths = await _decoded(page, "#steps > li img")
            assert len(widths) == 2 * await steps.count() and all(w > 0 for w in widths)  # before and after
            assert "Add a \"Reset\"" in await page.locator("#prompt").inner_text()
            requirements = page.locator("#requirements tr.req")
            assert await requirements.count() >= 1 and await page.locator("#requirements tr.req-failed").count() == 0
            assert await page.locator("#dimensions").count() == 1
            assert await _decoded(page, "#packet-images img")  # what the judge was handed, as thumbnails
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            await page.evaluate("() => window.scrollTo(0, 0)")  # sticky headers where they belong
            await page.screenshot(path=str(SCREENSHOTS / "turn.png"), full_page=True)
            # the arrow keys move between turns; the links say the same
            await page.keyboard.press("ArrowRight")
            await page.wait_for_url(f"{base}/3")
            await page.keyboard.press("ArrowLeft")
            await page.wait_for_url(f"{base}/2")
            await page.locator("#prev-turn").click()
            await page.wait_for_url(f"{base}/1")
            assert await page.locator("#prev-turn").count() == 0 and await page.locator("#next-turn").count() == 1

    asyncio.run(scenario())


def test_the_second_turn_diffs_its_sources_against_the_first(served: tuple[str, dict[str, str]]) -> None:
    url, ids = served

    async def scenario() -> None:
        async with chromium() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            await page.goto(f"{url}/runs/{ids['mixed']}/tasks/viewer-probe/turns/2")
            sources = page.locator("#sources")
            assert "against turn 1" in await sources.locator("h2").inner_text()
            app = sources.locator(".source-file[data-file='src/App.jsx']")
            assert await app.get_attribute("data-status") == "changed"
            added = await app.locator("tr.add td.code").all_inner_texts()
            removed = await app.locator("tr.del td.code").all_inner_texts()
            assert len(added) == 1 and "<button>Reset</button>" in added[0]
            assert len(removed) == 1 and "Reset" not in removed[0]
            # added lines are coloured apart from removed ones
            colours = await page.evaluate("() => ['tr.add td.code', 'tr.del td.code', 'tr.ctx td.code'].map("
                                          "s => getComputedStyle(document.querySelector(s)).backgroundColor)")
            assert len(set(colours)) == 3
            # the full file behind a toggle
            full = app.locator("details.full-file")
            assert not await full.locator("pre").is_visible()
            await full.locator("summary").click()
            assert "export default function App" in await full.locator("pre").inner_text()
            # the failed requirement sits next to the check it cites
            reset = page.locator("#requirements tr[data-requirement='reset']")
            assert "failed" in await reset.inner_text()
            cited = await reset.locator("td.cited").inner_text()
            assert "click button Reset" in cited and "observed" in cited and "Count: 1" in cited
            await sources.scroll_into_view_if_needed()
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            await sources.screenshot(path=str(SCREENSHOTS / "turn-diff.png"))
            # the build failure of turn 3: its log open, its diff against turn 2
            await page.goto(f"{url}/runs/{ids['mixed']}/tasks/viewer-probe/turns/3")
            assert await page.locator("#turn-mark").inner_text() == "build failed"
            assert await page.locator("#build-log").get_attribute("open") is not None
            assert "Build failed" in await page.locator("#build-log pre").inner_text()
            assert "\x1b" not in await page.locator("#turn-error").inner_text()  # terminal colours removed
            assert "after load: none" in await page.locator("#shot-load").inner_text()

    asyncio.run(scenario())


def test_a_models_html_is_shown_as_text_and_never_runs(served: tuple[str, dict[str, str]]) -> None:
    url, ids = served

    async def scenario() -> None:
        async with chromium() as browser:
            page = await browser.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda dialog: dialogs.append(dialog.message))
            # a refused inline style or script, or a file that failed to load, is a console error
            errors: list[str] = []
            page.on("console", lambda message: errors.append(f"{message.text} {message.location.get('url', '')}")
                    if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico") else None)
            failed: list[str] = []
            page.on("response", lambda response: failed.append(response.url) if response.status >= 400 else None)
            for path in ("turns/1", "turns/2", ""):
                await page.goto(f"{url}/runs/{ids['mixed']}/tasks/viewer-probe/{path}".rstrip("/"))
                await page.wait_for_load_state("networkidle")
                assert await page.evaluate("() => window.__pwned") is None
            await page.goto(f"{url}/runs/{ids['mixed']}/tasks/viewer-probe/turns/1")
            await page.wait_for_load_state("networkidle")
            assert await page.evaluate("() => typeof window.__pwned") == "undefined"
            assert await page.locator("#assistant pre.assistant-text").inner_text() == XSS_TEXT
            # nothing of the answer became an element: no script, image or bold text inside the section
            assert await page.locator("#assistant script, #assistant img, #assistant b").count() == 0
            assert await page.locator("#verdict").count() == 1  # the answer's </details> closed nothing
            assert dialogs == []
            assert errors == [] and failed == []
            assert await page.evaluate("() => getComputedStyle(document.querySelector('table.dims') || document.body).display") != ""

    asyncio.run(scenario())


def test_blocked_turns_say_why(served: tuple[str, dict[str, str]]) -> None:
    url, ids = served

    async def scenario() -> None:
        async with chromium() as browser:
            page = await browser.new_page()
            base = f"{url}/runs/{ids['null']}/tasks/smoke-counter/turns"
            await page.goto(f"{base}/1")
            assert await page.locator("#turn-mark").inner_text() == "invalid output"
            assert "empty response" in await page.locator("#turn-error").inner_text()
            for turn in (2, 3):
                await page.goto(f"{base}/{turn}")
                assert await page.locator("#turn-mark").inner_text() == "blocked"
                why = await page.locator("#blocked-why").inner_text()
                assert "previous turn left no artifact" in why and "turn 1 ended invalid_output" in why
                assert "empty response" in why and "model was not called" in why
                assert "No judge verdict" in await page.locator("#no-verdict").inner_text()
                await page.locator("#blocked-why a").click()
                await page.wait_for_url(f"{base}/1")

    asyncio.run(scenario())


# -- reading one turn's evidence (no browser) -------------------------------------------------------


def test_a_playwright_trace_the_tool_log_and_runtime_state_are_shown(view_runs: dict[str, Path], tmp_path: Path) -> None:
    run_dir = shutil.copytree(view_runs["mixed"], tmp_path / "mixed", ignore=shutil.ignore_patterns("workspace"))
    folder = run_dir / "evidence" / "viewer-probe" / "2"
    (folder / "trace.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    # an EvoGenUI-style tool runtime: its calls and states
    (folder / "tool_log.jsonl").write_text('{"tool": "add_todo", "args": {"title": "<b>milk</b>"}}\n')
    (folder / "state_in.json").write_text('{"todos": []}')
    (folder / "state.json").write_text('{"todos": ["milk-state"]}')
    catalog = Catalog.from_paths([run_dir])
    [run] = catalog.runs.values()
    turn = load_turn(run, catalog.record(run.id, "viewer-probe", 2))
    assert turn.playwright_trace == "evidence/viewer-probe/2/trace.zip"
    assert load_turn(run, catalog.record(run.id, "viewer-probe", 1)).playwright_trace == ""
    from fastapi.testclient import TestClient

    from runner.view.app import ViewState, create_app

    page = TestClient(create_app(ViewState(catalog))).get(f"/runs/{run.id}/tasks/viewer-probe/turns/2").text
    assert f"playwright show-trace {run_dir}/evidence/viewer-probe/2/trace.zip" in page
    assert f'href="/files/{run.id}/evidence/viewer-probe/2/trace.zip"' in page
    assert "add_todo" in page and "&lt;b&gt;milk&lt;/b&gt;" in page and "<b>milk" not in page
    assert "runtime state at the turn&#39;s start" in page and "milk-state" in page
    assert "network: 2 request(s), 0 blocked" in page


def test_long_texts_are_capped_with_a_link_to_the_whole_file(view_runs: dict[str, Path], tmp_path: Path) -> None:
    run_dir = shutil.copytree(view_runs["mixed"], tmp_path / "mixed", ignore=shutil.ignore_patterns("workspace"))
    raw = run_dir / "evidence" / "viewer-probe" / "2" / "raw_response.txt"
    raw.write_text("x" * 50_000)
    catalog = Catalog.from_paths([run_dir])
    [run] = catalog.runs.values()
    turn = load_turn(run, catalog.record(run.id, "viewer-probe", 2))
    assert turn.raw_response is not None and len(turn.raw_response.text) == 20_000
    assert turn.raw_response.cut == 30_000 and turn.raw_response.href == "evidence/viewer-probe/2/raw_response.txt"


def test_marks_and_error_lines() -> None:
    record = TurnRecord(task_id="t", suite="s", turn=1, status=FailureBucket.OK, passed=None)
    assert mark(record) == "unassessed"
    assert mark(record.model_copy(update={"passed": True})) == "pass"
    assert mark(record.model_copy(update={"status": FailureBucket.BUILD_FAILED})) == "build failed"
    assert error_line("   ╰── \n \x1b[38;5;240m  │\x1b[0m \n\x1b[31m[vite] \x1b[0mUnexpected token\n") == "[vite] Unexpected token"
    assert error_line("") == ""


def test_a_model_judges_bundle_and_the_images_its_requests_sent_are_shown(view_runs: dict[str, Path], tmp_path: Path) -> None:
    run_dir = shutil.copytree(view_runs["mixed"], tmp_path / "mixed", ignore=shutil.ignore_patterns("workspace"))
    records = [TurnRecord.model_validate_json(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    for record in records:
        if record.turn == 2 and record.verdict is not None:
            record.verdict.raw = {"evidence": {"screenshots": 2, "source_files": ["src/App.jsx"]},
                                  "request": {"images_fitted": [{"images": ["step_00_after.png", "screenshot.png"]}]}}
    (run_dir / "turns.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    catalog = Catalog.from_paths([run_dir])
    [run] = catalog.runs.values()
    turn = load_turn(run, catalog.record(run.id, "viewer-probe", 2))
    assert turn.judge_bundle == {"screenshots": 2, "source_files": ["src/App.jsx"]}
    assert turn.judge_images == ["evidence/viewer-probe/2/screenshot.png", "evidence/viewer-probe/2/step_00_after.png"]
    assert turn.packet_images[:2] == ["evidence/viewer-probe/2/screenshot.png", "evidence/viewer-probe/2/screenshot_full.png"]


def test_an_agents_steps_tool_calls_builds_and_screenshots_are_shown(view_runs: dict[str, Path], tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from runner.turns.evidence_folder import EvidenceFolder
    from runner.view.app import ViewState, create_app

    run_dir = shutil.copytree(view_runs["mixed"], tmp_path / "mixed", ignore=shutil.ignore_patterns("workspace"))
    folder = EvidenceFolder(run_dir / "evidence" / "viewer-probe" / "1")
    folder.write_agent({"kind": "builtin", "stopped_by": "steps", "budget": {"steps": 2, "tokens": 100, "wall_clock_s": 60},
                        "spent": {"steps": 2, "tokens": 90, "seconds": 4.2}, "model_seconds": 1.5, "exit_code": None,
                        "notes": ["changed outside src/, not part of the answer: README.md"]})
    build_log = folder.write_agent_file("step2-1.build.log", "vite: built in 1s").name
    shot = folder.write_agent_file("step2-2.png", b"\x89PNG\r\n\x1a\n").name
    folder.append_agent_step({"step": 1, "assistant": "<script>alert(1)</script>Writing.", "files_changed": {"added": ["src/App.jsx"]},
                              "tool_calls": [{"name": "write_file", "arguments": '{"path": "src/App.jsx"}', "ok": True,
                                              "result": "wrote src/App.jsx"}]})
    folder.append_agent_step({"step": 2, "assistant": "", "tool_calls": [
        {"name": "run_build", "arguments": "{}", "ok": False, "result": "the build failed", "build": {"ok": False, "status": "build_failed"},
         "build_log": build_log},
        {"name": "view_page", "arguments": "{}", "ok": True, "result": "visible text: ready", "screenshot": shot}]})
    catalog = Catalog.from_paths([run_dir])
    [run] = catalog.runs.values()
    turn = load_turn(run, catalog.record(run.id, "viewer-probe", 1))
    assert [len(step.calls) for step in turn.agent_steps] == [1, 2]
    assert turn.agent_steps[1].calls[0].build_log == "evidence/viewer-probe/1/agent_files/step2-1.build.log"
    assert turn.agent_steps[1].calls[1].screenshot == "evidence/viewer-probe/1/agent_files/step2-2.png"
    page = TestClient(create_app(ViewState(catalog))).get(f"/runs/{run.id}/tasks/viewer-probe/turns/1").text
    assert 'id="agent-stopped-by">steps<' in page and "2 step(s)" in page and "spent 2 of 2 steps" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;Writing." in page and "<script>alert(1)" not in page
    assert "build <span class=\"fail\">build_failed</span>" in page
    assert f'href="/files/{run.id}/evidence/viewer-probe/1/agent_files/step2-1.build.log"' in page
    assert f"/files/{run.id}/evidence/viewer-probe/1/agent_files/step2-2.png" in page
    assert "added <code>src/App.jsx</code>" in page and "README.md" in page


def test_failed_model_calls_show_what_the_model_wrote_escaped(view_runs: dict[str, Path], tmp_path: Path) -> None:
    """A judge's truncated verdict, an actor step's malformed action and a tester case's call: each attempt's raw
    text (escaped), finish reason, tokens against the cap and what followed, on the turn page."""
    from runner.turns.evidence_folder import EvidenceFolder

    run_dir = shutil.copytree(view_runs["mixed"], tmp_path / "mixed", ignore=shutil.ignore_patterns("workspace"))
    folder = EvidenceFolder(run_dir / "evidence" / "viewer-probe" / "2")
    loop = '{"reason"' + "\t" * 300
    cut = {"finish_reason": "length", "in": "answer", "completion_tokens": 301, "reasoning_tokens": 0,
           "answer_tokens": 301, "max_tokens": 301}
    folder.append_failed_call({"role": "judge", "model": "mimo-v2.5", "outcome": "truncated", "cut": cut,
                               "error": "judge answer truncated: cut at the output cap in the answer",
                               "attempts": [{"attempt": 1, "text": loop, "finish_reason": "length", "cut": cut,
                                             "usage": {"completion_tokens": 301}, "max_tokens": 301,
                                             "next": "asked again, changed"}]}, judging=True)
    folder.append_failed_call({"role": "actor", "outcome": "malformed", "step": 3, "error": "no valid action",
                               "attempts": [{"attempt": 1, "text": XSS_TEXT, "finish_reason": "stop",
                                             "usage": {"completion_tokens": 9}, "max_tokens": 4096}]}, judging=False)
    EvidenceFolder(folder.path / "cases" / "c1").append_failed_call(
        {"role": "tester", "outcome": "malformed", "attempts": [{"attempt": 1, "text": "not json"}]}, judging=False)
    catalog = Catalog.from_paths([run_dir])
    [run] = catalog.runs.values()
    turn = load_turn(run, catalog.record(run.id, "viewer-probe", 2))
    calls = {call.role: call for call in turn.failed_calls}
    assert set(calls) == {"judge", "actor", "tester"}
    judge = calls["judge"]
    assert judge.outcome == "truncated" and judge.attempts[0].text.text == loop
    assert judge.attempts[0].trailing_whitespace == 300 and judge.attempts[0].tokens == "301 of 301 tokens"
    assert calls["actor"].where == "step 3" and calls["tester"].where == "cases/c1"
    assert calls["tester"].href == "evidence/viewer-probe/2/cases/c1/failed_calls.jsonl"
    from fastapi.testclient import TestClient

    from runner.view.app import ViewState, create_app

    page = TestClient(create_app(ViewState(catalog))).get(f"/runs/{run.id}/tasks/viewer-probe/turns/2").text
    assert 'id="failed-calls"' in page and "Failed model calls: 3" in page
    assert "ends with 300 whitespace character(s)" in page and "{&#34;reason&#34;" in page
    assert XSS_TEXT not in page  # the model's text is shown escaped, never as markup
