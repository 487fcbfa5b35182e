"""A small local web page server (stdlib only): routes to handlers, bound to 127.0.0.1, one thread per request.

For the project's local tools that a person uses in a browser (the annotation page, the arena page). Routes are
(method, path) pairs; a path ending in "/*" matches every path under it and its handler gets the rest;
any other path matches only itself.
Every response carries a Content-Security-Policy: the pages show untrusted text (model answers, page
content), so nothing but the page's own scripts, styles and images may load.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["CSP", "LocalPage", "Request", "Response", "json_response"]

CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self'; connect-src 'self'"
MAX_BODY = 1024 * 1024


@dataclass
class Request:
    rest: str  # the path after a prefix route's "/" ("" for an exact route), not normalised: check it
    query: dict[str, str]
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class Response:
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def json_response(payload: Any, status: int = 200) -> Response:
    return Response(status, "application/json", json.dumps(payload).encode())


Handler = Callable[[Request], Response]


class LocalPage:
    """`routes`: {("GET", "/"): handler, ("GET", "/files/*"): handler, ("POST", "/api/x"): handler}."""

    def __init__(self, routes: dict[tuple[str, str], Handler], *, host: str = "127.0.0.1", port: int = 0,
                 csp: str = CSP) -> None:
        """`csp`: the page's Content-Security-Policy (a page that frames other local servers widens frame-src)."""
        self.routes = routes
        self.csp = csp
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/"

    def _route(self, method: str, path: str) -> tuple[Handler, str] | None:
        if (method, path) in self.routes:
            return self.routes[(method, path)], ""
        prefixes = [p for (m, p) in self.routes if m == method and p.endswith("/*") and path.startswith(p[:-1])]
        if not prefixes:
            return None
        prefix = max(prefixes, key=len)
        return self.routes[(method, prefix)], path[len(prefix) - 1:]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        page = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet: the tool prints its own lines
                pass

            def _answer(self, method: str) -> None:
                parts = urlsplit(self.path)
                found = page._route(method, unquote(parts.path))
                if found is None:
                    response = Response(404, "text/plain", b"not found")
                else:
                    length = int(self.headers.get("Content-Length") or 0)
                    if length > MAX_BODY:
                        response = Response(413, "text/plain", b"request too large")
                    else:
                        body = self.rfile.read(length) if length else b""
                        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
                        handler, rest = found
                        response = handler(Request(rest, query, body))
                self.send_response(response.status)
                self.send_header("Content-Type", response.content_type)
                self.send_header("Content-Length", str(len(response.body)))
                self.send_header("Content-Security-Policy", page.csp)
                self.send_header("Cache-Control", "no-store")
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(response.body)

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

        return Handler

    def start(self) -> str:
        """Serve in a background thread; returns the page's URL."""
        self._thread = threading.Thread(target=self._server.serve_forever, name="local-page", daemon=True)
        self._thread.start()
        return self.url

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def close(self) -> None:
        self._server.shutdown() if self._thread is not None else None
        self._server.server_close()
