"""Test support: a threaded stdlib HTTP server on 127.0.0.1 serving in-memory pages, with a hit log."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


class StaticSite:
    """Serves `pages` ({path: html or (content_type, bytes)}); unknown paths get 404. Records every path hit.
    A path added with `delay_s` answers that much later (a slow backend)."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[str, bytes, int]] = {}
        self.delays: dict[str, float] = {}
        self.hits: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (stdlib naming)
                path = urlsplit(self.path).path
                site.hits.append(self.path)
                time.sleep(site.delays.get(path, 0.0))
                page = site.pages.get(path)
                if page is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                content_type, body, status = page
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET  # noqa: N815

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def add(
        self, path: str, body: str | bytes, content_type: str = "text/html; charset=utf-8", status: int = 200,
        delay_s: float = 0.0,
    ) -> str:
        self.delays[path] = delay_s
        self.pages[path] = (content_type, body.encode() if isinstance(body, str) else body, status)
        return self.url(path)

    def url(self, path: str) -> str:
        return self.base + path

    def start(self) -> "StaticSite":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
