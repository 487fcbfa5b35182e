"""PageSession: one page on one served artifact, with its console, errors, network log and DOM mutation counter."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import (
    BrowserContext,
    ConsoleMessage,
    Dialog,
    Error as PlaywrightError,
    Page,
    Request,
    Response,
    Route,
    TimeoutError as PlaywrightTimeoutError,
    WebSocketRoute,
)

from runner.evidence import NetworkRequest

# Freeze CSS motion so screenshots and mutation counts do not depend on timing. Applied as a constructed
# stylesheet (document.adoptedStyleSheets), which, unlike a <style> element, is not itself a DOM mutation.
_FREEZE_CSS = """
*, *::before, *::after {
  animation-duration: 0s !important;
  animation-delay: 0s !important;
  animation-iteration-count: 1 !important;
  transition-duration: 0s !important;
  transition-delay: 0s !important;
  caret-color: transparent !important;
  scroll-behavior: auto !important;
}
"""

# Runs in every document before the page's own scripts. The observer watches the whole document from the
# first parsed node on; takeRecords() makes reset/read exact even when records are still queued. Records
# are counted per type, so a reader chooses I-WebGenBench App. B.1's configuration ("child lists, subtrees,
# and attributes") or adds text-node (characterData) changes; the other record types are the same either way.
_INIT_SCRIPT = """
(() => {
  if (window.__genuiInstalled) return;
  window.__genuiInstalled = true;
  const counts = { childList: 0, attributes: 0, characterData: 0 };
  const add = (records) => { for (const r of records) counts[r.type] += 1; };
  const observer = new MutationObserver(add);
  observer.observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
  window.__genuiResetMutations = () => {
    observer.takeRecords(); counts.childList = counts.attributes = counts.characterData = 0; };
  window.__genuiReadMutations = (withText) => {
    add(observer.takeRecords());
    return counts.childList + counts.attributes + (withText ? counts.characterData : 0);
  };
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(%s);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  } catch (e) { /* very old engines: screenshots still use animations="disabled" */ }
})();
""" % json.dumps(_FREEZE_CSS)

_MAX_ERROR_CHARS = 4000
_MAX_CONSOLE_ENTRIES = 2000  # a page that logs in a loop must not exhaust memory


def origin_of(url: str) -> str:
    """scheme://host:port with the default port made explicit, lower-cased."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port or {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(scheme, 0)
    return f"{scheme}://{host}:{port}"


def _ws_to_http(origin: str) -> str:
    return re.sub(r"^ws(s?)://", r"http\1://", origin)


_SETTLE_UNTIL_MUTATION_JS = """([ms, withText]) => new Promise((resolve) => {
  const started = performance.now();
  const check = () => {
    const seen = window.__genuiReadMutations ? window.__genuiReadMutations(withText) : 0;
    if (seen > 0) { requestAnimationFrame(() => requestAnimationFrame(() => resolve(seen))); return; }
    if (performance.now() - started >= ms) { resolve(0); return; }
    setTimeout(check, 8);
  };
  check();
})"""


class PageSession:
    """One page of a fresh context on the artifact at `url`.

    Everything the page asks for outside the artifact's own origin is refused and logged as blocked.
    Create with `PageSession.open(context, url)` (BrowserPool.session does this).
    """

    def __init__(
        self,
        context: BrowserContext,
        page: Page,
        url: str,
        *,
        nav_timeout_ms: int = 15000,
        settle_ms: int = 150,
        extra_origins: Sequence[str] = (),
    ) -> None:
        self.context = context
        self.page = page
        self.url = url
        self.origin = origin_of(url)
        self.allowed_origins = {self.origin, *(origin_of(o) for o in extra_origins)}
        self.nav_timeout_ms = nav_timeout_ms
        self.settle_ms = settle_ms
        # Whether text-node rewrites count as DOM mutations (I-WebGenBench App. B.1 observes child lists,
        # subtrees and attributes only: False). React updates text nodes in place, so this decides
        # whether a counter whose button only rewrites its number is "responsive".
        self.character_data = False
        self.console: list[dict[str, Any]] = []
        self.page_errors: list[str] = []
        self.network: list[NetworkRequest] = []
        self.dialogs: list[dict[str, str]] = []  # alert/confirm/prompt; accepted so they never block
        self.popups: list[str] = []  # URLs of pages opened by the artifact (closed at once)
        self.response_status: int | None = None  # HTTP status of the last goto's main document
        self._entries: dict[Request, NetworkRequest] = {}

    @classmethod
    async def open(
        cls,
        context: BrowserContext,
        url: str,
        *,
        nav_timeout_ms: int = 15000,
        settle_ms: int = 150,
        extra_origins: Sequence[str] = (),
    ) -> "PageSession":
        await context.add_init_script(script=_INIT_SCRIPT)
        context.set_default_navigation_timeout(nav_timeout_ms)
        page = await context.new_page()
        self = cls(
            context, page, url, nav_timeout_ms=nav_timeout_ms, settle_ms=settle_ms, extra_origins=extra_origins
        )
        await context.route("**/*", self._route)
        await context.route_web_socket(re.compile(r".*"), self._route_ws)
        context.on("request", self._on_request)
        context.on("response", self._on_response)
        context.on("requestfailed", self._on_request_failed)
        context.on("page", self._on_new_page)
        self._watch_page(page)
        return self

    # ---- network ----------------------------------------------------------------------------------------

    def is_allowed(self, url: str) -> bool:
        scheme = urlsplit(url).scheme.lower()
        if scheme in ("data", "blob", "about"):  # never leave the browser
            return True
        return _ws_to_http(origin_of(url)) in self.allowed_origins

    def _entry(self, request: Request) -> NetworkRequest:
        entry = self._entries.get(request)
        if entry is None:
            entry = NetworkRequest(url=request.url, method=request.method, resource_type=request.resource_type)
            self._entries[request] = entry
            self.network.append(entry)
        return entry

    async def _route(self, route: Route) -> None:
        request = route.request
        entry = self._entry(request)
        if self.is_allowed(request.url):
            await route.continue_()
        else:
            entry.blocked = True
            await route.abort("blockedbyclient")

    async def _route_ws(self, ws: WebSocketRoute) -> None:
        entry = NetworkRequest(url=ws.url, method="GET", resource_type="websocket")
        self.network.append(entry)
        if self.is_allowed(ws.url):
            ws.connect_to_server()
        else:
            entry.blocked = True
            await ws.close(code=1008, reason="blocked by harness: external origin")

    def _on_request(self, request: Request) -> None:
        self._entry(request)

    def _on_response(self, response: Response) -> None:
        self._entry(response.request).status = response.status

    def _on_request_failed(self, request: Request) -> None:
        self._entry(request).failure = request.failure or "failed"

    # ---- page events -------------------------------------------------------------------------------------

    def _watch_page(self, page: Page) -> None:
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)
        page.on("dialog", self._on_dialog)

    def _on_console(self, message: ConsoleMessage) -> None:
        if len(self.console) < _MAX_CONSOLE_ENTRIES:
            self.console.append({"type": message.type, "text": message.text, "location": dict(message.location)})

    def _on_page_error(self, error: PlaywrightError) -> None:
        text = error.stack or f"{error.name}: {error.message}"
        if len(self.page_errors) < _MAX_CONSOLE_ENTRIES:
            self.page_errors.append(text[:_MAX_ERROR_CHARS])

    async def _on_dialog(self, dialog: Dialog) -> None:
        self.dialogs.append({"type": dialog.type, "message": dialog.message})
        try:
            await dialog.accept()
        except PlaywrightError:
            pass

    async def _on_new_page(self, page: Page) -> None:
        if page is self.page:
            return
        self.popups.append(page.url)
        self._watch_page(page)
        try:
            await page.close()
        except PlaywrightError:
            pass

    # ---- the API actors and evidence code use -----------------------------------------------------------

    async def goto(self) -> float:
        """(Re)load the artifact, wait for `load` plus settle_ms, zero the mutation counter; return seconds.

        Never waits for networkidle (pages that poll never reach it, PLATFORM.md). Navigation errors raise.
        """
        started = time.monotonic()
        self.response_status = None
        response = await self.page.goto(self.url, wait_until="load", timeout=self.nav_timeout_ms)
        self.response_status = response.status if response is not None else None
        await self.settle()
        await self.reset_mutations()
        return time.monotonic() - started

    async def settle(self, ms: int | None = None) -> None:
        await asyncio.sleep((self.settle_ms if ms is None else ms) / 1000)

    async def settle_until_mutation(self, ms: int | None = None) -> None:
        """Wait up to `ms` for the page to answer; return two frames after the first DOM mutation.

        A mutation already decides "responsive", so waiting out the rest of the window only costs time;
        a page that does not change still gets the whole window. Navigation or a busy page: plain wait.
        """
        window = self.settle_ms if ms is None else ms
        started = time.monotonic()
        try:
            await self.evaluate(_SETTLE_UNTIL_MUTATION_JS, [window, self.character_data])
        except PlaywrightError:
            remaining = window / 1000 - (time.monotonic() - started)
            if remaining > 0:
                await asyncio.sleep(remaining)

    async def evaluate(self, expression: str, arg: Any = None) -> Any:
        """page.evaluate with a deadline (nav_timeout_ms): Playwright's has none, and a page stuck in an
        endless loop would otherwise hang the harness. A miss raises Playwright's TimeoutError."""
        try:
            return await asyncio.wait_for(self.page.evaluate(expression, arg), timeout=self.nav_timeout_ms / 1000)
        except asyncio.TimeoutError:
            raise PlaywrightTimeoutError(
                f"page did not answer within {self.nav_timeout_ms} ms (renderer busy or hung)"
            ) from None

    async def reset_mutations(self) -> None:
        await self.evaluate("() => window.__genuiResetMutations && window.__genuiResetMutations()")

    async def mutation_count(self, *, character_data: bool | None = None) -> int:
        """Mutation records since the last reset: childList and attributes (I-WebGenBench App. B.1), plus
        characterData (text-node rewrites) when `character_data` (None: the session's setting) is true."""
        with_text = self.character_data if character_data is None else character_data
        value = await self.evaluate("(t) => window.__genuiReadMutations ? window.__genuiReadMutations(t) : 0", with_text)
        return int(value or 0)

    async def screenshot(self, path: Path, *, full_page: bool = False) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(
            path=str(path), full_page=full_page, animations="disabled", caret="hide", timeout=self.nav_timeout_ms
        )

    async def visible_text(self) -> str:
        return await self.evaluate("() => document.body ? document.body.innerText : ''")
