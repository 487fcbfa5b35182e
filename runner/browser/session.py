"""PageSession: one page on one served artifact, with its console, errors, network log and DOM mutation counter."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import (
    BrowserContext,
    CDPSession,
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

from runner.browser.harness_world import HarnessWorld
from runner.turns.evidence import NetworkRequest
from runner.sandbox.server import BRIDGE_PREFIXES

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

# The document rectangle Playwright's full-page screenshot captures (the largest of the body's and the root's
# scroll, offset and client sizes), once fonts are ready, and how many Web Animations are running.
_PAGE_SIZE_JS = """async () => {
  if (!document.body || !document.documentElement) return null;
  if (document.fonts) await document.fonts.ready;
  const b = document.body, d = document.documentElement;
  const width = Math.max(b.scrollWidth, d.scrollWidth, b.offsetWidth, d.offsetWidth, b.clientWidth, d.clientWidth);
  const height = Math.max(b.scrollHeight, d.scrollHeight, b.offsetHeight, d.offsetHeight, b.clientHeight, d.clientHeight);
  if (!Number.isFinite(width) || !Number.isFinite(height)) return null;  // nothing to measure: Playwright's way
  return {
    width, height,
    viewport_width: window.innerWidth, viewport_height: window.innerHeight,
    animations: document.getAnimations().filter((a) => a.playState === 'running').length,
    // What a viewport shot shows besides the DOM's state: which document, where it is scrolled.
    view: [performance.timeOrigin, window.scrollX, window.scrollY, window.innerWidth, window.innerHeight,
           __genui.total()],
  };
}"""

# The evidence's DOM as Playwright's page.content() gives it (doctype and root element) and the body's innerText.
# Like every read below, run in the harness world (PageSession.observe), where the getters are the browser's own.
_HTML_JS = """() => {
  const doctype = document.doctype, root = document.documentElement;
  return (doctype ? new XMLSerializer().serializeToString(doctype) : '') + (root ? root.outerHTML : '');
}"""
_TEXT_JS = "() => document.body ? document.body.innerText : ''"

# PageSnapshot in one round trip. Visible: a user would see something, text or a visible media element or form
# control with a nonzero box (an empty <input> is still something to look at).
_SNAPSHOT_JS = """() => {
  const root = document.documentElement, body = document.body;
  const text = body ? body.innerText : '';
  let visible = !!body && text.trim().length > 0;
  if (body && !visible) {
    const media = body.querySelectorAll(
      'img, canvas, svg, video, iframe, object, embed, input:not([type=hidden]), select, textarea');
    for (const el of media) {
      const r = el.getBoundingClientRect();
      if (r.width <= 0 || r.height <= 0) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none' || Number(style.opacity) === 0) continue;
      if (el.checkVisibility && !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      visible = true;
      break;
    }
  }
  const fits = !!root && window.scrollX === 0 && window.scrollY === 0
    && root.scrollWidth <= window.innerWidth && root.scrollHeight <= window.innerHeight;
  const doctype = document.doctype;
  const html = (doctype ? new XMLSerializer().serializeToString(doctype) : '') + (root ? root.outerHTML : '');
  return { html, text, fits, visible };
}"""


@dataclass
class PageSnapshot:
    """What the page shows now, read in one round trip (PageSession.snapshot)."""

    html: str  # as page.content() gives it
    text: str  # the body's innerText
    fits_viewport: bool  # unscrolled, and the whole document within the viewport
    visible: bool  # a user would see something (not a blank page)

# How old a viewport shot may be and still stand for the page when nothing in its DOM, document, scroll or
# size changed since (screenshot(reuse_unchanged=True)): a change without a DOM mutation (a canvas drawn by a
# timer, an image that finishes decoding) has only that long to go unseen.
REUSE_VIEW_S = 0.5

# The largest full-page screenshot taken: a taller (or wider) page is shot from its top left corner to here, and
# the evidence says so (Evidence.screenshot_full_clipped). Measured on a loaded 2-core machine: a 400,000 px tall
# page shot to 8192 px takes about 5 s (16384 px: 8.4 s, too close to the capture timeout for a browser held to
# one core); shot whole it costs the capture its whole timeout and leaves no screenshot at all.
MAX_FULL_PAGE_HEIGHT = 8192
MAX_FULL_PAGE_WIDTH = 16384

_MAX_ERROR_CHARS = 4000
# A page that logs in a loop must neither exhaust memory nor keep the slot busy: past these caps the
# session stops listening (Playwright then stops sending the events) and only counts what it missed.
_MAX_CONSOLE_ENTRIES = 2000
_MAX_CONSOLE_BYTES = 512 * 1024
_TWO_FRAMES_JS = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"
_MAX_REPORTS = 500  # CSP / WebRTC reports, dialogs and popups kept per session
_PAGE_GONE = re.compile(r"Target page, context or browser has been closed|Target crashed|Page crashed", re.I)
_MAX_NETWORK_ENTRIES = 5000

# Why a WebRTC peer's traffic went nowhere, by what keeps the browser's own traffic in (BrowserPool.network_boundary):
# (for a loopback address, for any other). Loopback is the browser's own: its namespace's, not the host's.
_WEBRTC_REASONS = {
    "namespace": ("webrtc: ICE server configured; 127.0.0.1 is the browser's own namespace, where only the "
                  "artifact server listens", "webrtc: ICE server configured; no route: the browser's network "
                  "namespace has only its loopback"),
    "container": ("webrtc: ICE server configured; 127.0.0.1 is the browser container's own loopback, where only "
                  "the artifact server listens", "webrtc: ICE server configured; dropped: the browser "
                  "container's firewall passes only its loopback and the runner"),
}
_LOOPBACK_HOSTS = ("127.", "localhost", "[::1]", "::1")

# Runs in the page's own world in every document before the page's scripts: what must act there (frozen CSS
# motion, the console cap at its source, reports of what the page tried). Nothing here is read for a verdict: a
# page can undo any of it, and so only spoils its own evidence. What verdicts read is read in the harness's world
# (runner/browser/harness_world.py), which the page cannot reach.
_INIT_SCRIPT = """
(() => {
  if (window.__genuiInstalled) return;
  window.__genuiInstalled = true;
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(%s);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  } catch (e) { /* very old engines: screenshots still use animations="disabled" */ }
  // A page that logs in a loop floods the harness with events it must parse even after it stops listening;
  // past the capture cap the messages are dropped here, at the source (as many as session.py keeps).
  // A getter (not a wrapper) hands out the native method, so each message keeps the page's own call site.
  let logged = 0;
  const dropped = () => undefined;
  for (const name of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'table']) {
    const original = console[name];
    if (typeof original !== 'function') continue;
    Object.defineProperty(console, name, {
      configurable: true,
      get: () => (++logged > %d ? dropped : original),
      set: () => {},
    });
  }
  // Evidence of what the page tried that never reaches the request log: requests its CSP refused
  // (fetch, sendBeacon, images, ...) and WebRTC peers (their packets die in the browser's namespace).
  const report = window.__genuiReport;
  if (typeof report !== 'function') return;
  // Dialogs are answered here, at once, as a person accepting them would (confirm: OK, prompt: its default
  // value) and recorded like any other. A modal dialog left open until the harness accepted it would swallow
  // every input that arrived meanwhile: a check's click would count or not by how busy the machine was.
  const answers = { alert: () => undefined, confirm: () => true,
                    prompt: (message, value) => (value === undefined || value === null ? '' : String(value)) };
  let dialogs = 0;  // reported up to the evidence's cap, then answered unrecorded (a dialog loop is no flood)
  for (const type of ['alert', 'confirm', 'prompt']) {
    const answer = answers[type];
    try {
      Object.defineProperty(window, type, { configurable: true, writable: true, value: function (message, value) {
        let text = '';
        try { text = message === undefined ? '' : String(message); } catch (e) { text = '?'; }
        if (++dialogs <= %d) report({ kind: 'dialog', type, message: text });
        return answer(message, value);
      } });
    } catch (e) { /* the browser's own dialog: accepted by the session's handler */ }
  }
  document.addEventListener('securitypolicyviolation', (event) => {
    report({ kind: 'csp', url: String(event.blockedURI || ''), directive: String(event.effectiveDirective || '') });
  }, true);
  // A beforeunload handler holds a person on the page when they try to leave: recorded, whichever way it is set.
  try {
    const listen = EventTarget.prototype.addEventListener;
    EventTarget.prototype.addEventListener = function (type, ...rest) {
      if (this === window && String(type).toLowerCase() === 'beforeunload') report({ kind: 'unload-trap', how: 'addEventListener' });
      return Reflect.apply(listen, this, [type, ...rest]);
    };
    for (const owner of [window, Window.prototype]) {
      const slot = Object.getOwnPropertyDescriptor(owner, 'onbeforeunload');
      if (!slot || !slot.set) continue;
      Object.defineProperty(owner, 'onbeforeunload', { ...slot, set(value) {
        if (value) report({ kind: 'unload-trap', how: 'onbeforeunload' });
        return Reflect.apply(slot.set, this, [value]);
      } });
      break;
    }
  } catch (e) { /* the trap goes unrecorded, nothing else changes */ }
  const Peer = window.RTCPeerConnection;
  if (typeof Peer === 'function') {
    const Watched = function (config, ...rest) {
      for (const server of (config && config.iceServers) || []) {
        const urls = Array.isArray(server.urls) ? server.urls : [server.urls || server.url];
        for (const url of urls) report({ kind: 'webrtc', url: String(url) });
      }
      const peer = new Peer(config, ...rest);
      // What became of the attempt: the browser's own word on each ICE server it could not use.
      peer.addEventListener('icecandidateerror', (event) => {
        report({ kind: 'webrtc-error', url: String(event.url || ''), code: Number(event.errorCode) || 0,
                 text: String(event.errorText || '') });
      });
      return peer;
    };
    Watched.prototype = Peer.prototype;
    window.RTCPeerConnection = Watched;
  }
})();
""" % (json.dumps(_FREEZE_CSS), _MAX_CONSOLE_ENTRIES + 1, _MAX_REPORTS)



def origin_of(url: str) -> str:
    """scheme://host:port with the default port made explicit, lower-cased."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port or {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(scheme, 0)
    return f"{scheme}://{host}:{port}"


def _ws_to_http(origin: str) -> str:
    return re.sub(r"^ws(s?)://", r"http\1://", origin)


# The mutation counter zeroed, how long the page had been still, and the document's mark (reload_would_match).
_RESET_JS = "() => [__genui.reset(), __genui.mark()]"
_COUNT_JS = "(withText) => __genui.count(withText)"
_CARRIED_JS = "() => __genui.carried()"
_RELOAD_CHECK_S = 1.0  # how long reload_would_match waits for the page's storage reads

_SETTLE_UNTIL_MUTATION_JS = """([ms, withText]) => new Promise((resolve) => {
  const started = performance.now();
  const check = () => {
    const seen = __genui.count(withText);
    if (seen > 0) { requestAnimationFrame(() => requestAnimationFrame(() => resolve(seen))); return; }
    if (performance.now() - started >= ms) { resolve(0); return; }
    setTimeout(check, 8);
  };
  check();
})"""


class PageSession:
    """One page of a fresh context on the artifact at `url`.

    Everything the page asks for outside the artifact's own origin is refused and logged as blocked.
    Create with `PageSession.prepare(context)`, then `aim(url)` (BrowserPool.session does this).
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
        network_boundary: str = "none",
        watch_ms: int = 0,
    ) -> None:
        self.context = context
        self.page = page
        self.url = url
        self.origin = origin_of(url)
        self.allowed_origins = {self.origin, *(origin_of(o) for o in extra_origins)}
        self.nav_timeout_ms = nav_timeout_ms
        self.settle_ms = settle_ms
        self.watch_ms = watch_ms  # BrowserSettings.watch_ms (watch_first_load)
        self._first_loaded_at: float | None = None  # monotonic time the session's first load finished
        self.network_boundary = network_boundary  # BrowserSettings.network_boundary, for the network log's reasons
        self._webrtc: dict[str, NetworkRequest] = {}  # ICE server URL -> its network log entry
        # Whether text-node rewrites count as DOM mutations (I-WebGenBench App. B.1 observes child lists,
        # subtrees and attributes only: False). React updates text nodes in place, so this decides
        # whether a counter whose button only rewrites its number is "responsive".
        self.character_data = False
        self.console: list[dict[str, Any]] = []
        self.page_errors: list[str] = []
        self.network: list[NetworkRequest] = []
        self.dialogs: list[dict[str, str]] = []  # alert/confirm/prompt; accepted so they never block
        self.popups: list[str] = []  # URLs of pages opened by the artifact (closed at once)
        # Windows the page asked to open (DevTools' Page.windowOpen, sent before the new page exists) and the new
        # pages seen since: a popup's own page event can come after the visit ends (popups_arrived).
        self._windows_opened = 0
        self._popups_seen = 0
        self.downloads: list[dict[str, str]] = []  # downloads the page started (never saved: accept_downloads off)
        self.unload_traps: list[str] = []  # how the page set a beforeunload handler ("addEventListener", ...)
        self.response_status: int | None = None  # HTTP status of the last goto's main document
        self.left_origin: list[str] = []  # main-frame navigations away from the artifact
        self.unresponsive: list[str] = []  # when the page stopped answering the harness (note_unresponsive)
        self.console_dropped = 0
        self._console_bytes = 0
        self._reports = 0
        self._csp_refused: set[str] = set()  # URLs already logged as refused by the CSP
        self._entries: dict[Request, NetworkRequest] = {}
        self._tool_calls_in_flight: set[Request] = set()  # the page's tool-bridge requests not yet answered
        self._tool_bridge_active_at = float("-inf")  # monotonic time a bridge request last started or ended
        # The harness's own world in the page (every read a verdict depends on) and the page's DevTools session
        # it runs over (also the fast screenshots'); both close with the page. Made by prepare().
        self._world: HarnessWorld | None = None
        self._cdp: CDPSession | None = None
        # When the mutation counter was last zeroed, whether by the load (goto) rather than a reset since, and
        # how long the page had been still then: (no child-list or attribute record, no record at all), s.
        self._counting_since = float("-inf")
        self._counting_since_load = False
        self._still_before_reset = (0.0, 0.0)
        # The last full-page shot's clipping: (the page's height, the height shot), None when shot whole.
        self.full_page_clipped: tuple[int, int] | None = None
        # The last viewport shot on the fast path: (what it showed, see _PAGE_SIZE_JS "view"; when; its PNG).
        self._last_view: tuple[tuple[Any, ...], float, bytes] | None = None
        # Loads of the artifact in this session, and [time origin, mutation records] of the last one's document
        # when its settle window ended (reload_would_match); _reset_mark: the same at the last counter reset.
        self._loads = 0
        self._load_mark: list[Any] | None = None
        self._reset_mark: list[Any] | None = None
        # Called once, when the first load of the artifact has finished and the settle wait begins: the pool
        # prepares its next session then (BrowserSettings.spare_page), while this page idles.
        self.on_first_load: Callable[[], None] | None = None

    @classmethod
    async def prepare(cls, context: BrowserContext, *, nav_timeout_ms: int = 15000,
                      settle_ms: int = 150, network_boundary: str = "none", watch_ms: int = 0) -> "PageSession":
        """A session on a blank page of `context` with its init script, listeners and request filter in place,
        not yet aimed at an artifact (`aim`): until then it allows no origin. A pool prepares the next session
        while its worker is busy elsewhere (browser.spare_page)."""
        holder: list[PageSession] = []
        await context.expose_binding("__genuiReport", lambda source, data: holder and holder[0]._on_report(data))
        await context.add_init_script(script=_INIT_SCRIPT)
        context.set_default_navigation_timeout(nav_timeout_ms)
        page = await context.new_page()
        self = cls(context, page, "about:blank", nav_timeout_ms=nav_timeout_ms, settle_ms=settle_ms,
                   network_boundary=network_boundary, watch_ms=watch_ms)
        self._world = await HarnessWorld.install(context, page)
        self._cdp = self._world.cdp
        self._cdp.on("Page.windowOpen", self._on_window_open)
        self.allowed_origins = set()
        holder.append(self)
        await context.route("**/*", self._route)
        await context.route_web_socket(re.compile(r".*"), self._route_ws)
        context.on("request", self._on_request)
        context.on("response", self._on_response)
        context.on("requestfailed", self._on_request_failed)
        context.on("requestfinished", self._tool_call_ended)
        context.on("page", self._on_new_page)
        self._watch_page(page)
        return self

    def aim(self, url: str, extra_origins: Sequence[str] = ()) -> None:
        """Point a prepared session at the artifact at `url` (loaded by `goto`); `extra_origins` are allowed too."""
        self.url = url
        self.origin = origin_of(url)
        self.allowed_origins = {self.origin, *(origin_of(o) for o in extra_origins)}

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
            if len(self.network) < _MAX_NETWORK_ENTRIES:  # past the cap a request flood keeps nothing here
                self._entries[request] = entry
            self._log(entry)
        return entry

    def _log(self, entry: NetworkRequest) -> None:
        if len(self.network) < _MAX_NETWORK_ENTRIES:
            self.network.append(entry)

    def _on_report(self, data: Any) -> None:
        """A report from the init script: a CSP refusal, a dialog, an unload trap, a WebRTC peer the page set up."""
        if not isinstance(data, dict) or self._reports >= _MAX_REPORTS:
            return
        self._reports += 1
        url = str(data.get("url", ""))[:2000]
        if data.get("kind") == "csp":
            if url in self._csp_refused:  # already logged from the request itself
                return
            self._csp_refused.add(url)
            directive = str(data.get("directive", ""))[:100]
            self._log(NetworkRequest(url=url, method="", resource_type=directive or "csp", blocked=True,
                                     reason=f"csp: refused by the page's Content-Security-Policy ({directive})"))
            if directive == "form-action":  # a form submitted to another origin: the page tried to leave
                self._left_origin(url)
        elif data.get("kind") == "dialog":
            if len(self.dialogs) < _MAX_REPORTS:
                self.dialogs.append({"type": str(data.get("type", ""))[:20],
                                     "message": str(data.get("message", ""))[:_MAX_ERROR_CHARS]})
        elif data.get("kind") == "unload-trap":
            if len(self.unload_traps) < _MAX_REPORTS:
                self.unload_traps.append(str(data.get("how", ""))[:50])
        elif data.get("kind") == "webrtc":
            entry = NetworkRequest(url=url, method="", resource_type="webrtc", **self._webrtc_outcome(url))
            self._webrtc.setdefault(url, entry)
            self._log(entry)
        elif data.get("kind") == "webrtc-error":
            entry = self._webrtc.get(url)
            if entry is not None and not entry.failure:
                entry.failure = f"icecandidateerror {data.get('code', 0)}: {str(data.get('text', ''))[:300]}"

    def _webrtc_outcome(self, url: str) -> dict[str, Any]:
        """`blocked` and `reason` of an ICE server entry, as this browser's confinement decides its fate."""
        reasons = _WEBRTC_REASONS.get(self.network_boundary)
        if reasons is None:  # an unconfined browser: the host's network, nothing stopped it
            return {"blocked": False, "reason": "webrtc: ICE server configured; the browser is not confined: its "
                                                "packets may have reached it"}
        host = re.sub(r"^(stuns?|turns?):", "", url).split("?")[0]
        loopback = host.startswith(_LOOPBACK_HOSTS)
        return {"blocked": True, "reason": reasons[0] if loopback else reasons[1]}

    async def _route(self, route: Route) -> None:
        request = route.request
        entry = self._entry(request)
        if self.is_allowed(request.url):
            await route.continue_()
        else:
            entry.blocked = True
            entry.reason = "harness: outside the artifact origin"
            if request.is_navigation_request() and self._in_main_frame(request):
                self._left_origin(request.url)  # refused, so it never shows as a navigation: the attempt counts
            await route.abort("blockedbyclient")

    def _in_main_frame(self, request: Request) -> bool:
        try:
            return request.frame == self.page.main_frame
        except PlaywrightError:  # a popup's first navigation comes before its frame exists: not this page's
            return False

    def _left_origin(self, url: str) -> None:
        if url[:2000] not in self.left_origin and len(self.left_origin) < _MAX_REPORTS:
            self.left_origin.append(url[:2000])

    async def _route_ws(self, ws: WebSocketRoute) -> None:
        entry = NetworkRequest(url=ws.url, method="GET", resource_type="websocket")
        self._log(entry)
        if self.is_allowed(ws.url):
            ws.connect_to_server()
        else:
            entry.blocked = True
            entry.reason = "harness: outside the artifact origin"
            await ws.close(code=1008, reason="blocked by harness: external origin")

    def _on_request(self, request: Request) -> None:
        self._entry(request)
        if urlsplit(request.url).path.startswith(BRIDGE_PREFIXES):
            self._tool_calls_in_flight.add(request)
            self._tool_bridge_active_at = time.monotonic()

    def _tool_call_ended(self, request: Request) -> None:  # answered or failed
        if request in self._tool_calls_in_flight:
            self._tool_calls_in_flight.discard(request)
            self._tool_bridge_active_at = time.monotonic()

    def tool_bridge_idle_s(self) -> float:
        """Seconds since the page's last tool-bridge request started or was answered; 0 while one is open."""
        if self._tool_calls_in_flight:
            return 0.0
        return time.monotonic() - self._tool_bridge_active_at

    async def tool_calls_settled(self, timeout_s: float) -> None:
        """Wait (at most `timeout_s`) until no tool-bridge request of the page is open and none has started
        for two frames after the last answer: a page that chains its calls (restock, then read the stock) gets
        to finish the chain before its visit ends and the state it left is read. A page that never called the
        bridge returns at once."""
        if self._tool_bridge_active_at == float("-inf"):
            return
        deadline = time.monotonic() + timeout_s
        while True:
            await self.tool_calls_answered(max(0.0, deadline - time.monotonic()))
            if not self._tool_calls_in_flight or time.monotonic() >= deadline:
                return

    async def tool_calls_answered(self, timeout_s: float) -> None:
        """Wait (at most `timeout_s`) until every tool-bridge request the page made has its answer, then two
        frames, so what the page renders from the answers is on screen. A person waits for a lookup to come
        back before using what it fills in. Calls still open at the deadline are left to the next step."""
        # A request's event reaches us from the browser's network side, after the click that started it has
        # returned: two frames first, so a call the step just made is in the set before it is read.
        await self._two_frames()
        if not self._tool_calls_in_flight:
            return
        deadline = time.monotonic() + timeout_s
        while self._tool_calls_in_flight and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        await self._two_frames()

    async def popups_arrived(self, timeout_s: float) -> None:
        """Wait (at most `timeout_s`) until every window the page asked to open has arrived as a page of its
        own (and so is in `popups`): the browser announces the opening before the new page's event, which a
        loaded machine can deliver after the visit's last step."""
        deadline = time.monotonic() + timeout_s
        while self._popups_seen < self._windows_opened and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    def _requests_unanswered(self) -> int:
        """The page's requests (within the network log's cap) that have neither a response nor a failure yet."""
        return sum(1 for entry in self._entries.values()
                   if entry.status is None and not entry.failure and not entry.blocked)

    async def requests_answered(self, timeout_s: float) -> None:
        """Wait (at most `timeout_s`) until every logged request has its response or its failure."""
        deadline = time.monotonic() + timeout_s
        while self._requests_unanswered() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    async def _two_frames(self) -> None:
        try:
            await self.observe(_TWO_FRAMES_JS)
        except PlaywrightError:
            pass

    def _on_response(self, response: Response) -> None:
        self._entry(response.request).status = response.status

    def _on_request_failed(self, request: Request) -> None:
        self._tool_call_ended(request)
        entry = self._entry(request)
        entry.failure = request.failure or "failed"
        if entry.blocked:
            return
        if "csp" in entry.failure.lower():
            self._csp_refused.add(request.url)
            entry.blocked = True
            entry.reason = "csp: refused by the page's Content-Security-Policy"
        elif not self.is_allowed(request.url):
            # Made by the browser itself (speculative prefetch/prerender), below the request filter.
            entry.blocked = True
            entry.reason = f"browser network: outside the artifact origin, refused ({entry.failure})"

    # ---- page events -------------------------------------------------------------------------------------

    def _watch_page(self, page: Page) -> None:
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)
        page.on("dialog", self._on_dialog)
        page.on("download", self._on_download)
        if page is self.page:
            page.on("framenavigated", self._on_navigated)

    def _on_navigated(self, frame: Any) -> None:
        if frame.parent_frame is None and not self.is_allowed(frame.url):
            self._left_origin(frame.url)

    def _on_console(self, message: ConsoleMessage) -> None:
        if len(self.console) >= _MAX_CONSOLE_ENTRIES or self._console_bytes >= _MAX_CONSOLE_BYTES:
            self.console_dropped += 1
            if self.console_dropped == 1:  # stop the flood at its source: no more events are sent to us
                for page in self.context.pages:
                    page.remove_listener("console", self._on_console)
            return
        text = message.text[:_MAX_ERROR_CHARS]
        self._console_bytes += len(text)
        self.console.append({"type": message.type, "text": text, "location": dict(message.location)})

    def _on_page_error(self, error: PlaywrightError) -> None:
        text = error.stack or f"{error.name}: {error.message}"
        if len(self.page_errors) < _MAX_CONSOLE_ENTRIES:
            self.page_errors.append(text[:_MAX_ERROR_CHARS])

    async def _on_dialog(self, dialog: Dialog) -> None:
        # A dialog the init script did not answer in the page (beforeunload, one opened where it did not run):
        # recorded and accepted (prompt with its default), in either sandbox alike.
        if len(self.dialogs) < _MAX_REPORTS:
            self.dialogs.append({"type": dialog.type, "message": dialog.message[:_MAX_ERROR_CHARS]})
        try:
            await dialog.accept(dialog.default_value if dialog.type == "prompt" else None)
        except PlaywrightError:
            pass

    async def _on_download(self, download: Any) -> None:
        # Never saved (the context refuses downloads); what the page offered is recorded.
        if len(self.downloads) < _MAX_REPORTS:
            self.downloads.append({"url": download.url[:2000], "suggested_filename": download.suggested_filename[:300]})
        try:
            await download.cancel()
        except PlaywrightError:
            pass

    def _on_window_open(self, _event: Any) -> None:
        self._windows_opened += 1

    async def _on_new_page(self, page: Page) -> None:
        if page is self.page:
            return
        self._popups_seen += 1
        if len(self.popups) < _MAX_REPORTS:
            self.popups.append(page.url[:2000])
        self._watch_page(page)
        try:
            await page.close()
        except PlaywrightError:
            pass

    # ---- the API actors and evidence code use -----------------------------------------------------------

    async def goto(self) -> float:
        """(Re)load the artifact, wait for `load` plus settle_ms, zero the mutation counter; return seconds.

        Never waits for networkidle (pages that poll never reach it, PLATFORM.md). Navigation errors raise.
        A reload first waits until the first load is watch_ms old (watch_first_load): whatever reloads it (an
        actor, a live check), the first load is watched that long, so the visit may go on while it is watched.
        """
        await self.watch_first_load()
        started = time.monotonic()
        self.response_status = None
        try:  # Playwright's own timeout never fires when the browser died under the call (e.g. OOM-killed)
            response = await asyncio.wait_for(
                self.page.goto(self.url, wait_until="load", timeout=self.nav_timeout_ms),
                timeout=self.nav_timeout_ms / 1000 + 5)
        except asyncio.TimeoutError:
            self.note_unresponsive(f"a load did not finish within {self.nav_timeout_ms} ms")
            raise PlaywrightTimeoutError(f"navigation did not finish within {self.nav_timeout_ms} ms "
                                         "(browser busy or gone)") from None
        except PlaywrightTimeoutError:
            self.note_unresponsive(f"a load did not finish within {self.nav_timeout_ms} ms")
            raise
        except PlaywrightError as error:
            # The page gone under a load (its renderer crashed or was closed, e.g. over its memory cap) is the
            # page's runtime failure wherever in the visit it happens, not a check the artifact failed; a browser
            # that died is still infra (the engine asks the browser itself afterwards).
            if self.page.is_closed() or _PAGE_GONE.search(str(error)):
                self.note_unresponsive(f"the page was closed or crashed during a load: {str(error).splitlines()[0]}")
            raise
        self.response_status = response.status if response is not None else None
        if self._first_loaded_at is None:
            self._first_loaded_at = time.monotonic()
        if self.on_first_load is not None:
            loaded, self.on_first_load = self.on_first_load, None
            loaded()
        await self.settle()
        await self.reset_mutations()
        self._counting_since_load = True
        self._loads += 1
        self._load_mark = self._reset_mark
        return time.monotonic() - started

    async def reload_would_match(self) -> bool:
        """Whether reloading the artifact now would give this very page, so a live check may start on it instead
        (RulesJudge.run_live_checks: the page as loaded). True only for the session's one load, in its fresh
        context: the page is still at the artifact's URL, has not changed its DOM since the load's settle window
        ended (no mutation record of any kind), never called the tool bridge, and left nothing a reload would
        start from (storage of any kind, cookies, its window name or history state). Else, or when the page
        cannot say within a second: False."""
        if (self._loads != 1 or self._load_mark is None or self.page.url != self.url or self.left_origin
                or self._tool_bridge_active_at != float("-inf")):
            return False
        try:
            facts, cookies = await asyncio.wait_for(
                asyncio.gather(self.observe(_CARRIED_JS), self.context.cookies()), timeout=_RELOAD_CHECK_S)
        except (PlaywrightError, asyncio.TimeoutError):
            return False
        if not isinstance(facts, list) or len(facts) != 3:
            return False
        origin, total, found = facts
        return [origin, total] == list(self._load_mark) and found == "" and not cookies

    async def watch_first_load(self) -> None:
        """Wait until the session's first load is watch_ms old, while it is still the page shown (no later load):
        the visit then has watched the page for at least that long wherever it runs, so whether the page left its
        artifact or hung in that time (capture.note_visit_failure) does not depend on how quickly the capture, the
        actor and the live checks went. Returns at once when it is that old already, or was reloaded (goto waits
        here before a reload)."""
        if self._first_loaded_at is None or self._loads != 1:
            return
        remaining = self.watch_ms / 1000 - (time.monotonic() - self._first_loaded_at)
        if remaining > 0:
            await asyncio.sleep(remaining)
            try:  # and whether it still answers (a hung page is noted by the read's deadline)
                await self.observe("() => true")
            except PlaywrightError:
                pass

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
            await self.observe(_SETTLE_UNTIL_MUTATION_JS, [window, self.character_data])
        except PlaywrightError:
            remaining = window / 1000 - (time.monotonic() - started)
            if remaining > 0:
                await asyncio.sleep(remaining)

    async def evaluate(self, expression: str, arg: Any = None) -> Any:
        """page.evaluate (in the page's own world) with a deadline (nav_timeout_ms): Playwright's has none, and a
        page stuck in an endless loop would otherwise hang the harness. A miss raises Playwright's TimeoutError.
        For acting on the page; what a verdict reads goes through `observe`."""
        return await self._answered(self.page.evaluate(expression, arg))

    async def observe(self, function: str, arg: Any = None) -> Any:
        """`function(arg)` (JavaScript source; `arg` JSON) run in the harness's own world of the current document
        (runner/browser/harness_world.py), with evaluate's deadline: the same DOM, but built-ins, DOM getters and
        timers the page cannot redefine, and `__genui`, the mutation counter the page cannot reach. A verdict, an
        IR or a screenshot key reads through here. A page without the harness world (a session not made by
        prepare) is read in its own world."""
        if self._world is None:
            return await self.evaluate(function, arg)
        return await self._answered(self._world.evaluate(function, arg))

    async def _answered(self, call: Any) -> Any:
        try:
            return await asyncio.wait_for(call, timeout=self.nav_timeout_ms / 1000)
        except asyncio.TimeoutError:
            self.note_unresponsive(f"a read of the page got no answer within {self.nav_timeout_ms} ms")
            raise PlaywrightTimeoutError(
                f"page did not answer within {self.nav_timeout_ms} ms (renderer busy or hung)"
            ) from None

    def note_unresponsive(self, what: str) -> None:
        """Record that the page stopped answering the harness (a load or a read past its deadline, a live check
        past its own): whenever in the visit it happens, the slot is the page's runtime failure
        (runner/browser/capture.py, visit_failure), so the bucket does not depend on which stage was slowest."""
        if len(self.unresponsive) < _MAX_REPORTS:
            self.unresponsive.append(what[:500])

    async def reset_mutations(self) -> None:
        read = await self.observe(_RESET_JS)
        still, self._reset_mark = read if isinstance(read, list) and len(read) == 2 else (None, None)
        self._counting_since, self._counting_since_load = time.monotonic(), False
        self._still_before_reset = (still[0] / 1000, still[1] / 1000) if still else (0.0, 0.0)

    def idle_window_s(self, *, character_data: bool | None = None) -> float | None:
        """The length of the window the mutation counter covers since the last load: the time since the load
        zeroed it, plus how long the page had been still (no mutation of the counted kinds) before that, so
        a count of 0 means none in all that time. None when the counter was zeroed again since (or no page
        was loaded here). Whether the page was only read in that time (the evidence capture) is for the
        caller to know: actions through `page` do not zero the counter."""
        if not self._counting_since_load:
            return None
        with_text = self.character_data if character_data is None else character_data
        still = self._still_before_reset[1 if with_text else 0]
        return time.monotonic() - self._counting_since + still

    async def mutation_count(self, *, character_data: bool | None = None) -> int:
        """Mutation records since the last reset: childList and attributes (I-WebGenBench App. B.1), plus
        characterData (text-node rewrites) when `character_data` (None: the session's setting) is true."""
        with_text = self.character_data if character_data is None else character_data
        value = await self.observe(_COUNT_JS, with_text)
        return int(value or 0)

    async def screenshot(self, path: Path, *, full_page: bool = False, reuse_unchanged: bool = False) -> None:
        """A screenshot into `path`. `reuse_unchanged` (viewport only): the last viewport shot's PNG again when
        it was taken under REUSE_VIEW_S ago of this document, at this scroll position and size, and not one DOM
        mutation of any kind has happened since (e.g. the final capture right after an actor's last shot)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        png = await self.full_page_png() if full_page else await self.viewport_png(reuse_unchanged=reuse_unchanged)
        path.write_bytes(png)

    async def viewport_png(self, *, reuse_unchanged: bool = False) -> bytes:
        """The viewport as a PNG: the pixels of Playwright's `screenshot(animations="disabled", caret="hide")`,
        encoded for speed like full_page_png (measured: 17 ms instead of 33 ms for a 1280 x 800 view, and no
        style element added to the page, which Playwright's caret hiding does and a mutation observer sees).
        `reuse_unchanged`: see screenshot()."""
        size = await self.observe(_PAGE_SIZE_JS)
        if size is None or size["animations"]:
            self._last_view = None
            return await self.page.screenshot(full_page=False, animations="disabled", caret="hide",
                                              timeout=self.nav_timeout_ms, type="png")
        view = tuple(size["view"])
        last = self._last_view
        if (reuse_unchanged and last is not None and last[0] == view and view[-1] is not None
                and time.monotonic() - last[1] < REUSE_VIEW_S):
            return last[2]
        png = await self._fast_png({})
        # Keyed by what was read before the capture: a change during it only makes the next shot a fresh one.
        self._last_view = (view, time.monotonic(), png)
        return png

    async def full_page_png(self) -> bytes:
        """A full-page PNG: the pixels of Playwright's `screenshot(full_page=True, animations="disabled",
        caret="hide")`, encoded for speed. Playwright encodes a tall page with the browser's default PNG
        compression, which costs more than the raster itself (measured: a 1280 x 4000 page, 1.5 s against
        0.8 s, bench/long_page.py) and a decode twice as slow. Here the same capture (Page.captureScreenshot
        of the document rectangle beyond the viewport, as Playwright sends it) asks for the fast encoder:
        the same pixels (tested), a larger file. The frozen CSS motion and transparent caret of the init
        script stand in for Playwright's screenshot preparation; a page with running Web Animations (which
        only that preparation stops) takes Playwright's own path."""
        size = await self.observe(_PAGE_SIZE_JS)
        self.full_page_clipped = None
        if size is None or size["animations"]:
            if size is not None and size["height"] > MAX_FULL_PAGE_HEIGHT:
                self.full_page_clipped = (size["height"], MAX_FULL_PAGE_HEIGHT)
                clip = {"x": 0, "y": 0, "width": min(size["width"], MAX_FULL_PAGE_WIDTH),
                        "height": MAX_FULL_PAGE_HEIGHT}
                return await self.page.screenshot(full_page=True, clip=clip, animations="disabled", caret="hide",
                                                  timeout=self.nav_timeout_ms, type="png")
            return await self.page.screenshot(full_page=True, animations="disabled", caret="hide",
                                              timeout=self.nav_timeout_ms, type="png")
        fits = size["width"] <= size["viewport_width"] and size["height"] <= size["viewport_height"]
        height = min(size["height"], MAX_FULL_PAGE_HEIGHT)
        self.full_page_clipped = (size["height"], height) if height < size["height"] else None
        clip = {"x": 0, "y": 0, "width": min(size["width"], MAX_FULL_PAGE_WIDTH), "height": height, "scale": 1}
        return await self._fast_png({"clip": clip, "captureBeyondViewport": not fits})

    async def _fast_png(self, options: dict[str, Any]) -> bytes:
        """Page.captureScreenshot with the fast PNG encoder, over this page's own CDP session (kept open)."""
        if self._cdp is None:  # a session not made by prepare()
            self._cdp = await self.context.new_cdp_session(self.page)
        shot = await asyncio.wait_for(
            self._cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True, **options}),
            timeout=self.nav_timeout_ms / 1000)
        return base64.b64decode(shot["data"])

    async def visible_text(self) -> str:
        """The body's innerText, read so that the page cannot fake it (in the harness world)."""
        text = await self.observe(_TEXT_JS)
        return text if isinstance(text, str) else ""

    async def snapshot(self) -> PageSnapshot:
        """The page's HTML and visible text (read so that the page cannot fake them), whether it fits the
        viewport and whether anything is visible, in one round trip (in the harness world)."""
        facts = await self.observe(_SNAPSHOT_JS)
        return PageSnapshot(html=str(facts["html"]), text=str(facts["text"]), fits_viewport=bool(facts["fits"]),
                            visible=bool(facts["visible"]))

    async def content(self) -> str:
        """The document's HTML as Playwright's page.content() gives it (doctype and root element), read so that
        the page cannot fake it (in the harness world)."""
        return str(await self.observe(_HTML_JS))
