"""FlowEval's arena as a mode of the viewer app (/arena): people compare two generated sites for one prompt,
blind (FlowEval §4).

The page shows the prompt's description (never its task list) and the two sites side by side, labelled only
A and B, each in a frame from its own origin (server.SiteServers). A vote is a form POST (a: A is better,
b: B is better, tie; or skip, which only moves the pair to the back of this session's queue) answered by a
redirect to the next pair; static/arena.js adds the keyboard shortcuts. Nothing on the page names a model or a
run dir: the form carries an opaque pair token.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from runner.suites.floweval.arena.queue import Arena
from runner.suites.floweval.arena.server import SiteServers
from runner.view.app import PAGE_CSP, render

__all__ = ["ArenaMode", "WINNERS"]

WINNERS = {"a": "A is better", "b": "B is better", "tie": "Tie"}
MAX_FORM_BYTES = 4096


class ArenaMode:
    """The /arena page over one rater's queue; hand it to ViewState.modes and close() it when the app stops."""

    name = "arena"
    title = "Arena"

    def __init__(self, arena: Arena, sites: SiteServers | None = None) -> None:
        self.arena = arena
        self.sites = sites or SiteServers()
        # The page frames the sites, each on a loopback port of its own.
        self.csp = PAGE_CSP.replace("frame-src 'self'", f"frame-src {self.sites.frame_source}")
        self.router = APIRouter(prefix=f"/{self.name}")
        self.router.add_api_route("", self.page, methods=["GET"], response_class=HTMLResponse)
        self.router.add_api_route("/decide", self.decide, methods=["POST"])
        self.router.add_api_route("/skip", self.skip, methods=["POST"])

    def page(self, request: Request) -> HTMLResponse:
        pair = self.arena.next_pair()
        panes = []
        description = ""
        if pair is not None:
            panes = [("A", self.sites.url(pair.left)), ("B", self.sites.url(pair.right))]
            description = pair.left.description or pair.right.description or pair.left.task_id
        response = render(request, "arena.html", nav=self.name, pair=pair, panes=panes, description=description,
                          winners=WINNERS, decided=self.arena.decided, total=len(self.arena.pairs),
                          rater=self.arena.rater)
        response.headers["Content-Security-Policy"] = self.csp
        response.headers["Cache-Control"] = "no-store"  # a back button must not show a decided pair as open
        return response

    async def _form(self, request: Request) -> dict[str, str]:
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return {}
        return {key: values[-1] for key, values in parse_qs(body.decode(errors="replace")).items()}

    async def decide(self, request: Request) -> Response:
        form = await self._form(request)
        winner = form.get("winner", "")
        if winner not in WINNERS:
            return PlainTextResponse(f"winner must be one of {sorted(WINNERS)}", status_code=400)
        try:
            self.arena.decide(form.get("pair", ""), winner)  # type: ignore[arg-type]
        except KeyError:
            return PlainTextResponse("unknown pair", status_code=400)
        except ValueError:
            pass  # decided already (a resubmitted form): show the next pair
        return RedirectResponse(f"/{self.name}", status_code=303)

    async def skip(self, request: Request) -> Response:
        form = await self._form(request)
        try:
            self.arena.skip(form.get("pair", ""))
        except KeyError:
            return PlainTextResponse("unknown pair", status_code=400)
        return RedirectResponse(f"/{self.name}", status_code=303)

    def close(self) -> None:
        self.sites.close()
