"""The arena's local web server: the comparison page (runner/report/local_page.py), and each site on its own port.

Each generated site is served from its own origin (a port of its own, started when first shown), so two
sites never share localStorage or cookies. The page shows the prompt's description (never its task list),
the two sites side by side in expandable iframes, labelled only A and B, and three buttons; a decision is
a form POST to /decide and the page moves on to the next pair.
"""

from __future__ import annotations

import html
import threading
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from runner.suites.floweval.arena.queue import Arena, ArenaPair
from runner.suites.floweval.arena.sites import ArenaSite
from runner.report.local_page import CSP, LocalPage, Request, Response

WINNERS = {"a": "A is better", "b": "B is better", "tie": "Tie"}

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 0; background: #f4f4f5; color: #18181b; }
header { padding: 12px 20px; background: #fff; border-bottom: 1px solid #e4e4e7; }
header p { margin: 6px 0 0; max-width: 80em; }
.progress { color: #71717a; font-size: 13px; }
main { display: flex; gap: 12px; padding: 12px; }
section { flex: 1; display: flex; flex-direction: column; min-width: 0; }
section.expanded { flex: 3; }
section h2 { font-size: 15px; margin: 0 0 6px; display: flex; justify-content: space-between; }
iframe { width: 100%; height: 72vh; border: 1px solid #d4d4d8; background: #fff; border-radius: 4px; }
form { display: flex; gap: 12px; justify-content: center; padding: 8px 0 20px; }
button { font-size: 15px; padding: 8px 18px; border-radius: 6px; border: 1px solid #a1a1aa; background: #fff; cursor: pointer; }
button.pick { background: #2563eb; color: #fff; border-color: #2563eb; }
"""

_SCRIPT = """
document.querySelectorAll('[data-expand]').forEach((button) => button.addEventListener('click', () => {
  const section = document.getElementById(button.dataset.expand);
  section.classList.toggle('expanded');
  button.textContent = section.classList.contains('expanded') ? 'Shrink' : 'Expand';
}));
"""


class SiteServers:
    """One static file server per generated site, on a free loopback port, started on first use."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self._servers: dict[str, ThreadingHTTPServer] = {}
        self._lock = threading.Lock()

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


def render_page(arena: Arena, pair: ArenaPair | None, sites: SiteServers) -> str:
    total = len(arena.pairs)
    progress = f"{arena.decided} of {total} comparisons decided"
    if pair is None:
        body = (f"<header><h1>All done</h1><p class='progress' id='progress'>{progress}</p>"
                f"<p>Every comparison in this arena has a decision; thank you.</p></header>")
    else:
        panes = []
        for letter, site in (("A", pair.left), ("B", pair.right)):
            panes.append(
                f"<section id='pane-{letter}'><h2>Website {letter} <button type='button' data-expand='pane-{letter}'>"
                f"Expand</button></h2><iframe title='Website {letter}' name='site-{letter}' "
                f"src='{html.escape(sites.url(site))}'></iframe></section>")
        buttons = "".join(f"<button class='pick' name='winner' value='{value}'>{text}</button>"
                          for value, text in WINNERS.items())
        description = html.escape(pair.left.description or pair.right.description or pair.left.task_id)
        body = (f"<header><p class='progress' id='progress'>{progress}</p><p id='description'>{description}</p>"
                f"<p class='progress'>Use both websites as a visitor would, test what such a site should let "
                f"you do, then decide.</p></header><main>{''.join(panes)}</main>"
                f"<form method='post' action='/decide'><input type='hidden' name='pair' "
                f"value='{html.escape(pair.token)}'>{buttons}</form>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Arena</title><style>{_STYLE}</style>"
            f"</head><body>{body}<script src='/arena.js'></script></body></html>")


class ArenaServer:
    """The comparison page (runner/report/local_page.py) and the site servers; `url` once started."""

    def __init__(self, arena: Arena, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.arena = arena
        self.sites = SiteServers(host)
        # The page frames the sites, each on a loopback port of its own; nothing else may load.
        csp = f"{CSP}; frame-src http://{host}:*; form-action 'self'"
        self._page = LocalPage({("GET", "/"): self._show, ("GET", "/index.html"): self._show,
                                ("GET", "/arena.js"): self._script, ("POST", "/decide"): self._decide},
                               host=host, port=port, csp=csp)

    @property
    def url(self) -> str:
        return self._page.url

    def _show(self, request: Request) -> Response:
        return Response(body=render_page(self.arena, self.arena.next_pair(), self.sites).encode())

    def _script(self, request: Request) -> Response:
        return Response(content_type="text/javascript; charset=utf-8", body=_SCRIPT.encode())

    def _decide(self, request: Request) -> Response:
        form = parse_qs(request.body.decode())
        token, winner = form.get("pair", [""])[0], form.get("winner", [""])[0]
        if winner not in WINNERS:
            return Response(HTTPStatus.BAD_REQUEST, "text/plain", f"winner must be one of {sorted(WINNERS)}".encode())
        try:
            self.arena.decide(token, winner)  # type: ignore[arg-type]
        except KeyError:
            return Response(HTTPStatus.BAD_REQUEST, "text/plain", b"unknown pair")
        except ValueError:
            pass  # decided already (a resubmitted form): show the next pair
        return Response(HTTPStatus.SEE_OTHER, "text/plain", b"", headers={"Location": "/"})

    def start(self) -> ArenaServer:
        self._page.start()
        return self

    def serve_forever(self) -> None:
        self._page.serve_forever()

    def close(self) -> None:
        self._page.close()
        self.sites.close()

    def __enter__(self) -> ArenaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["ArenaServer", "SiteServers", "render_page"]
