"""A stand-in for `vllm serve` (fault injection for the launcher): same command line, answers GET /v1/models.

    python fake_vllm.py MODEL_DIR --served-model-name NAME --host H --port P [other flags ignored]

Like the real server it forks a child (the "engine core"), so tests can check that the whole process group is
stopped. FAKE_VLLM_DELAY_S delays readiness; FAKE_VLLM_EXIT=N exits with code N after printing a message;
FAKE_VLLM_IGNORE_TERM=1 ignores SIGTERM (the launcher must escalate to SIGKILL). FAKE_VLLM_ARGV_OUT=path
records the argv and selected environment as JSON.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _flag(argv: list[str], name: str, default: str) -> str:
    return argv[argv.index(name) + 1] if name in argv else default


def main() -> None:
    argv = sys.argv[1:]
    out = os.environ.get("FAKE_VLLM_ARGV_OUT")
    if out:
        keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "CUDA_VISIBLE_DEVICES", "HF_HUB_CACHE", "EXTRA_FLAG")
        with open(out, "w") as handle:
            json.dump({"argv": argv, "env": {k: os.environ.get(k) for k in keys}}, handle)
    if os.environ.get("FAKE_VLLM_IGNORE_TERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    code = os.environ.get("FAKE_VLLM_EXIT")
    if code:
        print("fake vllm: CUDA out of memory (injected failure)", flush=True)
        sys.exit(int(code))
    name = _flag(argv, "--served-model-name", "model")
    host, port = _flag(argv, "--host", "127.0.0.1"), int(_flag(argv, "--port", "8000"))
    # The "engine core": a child in the same process group that outlives nothing on its own.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    print(f"fake vllm: engine core pid {child.pid}", flush=True)
    time.sleep(float(os.environ.get("FAKE_VLLM_DELAY_S", "0")))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            body = json.dumps({"object": "list", "data": [{"id": name, "object": "model"}]}).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer((host, port), Handler)
    print(f"fake vllm: serving {name} on {host}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
