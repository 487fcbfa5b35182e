"""browser.record_trace: Playwright's trace of each slot's visit, as evidence/<task>/<turn>/trace.zip.

Real runs through the CLI (oracle model, probe actor, rules judge on smoke-counter) with the option on and off,
and a real pool whose trace cannot be written.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import zipfile
from pathlib import Path

import pytest

from runner.browser.launch import BrowserPool
from tests.report.conftest import run_cli

pytestmark = pytest.mark.browser


def _trace_events(path: Path) -> list[dict]:
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert "trace.trace" in names and any(name.endswith(".network") for name in names), names
        return [json.loads(line) for line in archive.read("trace.trace").decode().splitlines() if line.strip()]


def test_a_run_with_record_trace_writes_a_playwright_trace_per_turn(tmp_path) -> None:
    on = run_cli(tmp_path / "on", "model=oracle", "actor=probe", "suite.task_ids=[smoke-counter]",
                 "browser.record_trace=true")
    turns = [json.loads(line) for line in (on / "turns.jsonl").read_text().splitlines()]
    assert len(turns) == 3 and all(turn["status"] == "ok" for turn in turns)
    for turn in turns:
        events = _trace_events(on / turn["evidence_dir"] / "trace.zip")
        calls = [event.get("method") for event in events if event["type"] == "before"]
        assert "goto" in calls  # the load
        assert "click" in calls  # the probe actor's (and the live checks') clicks
        assert any(event["type"] == "frame-snapshot" for event in events)  # snapshots: replayable DOM
        options = next(event for event in events if event["type"] == "context-options")
        assert options.get("title") == f"smoke-counter turn {turn['turn']}"
    config = (on / "config.yaml").read_text()
    assert "record_trace: true" in config

    off = run_cli(tmp_path / "off", "model=oracle", "actor=probe", "suite.task_ids=[smoke-counter]")
    assert (off / "evidence" / "smoke-counter" / "1" / "trace.json").is_file()  # the actor ran
    assert not list((off / "evidence").rglob("trace.zip"))


def test_a_trace_that_cannot_be_written_warns_and_leaves_the_session_whole(site, browser_settings, tmp_path,
                                                                             caplog) -> None:
    url = site.add("/", "<button onclick=\"this.textContent='done'\">go</button>")
    blocked = tmp_path / "trace.zip"
    blocked.mkdir()  # a folder where the file should go: writing the trace fails

    async def main() -> tuple[str, str]:
        settings = browser_settings.model_copy(update={"record_trace": True})
        async with BrowserPool(settings) as pool:
            async with pool.session(url, trace_path=blocked) as session:
                await session.goto()
                await session.page.click("button")
                first = await session.page.inner_text("button")
            async with pool.session(url) as session:  # no path: nothing recorded, the pool goes on
                await session.goto()
                second = await session.page.inner_text("button")
        return first, second

    with caplog.at_level(logging.WARNING, logger="runner.browser.launch"):
        assert asyncio.run(main()) == ("done", "go")
    assert any("could not write the browser trace" in record.getMessage() for record in caplog.records)
    assert blocked.is_dir() and not any(blocked.iterdir())


def test_record_trace_off_records_nothing_even_with_a_path(site, browser_settings, tmp_path) -> None:
    url = site.add("/", "<p>hi</p>")

    async def main() -> None:
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url, trace_path=tmp_path / "trace.zip") as session:
                await session.goto()

    asyncio.run(main())
    assert not (tmp_path / "trace.zip").exists()


def test_a_browser_gone_mid_visit_leaves_no_trace_and_no_wait(site, browser_settings, tmp_path, caplog) -> None:
    url = site.add("/", "<p>hi</p>")

    async def main() -> float:
        settings = browser_settings.model_copy(update={"record_trace": True})
        async with BrowserPool(settings) as pool:
            async with pool.session(url, trace_path=tmp_path / "trace.zip") as session:
                await session.goto()
                assert pool.browser is not None
                await pool.browser.close()  # the browser dies under the visit
                started = time.perf_counter()
            return time.perf_counter() - started

    with caplog.at_level(logging.WARNING, logger="runner.browser.launch"):
        assert asyncio.run(main()) < 5
    assert not (tmp_path / "trace.zip").exists()
    assert any("no trace written" in record.getMessage() for record in caplog.records)
