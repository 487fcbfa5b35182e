"""The generated sites of an arena, each served from its own origin (FlowEval §4: raters use the sites).

Each site gets a static file server on a free loopback port of its own, started when first shown, so two sites
never share localStorage or cookies, and neither shares an origin with the arena page (a site's script cannot
reach the page or its votes). The comparison page itself is the viewer app's arena mode (view_mode.py).
"""

from __future__ import annotations

import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from runner.suites.floweval.arena.sites import ArenaSite

__all__ = ["SiteServers"]


class SiteServers:
    """One static file server per generated site, on a free loopback port, started on first use."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self._servers: dict[str, ThreadingHTTPServer] = {}
        self._lock = threading.Lock()

    @property
    def frame_source(self) -> str:
        """The Content-Security-Policy source that admits every site's origin (any port on this host)."""
        return f"http://{self.host}:*"

    def url(self, site: ArenaSite) -> str:
        with self._lock:
            server = self._servers.get(site.site_id)
            if server is None:
                handler = partial(_QuietFiles, directory=str(site.folder))
                server = ThreadingHTTPServer((self.host, 0), handler)
                server.daemon_threads = True
                threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
                self._servers[site.site_id] = server
        return f"http://{self.host}:{server.server_address[1]}/"

    def close(self) -> None:
        with self._lock:
            for server in self._servers.values():
                server.shutdown()
                server.server_close()
            self._servers.clear()


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass
