"""PageSession: network confinement, console and page errors, the mutation counter, frozen motion."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from playwright.async_api import Error as PlaywrightError

from runner.browser.launch import BrowserPool
from runner.browser.session import origin_of
from runner.suites.web2code.image import load_rgb

pytestmark = pytest.mark.browser


def test_origin_of_normalises_default_ports() -> None:
    assert origin_of("http://127.0.0.1/x") == "http://127.0.0.1:80"
    assert origin_of("HTTP://LOCALHOST:8080/a?b") == "http://localhost:8080"
    assert origin_of("https://example.com") == "https://example.com:443"


def test_external_requests_are_blocked_flagged_and_never_sent(site, other_site, browser_settings) -> None:
    other = other_site.base
    url = site.add(
        "/",
        f"""<!doctype html><link rel=stylesheet href="{other}/style.css">
        <img src="http://example.invalid/x.png"><img src="/own.png">
        <script>
          fetch("{other}/data.json").catch(() => console.log("fetch refused"));
          fetch("/missing.json");
          try {{ const ws = new WebSocket("ws://127.0.0.1:{other_site.port}/ws");
                 ws.onclose = () => console.log("ws closed"); }} catch (e) {{}}
        </script><p>page</p>""",
    )
    site.add("/own.png", b"\x89PNG\r\n\x1a\n", "image/png")

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                await asyncio.sleep(0.3)  # let the websocket attempt finish
                return list(session.network), list(session.console)

    network, console = asyncio.run(main())
    by_url = {n.url: n for n in network}
    assert by_url["http://example.invalid/x.png"].blocked
    assert by_url[f"{other}/data.json"].blocked and by_url[f"{other}/data.json"].resource_type == "fetch"
    assert by_url[f"{other}/style.css"].blocked
    assert by_url[f"ws://127.0.0.1:{other_site.port}/ws"].blocked
    assert all(n.status is None for n in network if n.blocked)
    assert other_site.hits == []  # nothing reached the other origin's server
    own = {n.url: n for n in network if not n.blocked}
    assert own[url].status == 200 and own[url].resource_type == "document"
    assert own[site.url("/own.png")].status == 200
    assert own[site.url("/missing.json")].status == 404
    assert any(c["text"] == "fetch refused" for c in console)


def test_extra_origins_are_allowed(site, other_site, browser_settings) -> None:
    other_site.add("/data.json", '{"ok": true}', "application/json")
    url = site.add("/", f"<script>fetch('{other_site.base}/data.json', {{mode: 'no-cors'}})</script>")

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url, extra_origins=[other_site.base]) as session:
                await session.goto()
                return list(session.network)

    network = asyncio.run(main())
    assert not any(n.blocked for n in network)
    assert "/data.json" in other_site.hits


def test_console_and_page_errors_are_captured(site, browser_settings) -> None:
    url = site.add(
        "/",
        """<script>
          console.log("hello", 42); console.warn("careful"); console.error("bad thing");
          setTimeout(() => { null.boom(); }, 0);
          Promise.reject(new Error("unhandled rejection"));
        </script><p>x</p>""",
    )

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                return list(session.console), list(session.page_errors)

    console, errors = asyncio.run(main())
    assert [(c["type"], c["text"]) for c in console[:3]] == [
        ("log", "hello 42"),
        ("warning", "careful"),
        ("error", "bad thing"),
    ]
    assert console[0]["location"]["url"] == url
    assert any("TypeError" in e and "boom" in e for e in errors)
    assert any("unhandled rejection" in e for e in errors)


def test_mutation_counter_counts_child_and_attribute_changes_and_text_on_request(site, browser_settings) -> None:
    # The page mutates itself while loading; goto must leave the counter at zero afterwards.
    url = site.add(
        "/",
        """<div id=a class=x>text</div><script>
          for (let i = 0; i < 5; i++) document.body.append(document.createElement('span'));
        </script>""",
    )

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                counts = {"after_goto": None}
                await session.goto()
                counts["after_goto"] = await session.mutation_count()
                await session.page.evaluate("document.getElementById('a').setAttribute('class', 'y')")
                counts["attribute"] = await session.mutation_count()
                await session.reset_mutations()
                await session.page.evaluate("document.getElementById('a').firstChild.data = 'changed'")
                # I-WebGenBench App. B.1's observer does not see a text-node rewrite; the option does.
                counts["text"] = await session.mutation_count()
                counts["text_with_character_data"] = await session.mutation_count(character_data=True)
                await session.reset_mutations()
                await session.page.evaluate("document.body.append(document.createElement('p'))")
                counts["child"] = await session.mutation_count()
                await session.reset_mutations()
                await session.page.evaluate("document.getElementById('a').getBoundingClientRect()")  # a read
                counts["read"] = await session.mutation_count()
                await session.goto()  # reload re-arms the observer in the new document
                counts["after_reload"] = await session.mutation_count()
                await session.page.evaluate("document.body.append('t')")
                counts["after_reload_change"] = await session.mutation_count()
                return counts

    assert asyncio.run(main()) == {
        "after_goto": 0,
        "attribute": 1,
        "text": 0,
        "text_with_character_data": 1,
        "child": 1,
        "read": 0,
        "after_reload": 0,
        "after_reload_change": 1,
    }


def test_the_idle_window_since_a_load_includes_how_long_the_page_was_still(site, browser_settings) -> None:
    # A page still since it rendered was watched for at least the settle window when goto returns; a page
    # that changes every 10 ms (child lists) was not; a text-only ticker is still for the B.1 kinds only; a
    # reset since the load leaves no such window.
    settings = browser_settings.model_copy(update={"settle_ms": 300})
    still = site.add("/still", "<p>still</p>")
    ticking = site.add("/ticking", "<p id=t></p><script>setInterval(() => { t.textContent = Date.now(); }, 10)</script>")
    texting = site.add("/texting", "<p id=t>0</p><script>const n = t.firstChild;"
                                   "setInterval(() => { n.data = String(Date.now()); }, 10)</script>")

    async def windows(url: str) -> tuple[float | None, float | None, float | None]:
        async with BrowserPool(settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                structure, any_kind = session.idle_window_s(), session.idle_window_s(character_data=True)
                await session.reset_mutations()
                return structure, any_kind, session.idle_window_s()

    async def main():
        return [await windows(url) for url in (still, ticking, texting)]

    (still_s, still_any, still_reset), (tick_s, tick_any, _), (text_s, text_any, _) = asyncio.run(main())
    assert still_s >= 0.3 and still_any >= 0.3 and still_reset is None
    assert tick_s < 0.3 and tick_any < 0.3
    assert text_s >= 0.3 and text_any < 0.3


def test_animations_are_frozen_without_touching_the_dom(site, browser_settings) -> None:
    url = site.add(
        "/",
        """<style>@keyframes spin { to { transform: rotate(360deg) } }
        .s { animation: spin 2s infinite; transition: color 3s; }</style><div class=s>spin</div>""",
    )

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                style = await session.page.evaluate(
                    "() => { const s = getComputedStyle(document.querySelector('.s'));"
                    " return [s.animationDuration, s.transitionDuration, document.querySelectorAll('style').length]; }"
                )
                return style

    assert asyncio.run(main()) == ["0s", "0s", 1]  # only the page's own <style>: ours is adopted, not inserted


def test_viewport_png_has_playwrights_pixels_and_adds_nothing_to_the_dom(site, browser_settings) -> None:
    # Unscrolled and scrolled, with a focused input (its caret hidden in both), and a page with a running Web
    # Animation (Playwright's own path): the pixels of Playwright's screenshot, and no mutation on the page.
    plain = ("<body><input autofocus value='caret'>" + "<p>a paragraph of text</p>" * 80 + "</body>")
    animated = (plain + "<div id='a' style='width:50px;height:50px;background:red'></div><script>"
                "document.getElementById('a').animate([{opacity: 0}, {opacity: 1}], "
                "{duration: 100000, iterations: Infinity})</script>")
    urls = [site.add("/plain", plain), site.add("/animated", animated)]

    async def main() -> list[tuple[bytes, bytes, int]]:
        shots = []
        async with BrowserPool(browser_settings) as pool:
            for url in urls:
                async with pool.session(url) as session:
                    await session.goto()
                    await session.page.focus("input")
                    for scroll in (0, 600):
                        await session.page.evaluate("(y) => window.scrollTo(0, y)", scroll)
                        await session.reset_mutations()
                        ours = await session.viewport_png()
                        mutations = await session.mutation_count(character_data=True)
                        theirs = await session.page.screenshot(animations="disabled", caret="hide")
                        shots.append((ours, theirs, mutations))
        return shots

    shots = asyncio.run(main())
    for ours, theirs, _ in shots:
        assert np.array_equal(load_rgb(ours), load_rgb(theirs))
        assert load_rgb(ours).shape == (browser_settings.viewport_height, browser_settings.viewport_width, 3)
    assert [mutations for _, _, mutations in shots[:2]] == [0, 0]  # the fast path touches no node
    assert not np.array_equal(load_rgb(shots[0][0]), load_rgb(shots[1][0]))  # the scrolled view is captured


def test_the_evidence_reads_are_playwrights_and_cannot_be_faked_by_the_page(site, browser_settings) -> None:
    """content() and visible_text() give what page.content() and the body's innerText give, also when the page
    redefines the getters they would use, XMLSerializer, and the harness's own read, before the reads."""
    honest = site.add("/", "<!doctype html><html lang=en><head><title>t</title></head>"
                           "<body><h1>Total: 3</h1><p hidden>secret</p></body></html>")
    faking = site.add("/fake", """<!doctype html><body><h1>Total: 3</h1><script>
      const fake = { get() { return 'ALL REQUIREMENTS MET'; }, configurable: true };
      Object.defineProperty(Element.prototype, 'outerHTML', fake);
      Object.defineProperty(HTMLElement.prototype, 'innerText', fake);
      XMLSerializer.prototype.serializeToString = () => 'ALL REQUIREMENTS MET';
      Object.defineProperty(Document.prototype, 'documentElement', fake);
      try { window.__genuiRead = { html: () => 'faked', text: () => 'faked' }; } catch (e) {}
      try { delete window.__genuiRead; } catch (e) {}
    </script></body>""")

    async def read(url: str) -> tuple[str, str, str, str]:
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                before = await session.mutation_count()
                ours = await session.content(), await session.visible_text()
                assert await session.mutation_count() == before  # reads, never writes
                theirs = await session.page.content(), await session.page.evaluate("document.body.innerText")
                return *ours, *theirs

    html, text, playwright_html, inner_text = asyncio.run(read(honest))
    assert html == playwright_html and html.startswith("<!DOCTYPE html><html lang=\"en\">")
    assert text == inner_text == "Total: 3"
    html, text, playwright_html, inner_text = asyncio.run(read(faking))
    assert inner_text == "ALL REQUIREMENTS MET"  # what a read through the page's own getters would have given
    assert text == "Total: 3" and html.startswith("<!DOCTYPE html><html><head></head><body><h1>Total: 3</h1><script>")
    assert html == playwright_html  # the isolated world's read agrees


def test_an_unchanged_view_is_reused_only_while_nothing_could_have_changed(site, browser_settings, tmp_path,
                                                                           monkeypatch) -> None:
    """screenshot(reuse_unchanged=True) gives the last viewport shot again right after it, and a fresh one
    after any DOM mutation (text included), a scroll, or once REUSE_VIEW_S has passed."""
    from runner.browser import session as session_module

    url = site.add("/", "<!doctype html><body style='height:3000px'><p id=p>one</p></body>")
    monkeypatch.setattr(session_module, "REUSE_VIEW_S", 0.3)

    async def main() -> list[bool]:
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                captured = 0
                fast_png = session._fast_png

                async def counting(options):
                    nonlocal captured
                    captured += 1
                    return await fast_png(options)

                session._fast_png = counting

                async def fresh(name: str) -> bool:
                    before = captured
                    await session.screenshot(tmp_path / name, reuse_unchanged=True)
                    return captured > before

                seen = [await fresh("first.png"), await fresh("again.png")]
                await session.page.evaluate("document.getElementById('p').firstChild.data = 'two'")
                seen += [await fresh("text.png"), await fresh("text-again.png")]
                await session.page.evaluate("window.scrollTo(0, 200)")
                seen.append(await fresh("scrolled.png"))
                await asyncio.sleep(0.4)
                seen.append(await fresh("later.png"))
                return seen

    assert asyncio.run(main()) == [True, False, True, False, True, True]
    assert (tmp_path / "first.png").read_bytes() == (tmp_path / "again.png").read_bytes()


def test_a_visit_ends_after_the_tool_calls_the_page_chains(site, browser_settings) -> None:
    """A page that restocks and then reads the stock (the second call starts when the first answers) has
    both calls answered before the visit ends; a page that never calls the bridge is not held up."""
    site.add("/__tools/restock", "{}", "application/json", delay_s=0.3)
    site.add("/__tools/stock", "{}", "application/json", delay_s=0.2)
    chained = site.add("/", "<!doctype html><p>shop</p><script>"
                            "fetch('/__tools/restock', {method: 'POST'}).then((r) => r.json())"
                            ".then(() => fetch('/__tools/stock', {method: 'POST'}))</script>")
    plain = site.add("/plain", "<!doctype html><p>no tools</p>")

    async def visit(url: str) -> tuple[list[tuple[str, int | None]], float]:
        async with BrowserPool(browser_settings.model_copy(update={"settle_ms": 0})) as pool:
            async with pool.session(url) as session:
                await session.goto()
                started = asyncio.get_running_loop().time()
                await session.tool_calls_settled(3.0)
                waited = asyncio.get_running_loop().time() - started
                calls = [(n.url.rsplit("/", 1)[-1], n.status) for n in session.network if "/__tools/" in n.url]
                return calls, waited

    calls, waited = asyncio.run(visit(chained))
    assert calls == [("restock", 200), ("stock", 200)] and waited >= 0.2
    calls, waited = asyncio.run(visit(plain))
    assert calls == [] and waited < 0.05


def test_dialogs_and_popups_never_block(site, browser_settings) -> None:
    site.add("/pop", "<p>popup</p>")
    url = site.add(
        "/",
        """<button id=a onclick="if (confirm('sure?')) document.body.append('yes')">a</button>
        <a id=p href="/pop" target="_blank">pop</a>""",
    )

    async def main():
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                await session.page.click("#a", timeout=2000)
                await session.page.click("#p", timeout=2000)
                await asyncio.sleep(0.3)
                return session.dialogs, session.popups, await session.visible_text(), len(session.context.pages)

    dialogs, popups, text, pages = asyncio.run(main())
    assert dialogs == [{"type": "confirm", "message": "sure?"}]
    assert "yes" in text
    assert len(popups) == 1 and pages == 1


def test_a_request_flood_past_the_network_cap_keeps_no_state() -> None:
    from dataclasses import dataclass
    from types import SimpleNamespace

    from runner.browser import session as session_module

    @dataclass(eq=False)  # hashed by identity, as Playwright's Request is
    class FakeRequest:
        url: str
        method: str = "POST"
        resource_type: str = "fetch"

    page_session = session_module.PageSession(None, None, "http://127.0.0.1:8000/")  # type: ignore[arg-type]
    cap = session_module._MAX_NETWORK_ENTRIES
    for index in range(cap + 300):
        request = FakeRequest(f"http://127.0.0.1:8000/__tools/call?{index}")
        page_session._on_request(request)  # type: ignore[arg-type]
        page_session._on_response(SimpleNamespace(request=request, status=404))  # type: ignore[arg-type]
    assert len(page_session.network) == cap and len(page_session._entries) == cap
    assert all(entry.status == 404 for entry in page_session.network)


@pytest.mark.parametrize(("boundary", "blocked", "loopback_says", "elsewhere_says"), [
    ("namespace", True, "the browser's own namespace", "no route: the browser's network namespace"),
    ("container", True, "the browser container's own loopback", "dropped: the browser container's firewall"),
    ("none", False, "not confined", "not confined"),
])
def test_each_webrtc_server_is_logged_with_what_stops_it_in_this_browser(boundary, blocked, loopback_says,
                                                                        elsewhere_says) -> None:
    """The network log says what the page's ICE servers met, as the browser's confinement decides (not one
    sentence for all), and what the browser itself reported about an attempt."""
    from runner.browser import session as session_module

    page_session = session_module.PageSession(None, None, "http://127.0.0.1:8000/",  # type: ignore[arg-type]
                                              network_boundary=boundary)
    for url in ("stun:127.0.0.1:3478", "turn:192.0.2.1:3478?transport=udp"):
        page_session._on_report({"kind": "webrtc", "url": url})
    page_session._on_report({"kind": "webrtc-error", "url": "turn:192.0.2.1:3478?transport=udp", "code": 701,
                             "text": "Failed to establish connection"})
    loopback, elsewhere = page_session.network
    assert (loopback.blocked, elsewhere.blocked) == (blocked, blocked)
    assert loopback_says in loopback.reason and elsewhere_says in elsewhere.reason
    assert loopback.failure == "" and elsewhere.failure == "icecandidateerror 701: Failed to establish connection"


def test_a_reload_would_match_only_the_one_load_the_page_left_as_it_was(site, browser_settings) -> None:
    """reload_would_match: True for the session's one load while the page is unchanged and left nothing a reload
    would start from; False once its DOM changed, after a second load, after a tool-bridge call, and for a page
    that wrote any kind of storage, a cookie (also one a path hides), its window name or its history state, or
    moved to another URL; also when the page redefines the getters and then() the reads would use."""
    state = {
        "local": "localStorage.setItem('a', 'b')",
        "session": "sessionStorage.setItem('a', 'b')",
        "name": "window.name = 'n'",
        "history": "history.replaceState({a: 1}, '')",
        "indexeddb": "const r = indexedDB.open('d', 1); r.onupgradeneeded = () => r.result.createObjectStore('s')",
        "caches": "caches.open('c')",
        "cookie": "document.cookie = 'a=b; path=/elsewhere'",
        "opfs": "navigator.storage.getDirectory().then((d) => d.getFileHandle('f', {create: true}))",
        "bridge": "fetch('/__tools/x', {method: 'POST'})",
        "pushed": "history.pushState(null, '', '/elsewhere')",
        "faking": "localStorage.setItem('a', 'b'); window.name = 'n';"
                  "Object.defineProperty(Storage.prototype, 'length', {get: () => 0});"
                  "Object.defineProperty(window, 'name', {get: () => '', set() {}});"
                  "Promise.prototype.then = function () { return this; };",
    }
    urls = {name: site.add(f"/{name}", f"<!doctype html><p>x</p><script>{script}</script>")
            for name, script in state.items()}
    plain = site.add("/", "<!doctype html><p>x</p>")

    async def main() -> tuple[list[bool], dict[str, bool]]:
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(plain) as session:
                await session.goto()
                await session.page.evaluate("window.loadMark = 1")  # JavaScript state only: not a DOM change
                plain_seen = [await session.reload_would_match(), await session.reload_would_match()]
                await session.page.evaluate("document.body.append('y')")
                plain_seen.append(await session.reload_would_match())
            async with pool.session(plain) as session:
                await session.goto()
                await session.goto()
                plain_seen.append(await session.reload_would_match())
            seen = {}
            for name, url in urls.items():
                async with pool.session(url) as session:
                    await session.goto()
                    await asyncio.sleep(0.05)
                    seen[name] = await session.reload_would_match()
            return plain_seen, seen

    plain_seen, seen = asyncio.run(main())
    assert plain_seen == [True, True, False, False]
    assert seen == {name: False for name in state}


def test_the_mutation_counter_lives_where_the_page_cannot_reach_it(site, browser_settings) -> None:
    """A page that replaces, freezes or proxies the readers a harness could have put on window, patches
    MutationObserver and the timers, still shows 0 mutations when nothing changes and the real count when
    something does; the harness world's names are not the page's to see."""
    url = site.add("/", """<!doctype html><p id=p>Count: 2</p><script>
      const fake = () => 7;
      window.__genuiReadMutations = fake; window.__genuiResetMutations = () => [1e9, 1e9];
      Object.defineProperty(window, '__genuiMutationTotal', { value: fake, writable: false, configurable: false });
      window.__genui = new Proxy({}, { get: () => fake });
      Object.freeze(window);
      MutationObserver.prototype.takeRecords = () => [{ type: 'childList' }, { type: 'attributes' }];
      MutationObserver.prototype.observe = function () {};
      performance.now = () => 1e12; window.requestAnimationFrame = () => 0; window.setTimeout = () => 0;
    </script>""")

    async def main() -> tuple[int, int, int, str, float | None]:
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                still = await session.mutation_count(character_data=True)
                await session.settle_until_mutation(100)  # the harness's timers are its own: this returns
                await session.page.evaluate("document.getElementById('p').setAttribute('class', 'x')")
                changed = await session.mutation_count(character_data=True)
                await session.reset_mutations()
                after_reset = await session.mutation_count()
                seen_by_page = await session.page.evaluate("typeof globalThis.__genuiProbeTargets + ' ' + "
                                                           "Object.getOwnPropertyNames(window).includes('__genuiRead')")
                return still, changed, after_reset, seen_by_page, session.idle_window_s()

    still, changed, after_reset, seen_by_page, window = asyncio.run(main())
    assert (still, changed, after_reset) == (0, 1, 0)
    assert seen_by_page == "undefined false" and window is None


def test_dialogs_are_answered_in_the_page_so_no_input_depends_on_the_harness_being_quick(
        site, browser_settings, monkeypatch) -> None:
    """A page that opens dialogs on a timer and asks before counting: every click counts however slowly the
    harness itself would have answered a dialog (its handler is made slow here), since no dialog stays open
    to swallow input; confirm is OK, prompt its default, each dialog is recorded."""
    from runner.browser import session as session_module

    answered_late = session_module.PageSession._on_dialog

    async def slow(self, dialog):  # a machine so loaded that the harness answers after a second
        await asyncio.sleep(1.0)
        await answered_late(self, dialog)

    monkeypatch.setattr(session_module.PageSession, "_on_dialog", slow)
    url = site.add("/", """<!doctype html><p id=c>Count: 0</p><p id=n></p>
      <button id=b style="width:200px;height:40px">Increment</button><script>
      let count = 0, ticks = 0;
      const tick = setInterval(() => { alert('tick'); if (++ticks === 20) clearInterval(tick); }, 5);
      document.getElementById('n').textContent = prompt('name?', 'anon');
      document.getElementById('b').addEventListener('click', () => {
        if (confirm('add one?')) document.getElementById('c').textContent = 'Count: ' + (++count); });
    </script>""")

    async def main() -> tuple[str, list[dict[str, str]]]:
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                box = await session.page.locator("#b").bounding_box()
                for _ in range(2):  # input straight to the page, as a click's last step sends it
                    await session.page.mouse.click(box["x"] + 5, box["y"] + 5)
                await asyncio.sleep(0.2)
                return await session.visible_text(), list(session.dialogs)

    text, dialogs = asyncio.run(main())
    assert "Count: 2" in text and "anon" in text, text
    assert dialogs[0] == {"type": "prompt", "message": "name?"}
    assert [d for d in dialogs if d["type"] == "confirm"] == [{"type": "confirm", "message": "add one?"}] * 2
    assert sum(d["message"] == "tick" for d in dialogs) == 20


def test_the_first_load_is_watched_long_enough_to_see_a_page_leave_or_hang(site, browser_settings) -> None:
    """watch_first_load waits until the first load is watch_ms old: a page leaving 300 ms after its load is then
    seen leaving however fast the visit was, a page hanging then is seen not answering; a visit that took that
    long already does not wait."""
    leaving = site.add("/leave", "<!doctype html><p>x</p><script>setTimeout(() => "
                                 "{ location.href = 'http://127.0.0.1:9/away'; }, 300)</script>")
    hanging = site.add("/hang", "<!doctype html><p>x</p><script>setTimeout(() => { for (;;) {} }, 300)</script>")
    still = site.add("/still", "<!doctype html><p>x</p>")

    async def visit(url: str, watch_ms: int, *, nav_timeout_ms: int = 15000) -> tuple[list[str], list[str], float]:
        settings = browser_settings.model_copy(update={"watch_ms": watch_ms, "nav_timeout_ms": nav_timeout_ms})
        async with BrowserPool(settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                started = asyncio.get_running_loop().time()
                await session.watch_first_load()
                waited = asyncio.get_running_loop().time() - started
                return list(session.left_origin), list(session.unresponsive), waited

    async def main():
        return (await visit(leaving, 0), await visit(leaving, 600), await visit(hanging, 600, nav_timeout_ms=2000),
                await visit(still, 100))

    unwatched, watched, hung, quick = asyncio.run(main())
    assert unwatched[0] == [] and unwatched[2] < 0.05
    assert watched[0][0] == "http://127.0.0.1:9/away" and 0.2 < watched[2] < 1.0  # (then the refusal's error page)
    assert hung[1] == ["a read of the page got no answer within 2000 ms"]
    assert quick[2] < 0.05  # the load's settle window was longer than 100 ms already


def test_a_page_gone_under_a_load_is_the_page_not_answering(site, browser_settings) -> None:
    """A reload that finds the page crashed or closed (a renderer over its memory cap) is the page's runtime
    failure, noted like a load past its deadline, not a failed check of a page that worked."""
    url = site.add("/plain", "<!doctype html><p>x</p>")

    async def main() -> tuple[str, list[str]]:
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                assert session.unresponsive == []
                await session.page.close()
                with pytest.raises(PlaywrightError) as raised:
                    await session.goto()
                return str(raised.value), list(session.unresponsive)

    error, unresponsive = asyncio.run(main())
    assert "closed" in error
    assert len(unresponsive) == 1 and unresponsive[0].startswith("the page was closed or crashed during a load")
