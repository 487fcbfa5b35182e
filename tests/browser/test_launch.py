"""BrowserPool against the real system Chromium: context settings, isolation, crash recovery."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Error as PlaywrightError
from pydantic import ValidationError

from runner.browser.launch import DETERMINISM_ARGS, PLATFORM_ARGS, BrowserPool, BrowserSettings
from tests.support.processes import browser_pids

pytestmark = pytest.mark.browser


def test_settings_defaults_and_validation() -> None:
    s = BrowserSettings()
    assert s.executable_path == "/usr/bin/chromium"
    assert (s.viewport_width, s.viewport_height, s.device_scale_factor) == (1280, 800, 1.0)
    assert (s.nav_timeout_ms, s.settle_ms, s.headless) == (15000, 150, True)
    for flag in PLATFORM_ARGS + DETERMINISM_ARGS:
        assert flag in s.args()
    assert "--no-sandbox" in PLATFORM_ARGS and "--font-render-hinting=none" in DETERMINISM_ARGS
    assert BrowserSettings(extra_args=["--foo"]).args()[-1] == "--foo"
    assert BrowserSettings(executable_path="").executable_path is None  # "" = Playwright's own browser
    with pytest.raises(ValidationError):
        BrowserSettings(viewport_widht=10)  # typo is an error, not ignored
    with pytest.raises(ValidationError):
        BrowserSettings(viewport_width=0)


def test_session_has_fixed_viewport_locale_timezone_motion(site, browser_settings) -> None:
    url = site.add("/", "<p>hi</p>")
    settings = browser_settings.model_copy(update={"viewport_width": 1024, "viewport_height": 600})

    async def main() -> dict:
        started = time.monotonic()
        async with BrowserPool(settings) as pool:
            launch_s = time.monotonic() - started
            async with pool.session(url) as session:
                await session.goto()
                env = await session.page.evaluate(
                    """() => ({w: innerWidth, h: innerHeight, dpr: devicePixelRatio, lang: navigator.language,
                    tz: Intl.DateTimeFormat().resolvedOptions().timeZone,
                    reduce: matchMedia('(prefers-reduced-motion: reduce)').matches})"""
                )
                return {**env, "launch_s": launch_s}

    env = asyncio.run(main())
    assert (env["w"], env["h"], env["dpr"]) == (1024, 600, 1)
    assert env["lang"] == "en-US" and env["tz"] == "UTC" and env["reduce"] is True
    print(f"browser launch: {env['launch_s']:.2f} s")


def test_each_session_is_a_fresh_context(site, browser_settings) -> None:
    url = site.add("/", "<script>document.title = localStorage.getItem('k') || 'empty'; localStorage.setItem('k', 'set')</script>")

    async def main() -> list[str]:
        titles = []
        async with BrowserPool(browser_settings) as pool:
            for _ in range(2):
                async with pool.session(url) as session:
                    await session.goto()
                    titles.append(await session.page.title())
            # sessions may also run concurrently on one browser
            async def one() -> str:
                async with pool.session(url) as session:
                    await session.goto()
                    return await session.page.title()

            titles += await asyncio.gather(one(), one())
        return titles

    assert asyncio.run(main()) == ["empty"] * 4


def test_sessions_start_on_pages_prepared_in_the_background(site, browser_settings) -> None:
    """Each default-viewport session but a busy pool's takes the page prepared after the last one closed: a
    context of its own, never one a session used before; a session at another viewport gets a fresh one."""
    from runner.browser.launch import Viewport

    url = site.add("/", "<script>document.title = localStorage.getItem('k') || 'empty'; localStorage.setItem('k', 'set')</script>")

    async def main(settings: BrowserSettings) -> tuple[list[str], int, int]:
        titles, contexts = [], []  # kept alive, so no two can share an id
        async with BrowserPool(settings) as pool:
            for _ in range(3):
                async with pool.session(url) as session:
                    contexts.append(session.context)
                    await session.goto()
                    titles.append(await session.page.title())
            async with pool.session(url, viewport=Viewport(640, 480)) as session:
                await session.goto()
                assert await session.page.evaluate("innerWidth") == 640
            return titles, len({id(context) for context in contexts}), pool.spares_used

    assert asyncio.run(main(browser_settings)) == (["empty"] * 3, 3, 3)
    without = browser_settings.model_copy(update={"spare_page": False})
    assert asyncio.run(main(without)) == (["empty"] * 3, 3, 0)


def test_the_next_page_is_prepared_while_this_one_settles(site, browser_settings) -> None:
    """The spare's preparation starts at the load (the settle is idle browser time), not when the session
    closes; a session whose page never loaded still leaves one prepared."""
    url = site.add("/", "<p>loaded</p>")

    async def contexts_once_idle(pool: BrowserPool) -> int:
        for _ in range(100):  # the preparation is a background task: wait for it, not a fixed time
            if pool._spare is None or pool._spare.done():
                break
            await asyncio.sleep(0.05)
        return len(pool.browser.contexts)

    async def main() -> tuple[int, int, int]:
        async with BrowserPool(browser_settings.model_copy(update={"settle_ms": 0})) as pool:
            async with pool.session(url) as session:
                before_load = await contexts_once_idle(pool)
                await session.goto()
                after_load = await contexts_once_idle(pool)
            async with pool.session(url):
                pass  # never loaded
            await pool.closed_sessions()  # an ended session's context closes in the background
            return before_load, after_load, await contexts_once_idle(pool)

    # This session's context alone; then it and the next one's; after a session that never loaded, the spare.
    assert asyncio.run(main()) == (1, 2, 1)


def test_relaunches_after_browser_closed_behind_its_back(site, browser_settings) -> None:
    url = site.add("/", "<p>alive</p>")

    async def main() -> tuple[str, int]:
        async with BrowserPool(browser_settings) as pool:
            await pool.browser.close()  # as if something else tore it down
            async with pool.session(url) as session:
                await session.goto()
                return await session.visible_text(), pool.launches

    assert asyncio.run(main()) == ("alive", 2)


def test_relaunches_after_browser_process_killed(site, browser_settings) -> None:
    url = site.add("/", "<p>alive again</p>")

    async def main() -> tuple[str, int]:
        async with BrowserPool(browser_settings) as pool:
            # This test started exactly one browser: kill that pid, as a crash would.
            browsers = browser_pids(os.getpid())
            assert len(browsers) == 1
            os.kill(browsers[0], signal.SIGKILL)
            for _ in range(100):  # wait (bounded) until Playwright notices the disconnect
                if not pool.browser.is_connected():
                    break
                await asyncio.sleep(0.05)
            async with pool.session(url) as session:
                await session.goto()
                return await session.visible_text(), pool.launches

    assert asyncio.run(main()) == ("alive again", 2)


def test_missing_executable_fails_loudly(browser_settings) -> None:
    settings = browser_settings.model_copy(update={"executable_path": "/nonexistent/chromium"})

    async def main() -> None:
        pool = BrowserPool(settings)
        try:
            await pool.start()
        finally:
            await pool.aclose()

    with pytest.raises(PlaywrightError):
        asyncio.run(main())


def test_a_pool_tells_where_its_artifact_servers_listen() -> None:
    """Unconfined and unassigned: the host's; assigned by a sandbox (docker: its browser container): that."""
    assert BrowserPool(BrowserSettings()).network_namespace is None
    assert BrowserPool(BrowserSettings(serve_network="c0ffee")).network_namespace == "c0ffee"


@contextlib.contextmanager
def _playwright_server() -> Iterator[tuple[subprocess.Popen, int]]:
    """A Playwright browser server on 127.0.0.1 (as the docker sandbox's browser container runs): (process, port)."""
    import playwright

    driver = Path(playwright.__file__).parent / "driver"
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    server = subprocess.Popen([str(driver / "node"), str(driver / "package" / "cli.js"), "run-server", "--host",
                               "127.0.0.1", "--port", str(port), "--unsafe"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield server, port
    finally:
        server.kill()
        server.wait(10)


def test_a_remote_browser_too_busy_to_answer_is_not_lost_but_replaced(site, browser_settings, tmp_path) -> None:
    """A browser behind a Playwright server (as the docker sandbox's) that stays connected but does not answer
    (its process stopped here, as a page's flood keeps it busy) is not a lost browser: the slot is the page's
    failure, not infra. The next session gets a new browser, and the pool goes on."""
    url = site.add("/", "<p>after the busy one</p>")
    stopped: list[int] = []

    async def main(port: int, server: subprocess.Popen) -> tuple[bool, bool, str, int]:
        settings = browser_settings.model_copy(update={"connect_url": f"ws://127.0.0.1:{port}/"})
        async with BrowserPool(settings) as pool:
            stopped.extend(browser_pids(server.pid))
            assert len(stopped) == 1, stopped
            os.kill(stopped[0], signal.SIGSTOP)
            lost = await pool.lost_after_round_trip()
            connected = pool.browser.is_connected()
            async with pool.session(url) as session:
                await session.goto()
                return lost, connected, await session.visible_text(), pool.launches

    try:
        with _playwright_server() as (server, port):
            lost, connected, text, launches = asyncio.run(main(port, server))
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert (lost, connected) == (False, True)
    assert (text, launches) == ("after the busy one", 2)


@pytest.mark.parametrize("killed_by_page", [False, True], ids=["engine-stopped-it", "its-memory-cap-killed-it"])
def test_a_remote_browser_that_stops_answering_then_disconnects_is_lost(browser_settings, killed_by_page) -> None:
    """A browser container being stopped (an engine restart) first stops answering, with its pages closed, and
    disconnects only seconds later: that browser is lost (the slot is infra), not a busy one. Unless the sandbox
    says its memory cap killed it (Sandbox.browser_killed_by_page): its page filled it, the page's failure."""

    stopped: list[int] = []
    asked: list[BrowserSettings] = []

    async def sandbox_says(settings: BrowserSettings) -> bool:
        asked.append(settings)
        return killed_by_page

    async def main(port: int, server: subprocess.Popen) -> tuple[bool, float]:
        settings = browser_settings.model_copy(update={"connect_url": f"ws://127.0.0.1:{port}/"})
        async with BrowserPool(settings, killed_by_page=sandbox_says) as pool:
            stopped.extend(browser_pids(server.pid))
            assert len(stopped) == 1, stopped
            os.kill(stopped[0], signal.SIGSTOP)  # no answer from now on ...
            asyncio.get_running_loop().call_later(8, server.kill)  # ... and the connection goes after the 5 s ask
            started = time.monotonic()
            return await pool.lost_after_round_trip(), time.monotonic() - started

    try:
        with _playwright_server() as (server, port):
            ports = [port]
            lost, waited = asyncio.run(main(port, server))
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert lost is (not killed_by_page) and 8 <= waited < 20
    assert [settings.connect_url for settings in asked] == [f"ws://127.0.0.1:{port}/" for port in ports]
