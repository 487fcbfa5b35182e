"""BrowserPool against the real system Chromium: context settings, isolation, crash recovery."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from playwright.async_api import Error as PlaywrightError
from pydantic import ValidationError

from runner.browser.launch import (DETERMINISM_ARGS, FULL_CHROMIUM, HEADLESS_SHELL, PLATFORM_ARGS, BrowserPool,
                                   BrowserSettings)
from tests.support.processes import browser_pids

T = TypeVar("T")

pytestmark = pytest.mark.browser


def test_a_visible_window_needs_the_full_browser() -> None:
    with pytest.raises(ValidationError, match=r"headless=false.*chromium-headless-shell.*executable_path=/usr/bin/chromium"):
        BrowserSettings(headless=False)
    assert BrowserSettings(headless=False, executable_path=FULL_CHROMIUM).executable_path == FULL_CHROMIUM
    assert BrowserSettings(headless=False, executable_path=None).executable_path is None  # Playwright's own


def test_settings_defaults_and_validation() -> None:
    s = BrowserSettings()
    assert s.executable_path == HEADLESS_SHELL == "/usr/lib/chromium/chromium-headless-shell"
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


def _against_a_playwright_server(main: Callable[[int, subprocess.Popen], Awaitable[T]], stopped: list[int]) -> T:
    """`main(port, server)` run against a Playwright server; the browser processes it stops (their pids put in
    `stopped`) are killed afterwards, whatever happened."""
    try:
        with _playwright_server() as (server, port):
            return asyncio.run(main(port, server))
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


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

    lost, connected, text, launches = _against_a_playwright_server(main, stopped)
    assert (lost, connected) == (False, True)
    assert (text, launches) == ("after the busy one", 2)


@pytest.mark.parametrize("killed_by_page", [False, True], ids=["engine-stopped-it", "its-memory-cap-killed-it"])
def test_a_remote_browser_that_stops_answering_then_disconnects_is_lost(browser_settings, killed_by_page) -> None:
    """A browser container being stopped (an engine restart) first stops answering, with its pages closed, and
    disconnects only seconds later: that browser is lost (the slot is infra), not a busy one. Unless the sandbox
    says its memory cap killed it (Sandbox.browser_killed_by_page): its page filled it, the page's failure."""

    stopped: list[int] = []
    ports: list[int] = []
    asked: list[tuple[BrowserSettings, float]] = []

    class SandboxSays:
        async def browser_killed_by_page(self, settings: BrowserSettings, *, lost_at: float) -> bool:
            asked.append((settings, lost_at))
            return killed_by_page

        async def browser_running(self, settings: BrowserSettings) -> bool:
            return True  # the connection, not the sandbox, tells this loss

    async def main(port: int, server: subprocess.Popen) -> tuple[bool, float, float]:
        ports.append(port)
        settings = browser_settings.model_copy(update={"connect_url": f"ws://127.0.0.1:{port}/"})
        async with BrowserPool(settings, witness=SandboxSays()) as pool:
            stopped.extend(browser_pids(server.pid))
            assert len(stopped) == 1, stopped
            os.kill(stopped[0], signal.SIGSTOP)  # no answer from now on ...
            asyncio.get_running_loop().call_later(8, server.kill)  # ... and the connection goes after the 5 s ask
            started, began = time.monotonic(), time.time()
            return await pool.lost_after_round_trip(), time.monotonic() - started, began

    lost, waited, began = _against_a_playwright_server(main, stopped)
    assert lost is (not killed_by_page) and 8 <= waited < 20
    assert [settings.connect_url for settings, _ in asked] == [f"ws://127.0.0.1:{port}/" for port in ports]
    # The sandbox is asked about the moment the connection closed, not the moment it was asked.
    assert began + 7 <= asked[0][1] <= began + waited


def test_a_remote_browser_whose_sandbox_says_it_stopped_is_lost_though_still_connected(browser_settings) -> None:
    """An engine stopped under its browser container can leave the connection open for minutes (its network
    went with it: no reset ever comes). No answer and a sandbox saying the container no longer runs: lost, at
    once, not a busy browser replaced before the next page (the page's failure)."""
    stopped: list[int] = []

    class EngineGone:
        async def browser_killed_by_page(self, settings: BrowserSettings, *, lost_at: float) -> bool:
            return False

        async def browser_running(self, settings: BrowserSettings) -> bool:
            return False

    async def main(port: int, server: subprocess.Popen) -> tuple[bool, bool, float]:
        settings = browser_settings.model_copy(update={"connect_url": f"ws://127.0.0.1:{port}/"})
        async with BrowserPool(settings, witness=EngineGone()) as pool:
            stopped.extend(browser_pids(server.pid))
            os.kill(stopped[0], signal.SIGSTOP)
            started = time.monotonic()
            lost = await pool.lost_after_round_trip()
            return lost, pool.browser.is_connected(), time.monotonic() - started

    lost, connected, waited = _against_a_playwright_server(main, stopped)
    assert (lost, connected) == (True, True) and waited < 10


def test_a_busy_browser_is_replaced_under_new_visits_and_kept_for_the_visits_still_on_it(site, browser_settings,
                                                                                         tmp_path) -> None:
    """A remote browser found too busy to answer (a page's flood, over when the page is) is replaced for the next
    visit, but a visit still on it keeps its page to the end: closing it under that visit would fail a page that
    did nothing (a capture's "Browser closed"). The retired browser closes with its last visit. Whether a visit
    lost its browser is asked of the browser it ran on: the new one dying is not the old visit's loss."""
    from runner.browser.launch import BrowserPools

    first, second = site.add("/first", "<p>the visit on the busy browser</p>"), site.add("/second", "<p>next</p>")
    stopped: list[int] = []

    async def main(port: int, server: subprocess.Popen) -> tuple[bool, str, str, int, bool, bool, bool, bool]:
        settings = browser_settings.model_copy(update={"connect_url": f"ws://127.0.0.1:{port}/"})
        pools = await BrowserPools.start([settings], visits=2)
        try:
            async with pools.checkout() as pool, pool.session(first) as on_busy:
                await on_busy.goto()
                busy = pool.browser
                stopped.extend(browser_pids(server.pid))
                os.kill(stopped[0], signal.SIGSTOP)  # busy: no answer ...
                lost = await pool.lost_after_round_trip()
                os.kill(stopped[0], signal.SIGCONT)  # ... until the flood is over
                async with pools.checkout() as same, same.session(second) as fresh:
                    await fresh.goto()
                    next_text = await fresh.visible_text()
                kept_text = await on_busy.visible_text()
                kept_open = busy.is_connected()
                newer = [pid for pid in browser_pids(server.pid) if pid not in stopped]
                assert len(newer) == 1, newer
                os.kill(newer[0], signal.SIGKILL)  # the replacement dies while the old visit is still on
                for _ in range(100):
                    if not pool.browser.is_connected():
                        break
                    await asyncio.sleep(0.05)
                new_lost, own_lost = await pool.lost_after_round_trip(), await pool.lost_after_round_trip(busy)
            await pool.closed_sessions()
            return lost, kept_text, next_text, pool.launches, kept_open, busy.is_connected(), new_lost, own_lost
        finally:
            await pools.aclose()

    result = _against_a_playwright_server(main, stopped)
    assert result == (False, "the visit on the busy browser", "next", 2, True, False, True, False)


# ---- visits that share browsers (BrowserPools) ----------------------------------------------------------------

_STORAGE_PAGE = """<!doctype html><body><p id=who></p><script>
const me = new URLSearchParams(location.search).get('v');
document.getElementById('who').textContent = 'visit ' + me;
window.__seen = {local: localStorage.getItem('k'), session: sessionStorage.getItem('k'), cookie: document.cookie,
                 name: window.name};
localStorage.setItem('k', me); sessionStorage.setItem('k', me); document.cookie = 'k=' + me; window.name = me;
</script></body>"""


def test_concurrent_visits_share_one_browser_each_in_a_context_of_its_own(site, browser_settings) -> None:
    """Six visits at once on one browser process (one origin, so storage would leak if contexts did not isolate):
    none sees another's storage, cookie, window name or page, and the browser launched once."""
    from runner.browser.launch import BrowserPools

    site.add("/", _STORAGE_PAGE)

    async def main() -> tuple[list[dict], int, int, int]:
        pools = await BrowserPools.start([browser_settings], visits=6)
        try:
            written = asyncio.Event()
            count = 0

            async def visit(index: int) -> dict:
                nonlocal count
                async with pools.checkout() as pool:
                    async with pool.session(site.url(f"/?v={index}")) as session:
                        await session.goto()
                        seen = await session.page.evaluate("window.__seen")
                        count += 1
                        if count == 6:
                            written.set()
                        await written.wait()  # every visit has written its own values: now read again
                        again = await session.page.evaluate(
                            "({local: localStorage.getItem('k'), session: sessionStorage.getItem('k'), "
                            "cookie: document.cookie, name: window.name, text: document.body.innerText.trim()})")
                        return {"index": index, "before": seen, "after": again}

            results = await asyncio.gather(*(visit(i) for i in range(6)))
            return results, pools.launches, pools.peak_in_flight, len(browser_pids(os.getpid()))
        finally:
            await pools.aclose()

    results, launches, peak, browsers = asyncio.run(main())
    assert (launches, peak, browsers) == (1, 6, 1)
    for result in results:
        me = str(result["index"])
        assert result["before"] == {"local": None, "session": None, "cookie": "", "name": ""}
        assert result["after"] == {"local": me, "session": me, "cookie": f"k={me}", "name": me, "text": f"visit {me}"}


def test_visits_spread_over_the_browsers_which_launch_when_first_needed(site, browser_settings) -> None:
    """The first browser launches at start, the second with the second visit at once; visits go to the browser
    with the fewest; beyond `visits` at once a visit waits for one to end."""
    from runner.browser.launch import BrowserPools

    url = site.add("/", "<p>x</p>")

    async def main() -> dict:
        pools = await BrowserPools.start([browser_settings, browser_settings], visits=4)
        try:
            facts = {"after_start": pools.launches}
            async with pools.checkout() as first:
                async with first.session(url) as session:
                    await session.goto()
                facts["one_visit"] = pools.launches
            release = asyncio.Event()
            entered: list = []
            loaded: list = []

            async def visit() -> None:
                async with pools.checkout() as pool:
                    entered.append(pool)
                    async with pool.session(url) as session:
                        await session.goto()
                        loaded.append(pool)
                        await release.wait()

            tasks = [asyncio.create_task(visit()) for _ in range(5)]
            for _ in range(1200):  # bounded: four visits get in and load, the fifth waits
                if len(loaded) == 4:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)
            facts["entered_while_full"] = len(entered)
            facts["per_browser"] = sorted([entered.count(pool) for pool in pools])
            facts["launched"] = pools.launches
            release.set()
            await asyncio.gather(*tasks)
            facts["entered"] = len(entered)
            facts["peak"] = pools.peak_in_flight
            return facts
        finally:
            await pools.aclose()

    facts = asyncio.run(main())
    assert facts == {"after_start": 1, "one_visit": 1, "entered_while_full": 4, "per_browser": [2, 2],
                     "launched": 2, "entered": 5, "peak": 4}


@pytest.mark.sandbox
def test_a_visit_cannot_reach_the_tool_bridge_of_another_on_the_same_browser(tmp_path) -> None:
    """Two visits on one confined browser, their artifact servers in its one network namespace: the tool bridge is
    the artifact server's own, and every way a page sends a request elsewhere (fetch, beacon, form post, image,
    prefetch) leaves the other visit's bridge uncalled, while the page's own call reaches its own."""
    import json
    import shutil as _shutil

    from runner.browser.launch import BrowserPools
    from runner.sandbox.base import ToolBridge
    from runner.sandbox.local import LocalSandbox, LocalSandboxSettings
    from runner.suites.evogenui.suite import BRIDGE_RUNTIME

    if _shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    backends = tmp_path / "backends"
    backends.mkdir()
    (backends / "notes.py").write_text(
        "TOOL_SCHEMAS = {'add_note': {'description': 'Add a note', 'inputSchema': {'type': 'object'}}}\n\n"
        "def invoke(tool, args, state):\n    state.setdefault('notes', []).append(args.get('text'))\n"
        "    return {'count': len(state['notes'])}\n")
    (tmp_path / "state_in.json").write_text("{}")
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "index.html").write_text("<!doctype html><title>visit</title><p>page</p>")

    def bridge(name: str) -> ToolBridge:
        folder = tmp_path / name
        folder.mkdir()
        return ToolBridge(backends_path=backends, fixture_ids={"add_note": "notes"},
                          state_in=tmp_path / "state_in.json", log_out=folder / "tool_log.jsonl",
                          state_out=folder / "state.json", runtime=BRIDGE_RUNTIME)

    bridges = {"a": bridge("a"), "b": bridge("b")}
    attack = """async (other) => {
      const body = JSON.stringify({tool: 'add_note', arguments: {text: 'from a'}});
      const own = await (await fetch('/__tools/call', {method: 'POST', body})).json();
      const tries = [];
      try { await fetch(other + '__tools/call', {method: 'POST', mode: 'no-cors', body}); tries.push('fetch ok'); }
      catch (e) { tries.push('fetch refused'); }
      tries.push('beacon ' + navigator.sendBeacon(other + '__tools/call', body));
      const img = new Image(); img.src = other + '__tools/list';
      const link = document.createElement('link'); link.rel = 'prefetch'; link.href = other + '__tools/list';
      document.head.appendChild(link);
      const frame = document.createElement('iframe'); frame.name = 'sink'; document.body.appendChild(frame);
      const form = document.createElement('form'); form.method = 'POST'; form.target = 'sink';
      form.action = other + '__tools/call'; form.enctype = 'text/plain';
      const field = document.createElement('input'); field.name = body; field.value = ''; form.appendChild(field);
      document.body.appendChild(form); form.submit();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return {own, tries};
    }"""

    async def main() -> dict:
        sandbox = LocalSandbox(LocalSandboxSettings())
        settings = await sandbox.browser_settings(BrowserSettings(settle_ms=50))
        pools = await BrowserPools.start([settings], visits=2)
        try:
            async with pools.checkout() as pool_a, pools.checkout() as pool_b:
                assert pool_a is pool_b  # one browser, one network namespace for both servers
                async with sandbox.serve(dist, tool_bridge=bridges["a"], network=pool_a.network_namespace) as a, \
                        sandbox.serve(dist, tool_bridge=bridges["b"], network=pool_b.network_namespace) as b:
                    async with pool_a.session(a.url) as session_a, pool_b.session(b.url) as session_b:
                        await session_a.goto()
                        await session_b.goto()
                        result = await session_a.page.evaluate(attack, b.url)
                        await asyncio.sleep(1.0)
                        result["b_blocked"] = [entry.url for entry in session_a.network if entry.url.startswith(b.url)]
                        return result
        finally:
            await pools.aclose()

    result = asyncio.run(main())
    assert result["own"] == {"result": {"count": 1}}
    logged_a = [json.loads(line) for line in bridges["a"].log_out.read_text().splitlines()]
    assert [entry["arguments"] for entry in logged_a] == [{"text": "from a"}]
    log_b = bridges["b"].log_out
    assert not log_b.exists() or log_b.read_text() == "", "a page reached another visit's tool bridge"
    state_b = bridges["b"].state_out
    assert not state_b.exists() or "notes" not in json.loads(state_b.read_text() or "{}")
    assert result["b_blocked"], "the page's requests to the other server were not even attempted"


@pytest.mark.sandbox
def test_a_browser_launched_for_a_visit_is_up_before_the_visit_serves_in_its_namespace(tmp_path) -> None:
    """A confined browser's network namespace exists once it launches: the second browser, launched for the second
    visit at once, is up when the visit gets it, so the artifact server listens where that browser reaches it."""
    import shutil as _shutil

    from runner.browser.launch import BrowserPools
    from runner.sandbox.local import LocalSandbox, LocalSandboxSettings

    if _shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "index.html").write_text("<!doctype html><p>served in its browser's namespace</p>")

    async def main() -> list[tuple[bool, str]]:
        sandbox = LocalSandbox(LocalSandboxSettings())
        settings = await sandbox.browser_settings(BrowserSettings(settle_ms=50))
        pools = await BrowserPools.start([settings, settings], visits=2)
        try:
            seen = []
            async with pools.checkout() as first, pools.checkout() as second:
                for pool in (first, second):
                    async with sandbox.serve(dist, network=pool.network_namespace) as served:
                        async with pool.session(served.url) as session:
                            await session.goto()
                            seen.append((pool.network_namespace is not None, await session.visible_text()))
                assert first is not second and first.network_namespace != second.network_namespace
            return seen
        finally:
            await pools.aclose()

    assert asyncio.run(main()) == [(True, "served in its browser's namespace")] * 2
