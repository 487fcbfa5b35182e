"""Artifact server: serves a built dist folder with a strict CSP, plus the optional tool and resource bridge.

Runs inside bubblewrap with no network; it listens on a socket the parent bound on 127.0.0.1 and
passed in by file descriptor. Standard library plus jsonschema only, so it can run from any path:
    python server.py --root DIR (--fd N | --port P) [--bridge CONFIG.json]
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import socket
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote, urlsplit

CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; frame-src 'none'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'"
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
RESOURCE_LOG_NAME = "resource_log.jsonl"  # beside the tool log (runner.suites.evogenui.resources)
RESOURCE_CONTRACT_KEYS = ("uri", "name", "mime_type", "description")


class ToolError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class ToolBridgeRuntime:
    """Backends, current state and the call log of one served artifact."""

    def __init__(self, config: dict[str, Any]):
        self.backends_path = Path(config["backends_path"])
        self.fixture_ids: dict[str, str] = dict(config["fixture_ids"])
        self.log_out = Path(config["log_out"])
        self.state_out = Path(config["state_out"])
        self.extra = config.get("extra") or {}
        # Public resources (uri -> contract + contents), read-only; every read is logged beside the tool log.
        self.resources: dict[str, dict[str, Any]] = dict(self.extra.get("resources") or {})
        self.resource_log_out = self.log_out.with_name(RESOURCE_LOG_NAME)
        self.resource_seq = 0
        state_in = Path(config["state_in"])
        self.state: dict[str, Any] = json.loads(state_in.read_text()) if state_in.exists() else {}
        if not isinstance(self.state, dict):
            raise ValueError("state_in must hold a JSON object")
        self.seq = 0
        self.lock = threading.Lock()
        self._modules: dict[str, ModuleType] = {}
        self._write_state()

    def module(self, fixture_id: str) -> ModuleType:
        if fixture_id not in self._modules:
            if "/" in fixture_id or fixture_id.startswith("."):
                raise ToolError(500, f"bad fixture id {fixture_id!r}")
            path = self.backends_path / f"{fixture_id}.py"
            spec = importlib.util.spec_from_file_location(f"genui_backend_{fixture_id}", path)
            if spec is None or spec.loader is None:
                raise ToolError(500, f"backend {fixture_id!r} not found")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self._modules[fixture_id] = module
        return self._modules[fixture_id]

    def schema(self, tool: str) -> dict[str, Any] | None:
        fixture_id = self.fixture_ids.get(tool)
        if fixture_id is None:
            return None
        return getattr(self.module(fixture_id), "TOOL_SCHEMAS", {}).get(tool)

    def list_tools(self) -> list[dict[str, Any]]:
        tools = []
        for name in sorted(self.fixture_ids):
            schema = self.schema(name) or {}
            tools.append(
                {
                    "name": name,
                    "description": schema.get("description", ""),
                    "inputSchema": schema.get("inputSchema", {"type": "object"}),
                    "outputSchema": schema.get("outputSchema", {}),
                }
            )
        return tools

    def call(self, tool: Any, arguments: Any) -> tuple[int, dict[str, Any]]:
        """Run one tool call; returns (HTTP status, response body). Every call is logged."""
        import jsonschema  # imported lazily: plain artifact serving needs no third-party code

        with self.lock:
            self.seq += 1
            entry: dict[str, Any] = {"seq": self.seq, "time": time.time(), "tool": tool, "arguments": arguments}
            before = copy.deepcopy(self.state)
            status, body = 200, {}
            try:
                schema = self.schema(tool) if isinstance(tool, str) else None
                if schema is None:
                    raise ToolError(404, f"unknown tool {tool!r}")
                if arguments is None:
                    arguments = {}
                try:
                    jsonschema.validate(arguments, schema.get("inputSchema", {"type": "object"}))
                except jsonschema.ValidationError as exc:
                    raise ToolError(400, f"invalid arguments for {tool}: {exc.message}") from exc
                module = self.module(self.fixture_ids[tool])
                result = module.invoke(tool, arguments, self.state)
                result = json.loads(json.dumps(result))  # must be JSON; also detaches it from state
                entry["result"] = result
                body = {"result": result}
                try:
                    jsonschema.validate(result, schema.get("outputSchema", {}))
                except jsonschema.ValidationError as exc:
                    # A backend bug, not the artifact's fault: the result still goes back, the log flags it.
                    entry["error"] = f"result violates outputSchema of {tool}: {exc.message}"
            except ToolError as exc:
                status, body = exc.status, {"error": str(exc)}
                entry["error"] = str(exc)
            except Exception as exc:  # backend crashed: report, keep serving
                status, body = 500, {"error": f"{type(exc).__name__}: {exc}"}
                entry["error"] = body["error"]
                entry["traceback"] = traceback.format_exc(limit=5)
            entry["state_before"] = before
            entry["state_after"] = copy.deepcopy(self.state)
            entry["ok"] = "error" not in entry
            with self.log_out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, default=str) + "\n")
            self._write_state()
            return status, body

    def list_resources(self) -> list[dict[str, Any]]:
        return [{key: entry[key] for key in RESOURCE_CONTRACT_KEYS if key in entry}
                for _, entry in sorted(self.resources.items())]

    def read_resource(self, uri: Any) -> tuple[int, dict[str, Any]]:
        """One resource read; returns (HTTP status, response body). Every read is logged, failed ones too."""
        with self.lock:
            self.resource_seq += 1
            entry: dict[str, Any] = {"seq": self.resource_seq, "time": time.time(), "uri": uri}
            resource = self.resources.get(uri) if isinstance(uri, str) else None
            if resource is None:
                status, body = 404, {"error": f"unknown resource {uri!r}"}
            elif "contents" not in resource:
                status, body = 404, {"error": f"resource {uri!r} has no contents in this task"}
            else:
                status = 200
                body = {"resource": {"uri": uri, "mime_type": resource.get("mime_type", ""),
                                     "contents": resource["contents"]}}
                entry["mime_type"] = resource.get("mime_type", "")
                entry["contents"] = resource["contents"]
            if status != 200:
                entry["error"] = body["error"]
            entry["ok"] = status == 200
            with self.resource_log_out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, default=str) + "\n")
            return status, body

    def _write_state(self) -> None:
        tmp = self.state_out.with_name(f".{self.state_out.name}.tmp")
        tmp.write_text(json.dumps(self.state, default=str))
        os.replace(tmp, self.state_out)


class ArtifactHandler(BaseHTTPRequestHandler):
    server_version = "genui-artifact"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    root: Path
    bridge: ToolBridgeRuntime | None = None

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
        if urlsplit(self.path).path.startswith("/__tools/"):
            return self._tools_get(head)
        if urlsplit(self.path).path.startswith("/__resources/"):
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
        if self.bridge is None or urlsplit(self.path).path != "/__tools/list":
            return self._not_found(head)
        try:
            self._send_json(200, {"tools": self.bridge.list_tools()})
        except Exception as exc:
            self._send_json(500, {"error": f"{type(exc).__name__}: {exc}"})

    def _resources_get(self, head: bool) -> None:
        if self.bridge is None or urlsplit(self.path).path != "/__resources/list":
            return self._not_found(head)
        self._send_json(200, {"resources": self.bridge.list_resources()})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            return self._send_json(413, {"error": "request body too large"})
        raw = self.rfile.read(length) if length else b""
        path = urlsplit(self.path).path
        if self.bridge is None or path not in ("/__tools/call", "/__resources/read"):
            return self._send_json(404, {"error": "not found"})
        try:
            payload = json.loads(raw or b"{}")
            if not isinstance(payload, dict):
                raise ValueError("body must be a JSON object")
        except ValueError as exc:
            return self._send_json(400, {"error": f"bad request body: {exc}"})
        if path == "/__resources/read":
            status, body = self.bridge.read_resource(payload.get("uri"))
        else:
            status, body = self.bridge.call(payload.get("tool"), payload.get("arguments", {}))
        self._send_json(status, body)


class InheritedSocketServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, sock: socket.socket, handler: type[BaseHTTPRequestHandler]):
        super().__init__(sock.getsockname()[:2], handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock


def make_handler(root: Path, bridge: ToolBridgeRuntime | None) -> type[ArtifactHandler]:
    return type("BoundArtifactHandler", (ArtifactHandler,), {"root": root.resolve(), "bridge": bridge})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--fd", type=int, help="inherited listening socket")
    parser.add_argument("--port", type=int, help="bind 127.0.0.1:PORT instead (development)")
    parser.add_argument("--bridge", type=Path, help="tool bridge config (JSON)")
    args = parser.parse_args(argv)
    bridge = ToolBridgeRuntime(json.loads(args.bridge.read_text())) if args.bridge else None
    handler = make_handler(args.root, bridge)
    if args.fd is not None:
        sock = socket.socket(fileno=args.fd)
        sock.set_inheritable(False)
        server: ThreadingHTTPServer = InheritedSocketServer(sock, handler)
    else:
        server = ThreadingHTTPServer(("127.0.0.1", args.port or 0), handler)
    print(f"serving {args.root} on {server.server_address}", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
