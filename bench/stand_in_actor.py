"""A stand-in actor model for the benches: an OpenAI-compatible HTTP server on 127.0.0.1 with a fixed latency per step.

Every POST .../chat/completions answers after `latency_s` with one action of the LLM actor's protocol
(runner/actors/llm.py): a scroll for each step before the last of `steps`, then `finish`. The step is read from
the actor's own observation ("Step N of at most M"), so the server keeps no state per visit and every visit takes
exactly `steps` model calls. It counts the requests in flight: GET /stats answers the most seen at once since the
last `GET /stats?reset=1`, and the requests answered.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

_STEP = re.compile(r"Step (\d+) of at most (\d+)")


def _text_of(messages: list[dict]) -> str:
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [part.get("text", "") for part in content if isinstance(part, dict)]
    return "\n".join(parts)


def action_for(messages: list[dict], steps: int) -> dict:
    """The action for the step the observation names: scroll until the last of `steps`, then finish."""
    found = _STEP.findall(_text_of(messages))
    step = int(found[-1][0]) if found else steps
    if step >= steps:
        return {"action": "finish", "success": True, "summary": f"stand-in: {step} steps"}
    return {"action": "scroll", "dy": 200}


def serve_stand_in_actor(port: int, latency_s: float, steps: int) -> None:
    """Serve until killed (run it in a process of its own)."""
    lock = threading.Lock()
    stats = {"in_flight": 0, "peak": 0, "answered": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            parts = urlsplit(self.path)
            if parts.path.endswith("/stats"):
                with lock:
                    payload = dict(stats)
                    if parse_qs(parts.query).get("reset"):
                        stats.update(peak=stats["in_flight"], answered=0)
                return self._send(json.dumps(payload).encode())
            self._send(json.dumps({"object": "list", "data": [{"id": "stand-in", "object": "model"}]}).encode())

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                stats["in_flight"] += 1
                stats["peak"] = max(stats["peak"], stats["in_flight"])
            try:
                time.sleep(latency_s)
                content = json.dumps(action_for(request.get("messages") or [], steps))
                body = json.dumps({
                    "id": "stand-in", "object": "chat.completion", "created": int(time.time()), "model": "stand-in",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020},
                }).encode()
                self._send(body)
            finally:
                with lock:
                    stats["in_flight"] -= 1
                    stats["answered"] += 1

        def _send(self, payload: bytes) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.request_queue_size = 256
    server.serve_forever()


def wait_listening(port: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"the stand-in server on port {port} did not start")


def actor_overrides(base_url: str, *, steps: int) -> list[str]:
    """The run's overrides that point actor=llm at the stand-in (vision on: a screenshot each step, as a VLM)."""
    return ["actor=llm", f"actor.options.model.base_url={base_url}", "actor.options.model.max_retries=0",
            "actor.options.model.timeout_s=300", f"actor.options.max_steps={steps}",
            "run.live_check=false"]
