"""Artifact server: serves a built dist folder with a strict CSP, plus the optional tool and resource bridge.

Runs inside bubblewrap with no network; it listens on a socket the parent bound on 127.0.0.1 and
passed in by file descriptor. Standard library only, so it can run from any path:
    python server.py --root DIR (--fd N | --port P) [--bridge CONFIG.json --bridge-runtime RUNTIME.py] [--wait-go]

With --wait-go it starts, imports and takes its socket, then waits for one line on stdin before it serves (a spare
server started ahead, runner/sandbox/spare_server.py); end of input instead: it exits without serving.

The tool bridge's semantics are the suite's: RUNTIME.py (the suite's `ToolBridge.runtime`, shipped beside this
file; standard library plus jsonschema) defines `create_bridge(config)`, whose object (`Bridge`) answers the
bridge routes below. This file only routes them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

# The tool bridge's routes: the page's browser session also reads them, to know when the page's calls are done.
TOOLS_PREFIX = "/__tools/"
RESOURCES_PREFIX = "/__resources/"
BRIDGE_PREFIXES = (TOOLS_PREFIX, RESOURCES_PREFIX)
# The policy keeps the page's requests to its own origin (every fetch directive: 'self' and the schemes that never
# leave the browser, data: and blob:; forms post only there; no <base> elsewhere) and so makes each refused
# request visible as a report (PageSession's network log). It takes nothing else from what an ordinary page may do:
# eval and new Function (run-time template compilers, expression-compiling chart libraries), WebAssembly, inline
# and blob scripts and workers, same-origin frames. None of those reaches anything the sandbox does not already
# hold in: no network but the artifact server, no host files, bounded CPU and memory (docs/threat-model.md).
_LOCAL = "'self' data: blob:"
CSP = (
    f"default-src {_LOCAL}; script-src {_LOCAL} 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval'; "
    f"style-src {_LOCAL} 'unsafe-inline'; img-src {_LOCAL}; font-src {_LOCAL}; media-src {_LOCAL}; "
    f"connect-src {_LOCAL}; worker-src {_LOCAL}; frame-src {_LOCAL}; object-src {_LOCAL}; "
    "base-uri 'self'; form-action 'self'"
)
MIME_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".txt": "text/plain; charset=utf-8",
    ".wasm": "application/wasm",
}
MAX_BODY_BYTES = 1024 * 1024


class Bridge(Protocol):
    """What a tool bridge runtime's `create_bridge(config)` returns; every method answers (HTTP status, body)
    or a list, and logs what it must."""

    def list_tools(self) -> list[dict[str, Any]]: ...

    def list_resources(self) -> list[dict[str, Any]]: ...

    def call(self, tool: Any, arguments: Any, scenario: Any = "default") -> tuple[int, dict[str, Any]]: ...

    def read_resource(self, uri: Any, scenario: Any = None) -> tuple[int, dict[str, Any]]: ...


def load_bridge(runtime: Path, config: dict[str, Any]) -> Bridge:
    """The bridge from the runtime file the suite gave (shipped beside this one): its `create_bridge(config)`."""
    spec = importlib.util.spec_from_file_location("genui_tool_bridge", runtime)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the tool bridge runtime {runtime}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # registered before it runs, as an import would
    spec.loader.exec_module(module)
    return module.create_bridge(config)


class ArtifactHandler(BaseHTTPRequestHandler):
    server_version = "genui-artifact"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    root: Path
    bridge: Bridge | None = None

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        sys.stderr.write("%s %s\n" % (self.address_string(), format % args))

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        pass  # no access log: the server lives under a file-size rlimit; errors are still logged

    def end_headers(self) -> None:
        # Here rather than in _send so stdlib error pages (400, 501, ...) carry the policy too.
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def _send(self, status: int, body: bytes, content_type: str, *, head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def _not_found(self, head: bool = False) -> None:
        self._send(404, b"not found\n", "text/plain; charset=utf-8", head=head)

    def _resolve(self, raw_path: str) -> Path | None:
        path = unquote(urlsplit(raw_path).path)
        if "\x00" in path or "\\" in path:
            return None
        parts = [p for p in path.split("/") if p]
        if any(p in ("..", ".") for p in parts):
            return None
        candidate = self.root.joinpath(*parts) if parts else self.root
        if candidate.is_dir():
            if parts:  # no directory listing and no implicit index below the root
                return None
            candidate = candidate / "index.html"
        try:
            real = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if not real.is_file() or (real != self.root and self.root not in real.parents):
            return None
        return real

    def _serve_file(self, head: bool) -> None:
        if urlsplit(self.path).path.startswith(TOOLS_PREFIX):
            return self._tools_get(head)
        if urlsplit(self.path).path.startswith(RESOURCES_PREFIX):
            return self._resources_get(head)
        target = self._resolve(self.path)
        if target is None:
            return self._not_found(head)
        content_type = MIME_TYPES.get(target.suffix.lower(), "application/octet-stream")
        self._send(200, target.read_bytes(), content_type, head=head)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._serve_file(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._serve_file(head=True)

    def _tools_get(self, head: bool) -> None:
        if self.bridge is None or urlsplit(self.path).path != TOOLS_PREFIX + "list":
            return self._not_found(head)
        try:
            self._send_json(200, {"tools": self.bridge.list_tools()})
        except Exception as exc:
            self._send_json(500, {"error": f"{type(exc).__name__}: {exc}"})

    def _resources_get(self, head: bool) -> None:
        if self.bridge is None or urlsplit(self.path).path != RESOURCES_PREFIX + "list":
            return self._not_found(head)
        self._send_json(200, {"resources": self.bridge.list_resources()})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            return self._send_json(413, {"error": "request body too large"})
        raw = self.rfile.read(length) if length else b""
        route = urlsplit(self.path).path
        if self.bridge is None or route not in (TOOLS_PREFIX + "call", RESOURCES_PREFIX + "read"):
            return self._send_json(404, {"error": "not found"})
        try:
            payload = json.loads(raw or b"{}")
            if not isinstance(payload, dict):
                raise ValueError("body must be a JSON object")
        except ValueError as exc:
            return self._send_json(400, {"error": f"bad request body: {exc}"})
        if route == RESOURCES_PREFIX + "read":
            status, body = self.bridge.read_resource(payload.get("uri"), payload.get("scenario"))
        else:
            status, body = self.bridge.call(payload.get("tool"), payload.get("arguments", {}),
                                            payload.get("scenario", "default"))
        self._send_json(status, body)


class InheritedSocketServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, sock: socket.socket, handler: type[BaseHTTPRequestHandler]):
        super().__init__(sock.getsockname()[:2], handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock


def make_handler(root: Path, bridge: Bridge | None) -> type[ArtifactHandler]:
    return type("BoundArtifactHandler", (ArtifactHandler,), {"root": root.resolve(), "bridge": bridge})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--fd", type=int, help="inherited listening socket")
    parser.add_argument("--port", type=int, help="bind 127.0.0.1:PORT instead (development)")
    parser.add_argument("--bridge", type=Path, help="tool bridge config (JSON)")
    parser.add_argument("--bridge-runtime", type=Path, help="the suite's tool bridge runtime (Python file)")
    parser.add_argument("--wait-go", action="store_true", help="serve only after one line on stdin")
    args = parser.parse_args(argv)
    if (args.bridge is None) != (args.bridge_runtime is None):
        parser.error("--bridge and --bridge-runtime go together")
    bridge = load_bridge(args.bridge_runtime, json.loads(args.bridge.read_text())) if args.bridge else None
    handler = make_handler(args.root, bridge)
    if args.fd is not None:
        sock = socket.socket(fileno=args.fd)
        sock.set_inheritable(False)
        server: ThreadingHTTPServer = InheritedSocketServer(sock, handler)
    else:
        server = ThreadingHTTPServer(("127.0.0.1", args.port or 0), handler)
    if args.wait_go and not sys.stdin.readline():
        server.server_close()
        return 0  # discarded unused
    print(f"serving {args.root} on {server.server_address}", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
