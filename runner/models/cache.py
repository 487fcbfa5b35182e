"""A persistent response cache: identical requests to the same endpoint and model are answered once.

What makes requests identical is what the caller puts in the key: the endpoint, the model, the messages and the
parameters as sent, with the request's `sample` (independent generations of one prompt, FlowEval §3.1, each get
their own entry) and, here, the run's `draw` (its repeat).

One sqlite table in WAL mode, so several runner processes (Hydra multirun jobs) and many async tasks
can share a file: readers never block, writers wait on the lock (busy timeout) instead of failing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from runner.models.base import ModelResponse

__all__ = ["ResponseCache", "cache_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    usage TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(*, endpoint: str, model: str, messages: list[dict[str, Any]], parameters: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of everything that determines the answer."""
    payload = {
        "endpoint": endpoint.rstrip("/"),
        "model": model,
        "messages": messages,
        "parameters": parameters,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Thread-safe: one connection guarded by a lock; process-safe through sqlite's own locking."""

    def __init__(self, path: Path | str, *, busy_timeout_s: float = 30.0, draw: int = 0) -> None:
        """`draw`: the run's `repeat` index; a repeat's requests get answers of their own (draw 0 keys as before)."""
        self.path = Path(path)
        self.draw = draw
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            str(self.path), timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
        )
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)

    def key(self, *, endpoint: str, model: str, messages: list[dict[str, Any]], parameters: dict[str, Any]) -> str:
        if self.draw:
            parameters = {**parameters, "draw": self.draw}
        return cache_key(endpoint=endpoint, model=model, messages=messages, parameters=parameters)

    def get(self, key: str) -> ModelResponse | None:
        with self._lock:
            row = self._conn.execute("SELECT text, usage FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return ModelResponse(text=row[0], usage=json.loads(row[1]), latency_s=0.0, cached=True)

    def put(self, key: str, response: ModelResponse, *, model: str = "") -> None:
        """Store a successful answer; empty answers are refused so a retry can do better."""
        if not response.text or not response.text.strip():
            return
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, model, text, usage, created) VALUES (?, ?, ?, ?, ?)",
                (key, model, response.text, json.dumps(response.usage, sort_keys=True), time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
