"""A scriptable OpenAI-compatible chat server on 127.0.0.1, for fault injection in end-to-end tests.

The run's live check (runner/run/live_check.py) sends each hosted role one probe before the first slot; this
server answers it as a healthy server does and keeps it apart (`probes`), so a behaviour scripts only the run's own
calls and `calls` and `requests` count only those. The live check itself is tested against the providers'
stand-ins (tests/support/provider_standins.py).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from runner.run.live_check import PROMPT as PROBE_PROMPT

# behaviour(messages) -> (http_status, body_text or None to hang)
Behaviour = Callable[[list[dict[str, Any]]], tuple[int, str | None]]


def completion(text: str) -> str:
    return json.dumps({
        "id": "cmpl-test", "object": "chat.completion", "created": int(time.time()), "model": "local",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    })


def is_probe(body: dict[str, Any]) -> bool:
    """The request is the live check's probe (runner/run/live_check.py), not one of the run's own calls."""
    for message in body.get("messages") or []:
        content = message.get("content")
        parts = [content] if isinstance(content, str) else [part.get("text", "") for part in content or []]
        if any(PROBE_PROMPT in str(part) for part in parts):
            return True
    return False


class FaultServer:
    def __init__(self, behaviour: Behaviour, *, hang_s: float = 30.0, models: list[str] | None = None) -> None:
        self.behaviour = behaviour
        self.hang_s = hang_s
        self.models = models  # ids GET /v1/models lists (a vLLM server in attach mode); None: 404
        self.calls = 0
        self.requests: list[dict[str, Any]] = []  # every request body, in arrival order (the probes aside)
        self.probes: list[dict[str, Any]] = []  # the live check's probes, answered {"ok": true}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server naming)
                if self.path != "/v1/models" or outer.models is None:
                    self.send_error(404)
                    return
                data = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in outer.models]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length) or b"{}")
                if is_probe(payload):
                    outer.probes.append(payload)
                    status, body = 200, completion('{"ok": true}')
                else:
                    outer.calls += 1
                    outer.requests.append(payload)
                    status, body = outer.behaviour(payload.get("messages", []))
                if body is None:
                    time.sleep(outer.hang_s)
                    return
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FaultServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
