"""What this host offers, asked in a second and without starting anything: a Docker engine, an image in it, a TCP
port that answers. The preflight checks of the sandboxes and the model providers share them."""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import urlparse

__all__ = ["LOOPBACK", "docker_client", "image_present", "tcp_reachable"]

LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


def docker_client() -> tuple[Any, str | None]:
    """(a client of the engine, None), or (None, why none answers)."""
    try:
        import docker

        client = docker.from_env(timeout=5)
        client.ping()
        return client, None
    except Exception as error:  # no socket, permission denied, engine down: one answer for the user
        return None, f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"


def image_present(client: Any, reference: str) -> bool:
    try:
        client.images.get(reference)
        return True
    except Exception:
        return False


def tcp_reachable(url: str, timeout_s: float = 1.0) -> bool:
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", port), timeout=timeout_s):
            return True
    except OSError:
        return False
