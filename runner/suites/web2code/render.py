"""Deterministic full-page rendering of a static page: V(H) of MT-Web2Code (§3.1, eq. 1-2).

The paper needs "a deterministic rendering function under a fixed coordinate system" (§3.1) and three
renders per micro-level turn "within a shared coordinate system" (§3.5). Here that is:
- one of the run's BrowserPools (runner/browser/launch.py; the suite checks it out of its context, it
  never launches a browser): system Chromium with the platform flags plus the determinism flags
  (--font-render-hinting=none, --disable-lcd-text, --force-color-profile=srgb, --hide-scrollbars, ...),
  a fresh context per page with this module's fixed viewport 1280x800 at device scale factor 1 (set per
  context, whatever the run's browser settings say), reduced motion, and CSS animations/transitions
  frozen by PageSession's init script;
- the page served by a tiny HTTP server on 127.0.0.1 (StaticSite) in the browser's network namespace
  (a confined browser sees only its own loopback), so a page given as an HTML string can use the asset
  folder of its golden page without copying files anywhere;
- every request to another origin blocked and recorded (PageSession's route filter);
- a full-page PNG taken after `load`, fonts ready and the pool's settle time.

The one place that knows about the browser is `open_rendered_page`; swap it to change the engine.
"""

from __future__ import annotations

import asyncio
import mimetypes
import socket
import threading
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from runner.browser.confine import socket_in_namespace
from runner.browser.launch import BrowserPool, BrowserSettings, Viewport
from runner.browser.session import PageSession

# Fixed coordinate system of every render (the task brief; BrowserSettings' defaults).
VIEWPORT_WIDTH = 1280
VIEWPORT_HEIGHT = 800
DEVICE_SCALE_FACTOR = 1.0
RENDER_VIEWPORT = Viewport(VIEWPORT_WIDTH, VIEWPORT_HEIGHT, DEVICE_SCALE_FACTOR)

_EXTRA_TYPES = {".svg": "image/svg+xml", ".css": "text/css", ".js": "text/javascript", ".webp": "image/webp"}


def render_settings(**overrides: object) -> BrowserSettings:
    """BrowserSettings for web2code renders: the fixed 1280x800 @1x coordinate system."""
    values: dict[str, object] = {
        "viewport_width": VIEWPORT_WIDTH,
        "viewport_height": VIEWPORT_HEIGHT,
        "device_scale_factor": DEVICE_SCALE_FACTOR,
    }
    values.update(overrides)
    return BrowserSettings(**values)


@dataclass(frozen=True)
class PageSource:
    """What to render: a folder with an entry file, or an HTML string using a folder's assets."""

    root: Path
    entry: str = "index.html"
    html: str | None = None  # when set, served as `entry` instead of the file on disk

    @classmethod
    def folder(cls, root: Path | str, entry: str = "index.html") -> "PageSource":
        return cls(Path(root), entry)

    @classmethod
    def from_html(cls, html: str, assets: Path | str, entry: str = "index.html") -> "PageSource":
        return cls(Path(assets), entry, html)


class StaticSite:
    """A tiny read-only HTTP server on 127.0.0.1 (random port) for one folder, in a daemon thread.

    `overrides` maps URL paths (e.g. "/index.html") to bodies served instead of files. Paths that
    leave the folder, and methods other than GET/HEAD, are refused. `network`: the network namespace
    (a /proc/PID/ns/net path, BrowserPool.network_namespace) whose loopback it listens on; None: the host's.
    """

    def __init__(self, root: Path | str, overrides: Mapping[str, str | bytes] | None = None, *,
                 network: str | None = None) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise FileNotFoundError(f"asset folder not found: {self.root}")
        self.overrides = {
            k if k.startswith("/") else "/" + k: v.encode("utf-8") if isinstance(v, str) else v
            for k, v in (overrides or {}).items()
        }
        if network is not None and not network.startswith("/"):
            raise RuntimeError(f"MT-Web2Code renders need a browser on this host; the run's browser is in "
                               f"container {network[:12]} (with sandbox=docker set "
                               "sandbox.options.browser_in_container=false)")
        self.network = network
        self.requested: list[str] = []  # every path asked for, in order (for debugging missing assets)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def origin(self) -> str:
        if self._server is None:
            raise RuntimeError("StaticSite is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, path: str = "index.html") -> str:
        return f"{self.origin}/{path.lstrip('/')}"

    def start(self) -> "StaticSite":
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_HEAD(self) -> None:
                self._serve(body=False)

            def do_GET(self) -> None:
                self._serve(body=True)

            def _serve(self, *, body: bool) -> None:
                path = unquote(urlsplit(self.path).path) or "/"
                site.requested.append(path)
                if path.endswith("/"):
                    path += "index.html"
                data = site._lookup(path)
                if data is None:
                    self.send_error(HTTPStatus.NOT_FOUND)
                    return
                ctype = _EXTRA_TYPES.get(Path(path).suffix.lower()) or (
                    mimetypes.guess_type(path)[0] or "application/octet-stream"
                )
                if ctype.startswith("text/") or ctype.endswith("+xml"):
                    ctype += "; charset=utf-8"
                self.send_response(HTTPStatus.OK)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                if body:
                    self.wfile.write(data)

        if self.network is None:
            self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        else:  # the listening socket is made inside the browser's namespace, then served from here
            self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
            self._server.socket.close()
            self._server.socket = socket_in_namespace(self.network, socket.AF_INET, socket.SOCK_STREAM)
            self._server.server_bind()
            self._server.server_activate()
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        daemon=True, name="web2code-static-site")
        self._thread.start()
        return self

    def _lookup(self, path: str) -> bytes | None:
        if path in self.overrides:
            return self.overrides[path]
        target = (self.root / path.lstrip("/")).resolve()
        if not target.is_relative_to(self.root) or not target.is_file():
            return None
        return target.read_bytes()

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "StaticSite":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class RenderResult:
    png: bytes
    width: int
    height: int
    seconds: float
    blocked: list[str] = field(default_factory=list)  # external requests the page tried (all refused)
    missing: list[str] = field(default_factory=list)  # local URLs that answered 404
    page_errors: list[str] = field(default_factory=list)


@asynccontextmanager
async def open_rendered_page(pool: BrowserPool, source: PageSource) -> AsyncIterator[PageSession]:
    """Serve `source` on 127.0.0.1, open it in a fresh context and wait until it is ready to shoot."""
    overrides = {source.entry: source.html} if source.html is not None else {}
    site = StaticSite(source.root, overrides, network=pool.network_namespace)
    await asyncio.to_thread(site.start)
    try:
        async with pool.session(site.url(source.entry), viewport=RENDER_VIEWPORT) as session:
            await session.goto()
            # Fonts and images of a static page: `load` covers images; fonts may settle after it.
            await session.page.evaluate("() => document.fonts ? document.fonts.ready.then(() => true) : true")
            yield session
    finally:
        await asyncio.to_thread(site.close)


async def screenshot_png(session: PageSession) -> bytes:
    """Full-page PNG of the current page (animations disabled, caret hidden; PageSession.full_page_png)."""
    return await session.full_page_png()


def _png_size(png: bytes) -> tuple[int, int]:
    # IHDR: width and height are big-endian u32 at bytes 16..24 of every PNG.
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def session_problems(session: PageSession) -> tuple[list[str], list[str]]:
    """(blocked external URLs, local URLs that 404'd) seen by a session so far."""
    blocked = [r.url for r in session.network if r.blocked]
    missing = [r.url for r in session.network if r.status == 404]
    return blocked, missing


async def render_page(pool: BrowserPool, source: PageSource, out: Path | None = None) -> RenderResult:
    """Render `source` to a full-page PNG (written to `out` when given)."""
    started = time.monotonic()
    async with open_rendered_page(pool, source) as session:
        png = await screenshot_png(session)
        blocked, missing = session_problems(session)
        errors = list(session.page_errors)
    if out is not None:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(png)
    width, height = _png_size(png)
    return RenderResult(png, width, height, time.monotonic() - started, blocked, missing, errors)
