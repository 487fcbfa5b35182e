"""The viewer's web app (FastAPI + Jinja2): shared pieces every page uses, and the assembly of the pages.

Pages live in their own modules, each with an APIRouter: runs_pages (runs, comparison, model profiles),
episode_pages (an episode's filmstrip), turn_pages (one turn's detail). A mode (annotation, FlowEval's arena)
is an object its owner builds (ViewMode: a name, a title for the nav, a router) and hands to ViewState.modes;
the app mounts its router, so a benchmark's mode stays in the benchmark's folder. What the pages share
(ViewState, state, render, the templates) is in runner/view/pages.py: page modules import that, never this.
Evidence files are served from the run dirs under /files/{run}/{path} (never outside a run dir) with a
Content-Security-Policy of their own that runs nothing (a saved dom.html is a model's page); thumbnails of
screenshots under /thumbs/{width}/{run}/{path} (width one of THUMB_WIDTHS) are made once and kept in memory.
Every URL is a plain path (no query string carries content) so the static export can write each one as a file.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.base import BaseHTTPMiddleware

from runner.view.catalog import UnknownRun
from runner.view.figures import PaperFigures
from runner.view.inert import served_media_type
# What pages use lives in a leaf module, so a page module never imports this one (which includes its router).
from runner.view.pages import HERE, ViewMode, ViewState, render, state, templates

__all__ = ["FILE_CSP", "PAGE_CSP", "THUMB_WIDTHS", "ViewMode", "ViewState", "create_app", "render", "serve", "state",
           "templates"]

# The pages' own scripts and styles only; images from the app (evidence, thumbnails) and data: URIs.
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'")
# Evidence files are model output: shown, never run (sandbox: no script, no same-origin access).
FILE_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox"
THUMB_WIDTHS = (160, 320, 640)


class _SecurityHeaders(BaseHTTPMiddleware):
    async def dispatch(self, request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        is_file = request.url.path.startswith("/files/")
        response.headers.setdefault("Content-Security-Policy", FILE_CSP if is_file else PAGE_CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        # same-origin, not no-referrer: under no-referrer a form post's Origin is "null" (_SameSiteOnly refuses it)
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


class _SameSiteOnly(BaseHTTPMiddleware):
    """Other web pages open in the same browser must not use the viewer: a request naming another host (DNS
    rebinding) is refused while the app listens on loopback (serve sets app.state.allowed_hosts), and a write
    (a label, a vote) from another origin is refused always (a cross-site form post)."""

    async def dispatch(self, request: Request, call_next: Any) -> Response:
        host_header = request.headers.get("host", "")
        allowed = request.app.state.allowed_hosts
        if allowed is not None and urlsplit(f"//{host_header}").hostname not in allowed:
            return PlainTextResponse(f"the viewer answers on {', '.join(sorted(allowed))} only", status_code=421)
        origin = request.headers.get("origin")
        if request.method not in {"GET", "HEAD", "OPTIONS"} and origin is not None and urlsplit(origin).netloc != host_header:
            return PlainTextResponse(f"cross-origin write refused (origin {origin})", status_code=403)
        return await call_next(request)


class Thumbnails:
    """Screenshot thumbnails as JPEG, made on first request and kept (bounded: oldest dropped first)."""

    def __init__(self, max_items: int = 4096) -> None:
        self._cache: dict[tuple[Path, int, float], bytes] = {}
        self._lock = threading.Lock()
        self._max = max_items

    def get(self, path: Path, width: int) -> bytes:
        from PIL import Image

        key = (path, width, path.stat().st_mtime)
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        with Image.open(path) as image:
            image.thumbnail((width, width * 4))
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, "JPEG", quality=80)
        data = buffer.getvalue()
        with self._lock:
            if len(self._cache) >= self._max:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = data
        return data


files_router = APIRouter()


@files_router.get("/files/{run_id}/{relative:path}")
def evidence_file(request: Request, run_id: str, relative: str) -> FileResponse:
    path = state(request).catalog.evidence_file(run_id, relative)
    # Raster images as images, archives as downloads, everything else as plain text (runner/view/inert.py): a
    # model's HTML, SVG or XML is shown as source, never rendered at the app's origin, whatever its name's case.
    return FileResponse(path, media_type=served_media_type(path.name))


@files_router.get("/thumbs/{width}/{run_id}/{relative:path}")
def thumbnail(request: Request, width: int, run_id: str, relative: str) -> Response:
    if width not in THUMB_WIDTHS:
        raise UnknownRun(f"thumbnail width {width} is not one of {THUMB_WIDTHS}")
    path = state(request).catalog.evidence_file(run_id, relative)
    if path.suffix.lower() not in {".png", ".jpg", ".jpeg", ".webp"}:
        raise UnknownRun(f"{relative!r} is not an image")
    data = request.app.state.thumbnails.get(path, width)
    return Response(data, media_type="image/jpeg", headers={"Cache-Control": "max-age=3600"})


def create_app(view: ViewState) -> FastAPI:
    from runner.view import episode_pages, runs_pages, turn_pages

    app = FastAPI(title="genui-runner viewer", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.view = view
    app.state.thumbnails = Thumbnails()
    app.state.figures = PaperFigures()
    app.add_middleware(_SecurityHeaders)
    app.add_middleware(_SameSiteOnly)
    app.state.allowed_hosts = None  # in-process clients (the export's crawl, tests); serve() narrows it
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.exception_handler(UnknownRun)
    async def unknown(request: Request, error: UnknownRun) -> Response:
        if request.url.path.startswith(("/api/", "/files/", "/thumbs/")):
            return JSONResponse({"detail": str(error)}, status_code=404)
        return templates.TemplateResponse(request, "not_found.html", {"view": view, "message": str(error)}, status_code=404)

    for module in (runs_pages, episode_pages, turn_pages):
        app.include_router(module.router)
    for mode in view.modes.values():
        app.include_router(mode.router)
    app.include_router(files_router)
    return app


@contextmanager
def serve(app: FastAPI, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve the app on a thread; yields its base URL (port 0: a free port)."""
    import uvicorn

    # On loopback only loopback names are answered; bound elsewhere on purpose, any name the user reaches it by.
    app.state.allowed_hosts = LOOPBACK_NAMES if host in LOOPBACK_NAMES else None
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True, name="viewer")
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the viewer did not start on {host}:{port}")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def serve_until_interrupted(app: FastAPI, *, host: str, port: int, announce: Callable[[str], None]) -> None:
    """A command's foreground server: serve the app, hand its base URL to `announce`, stop on Ctrl-C."""
    with serve(app, host=host, port=port) as url:
        announce(url)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
