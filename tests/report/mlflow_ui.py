"""The real `mlflow ui` for the report tests: started on a free port over a store, stopped with its process group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import cli_env

MLFLOW = Path(sys.executable).parent / "mlflow"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_http(url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    raise TimeoutError(f"{url} did not answer within {timeout} s")


@contextmanager
def mlflow_ui_server(uri: str, log_path: Path) -> Iterator[str]:
    """`mlflow ui` over the store at `uri` (its output in `log_path`); yields its base URL."""
    port = free_port()
    log = log_path.open("w")
    server = subprocess.Popen([str(MLFLOW), "ui", "--backend-store-uri", uri, "--host", "127.0.0.1", "--port",
                               str(port), "--workers", "1"], stdout=log, stderr=subprocess.STDOUT,
                              env={**cli_env(), "MLFLOW_DISABLE_TELEMETRY": "true"},
                              start_new_session=True)  # its own process group: uvicorn and the job runner stop with it
    try:
        wait_http(f"http://127.0.0.1:{port}/", 180)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        log.close()
