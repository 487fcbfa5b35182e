"""What every page of the viewer uses: the state the app was started with, the templates and render.

A leaf of runner.view: page modules (runs_pages, episode_pages, turn_pages, the modes) import it, and app.py,
which includes their routers, imports them and it; so no page module imports app.py (tests/test_import_graph.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from runner.view.catalog import Catalog

HERE = Path(__file__).parent

templates = Jinja2Templates(directory=str(HERE / "templates"))


class ViewMode(Protocol):
    """A mode of the app: its pages under /<name>, a link in the nav."""

    name: str
    title: str
    router: APIRouter


@dataclass
class ViewState:
    """What every page reads: the runs, and the modes this app was started with."""

    catalog: Catalog
    modes: dict[str, ViewMode] = field(default_factory=dict)  # name -> mode
    static_export: bool = False  # pages rendered to files (export.py): script-built links relative, no Compare
    labels: Path | None = None  # an annotation sample folder (--labels): people's labels beside the judge's


def site_root(request: Request) -> str:
    """The relative way from this page to the site's root in a static export, where a page at /a/b is written as
    a/b/index.html: "../../" (the page's own folder counts)."""
    depth = len([part for part in request.url.path.split("/") if part])
    return "../" * depth or "./"


templates.env.globals["site_root"] = site_root


def state(request: Request) -> ViewState:
    return request.app.state.view


def render(request: Request, template: str, **context: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, template, {"view": state(request), **context})


__all__ = ["HERE", "ViewMode", "ViewState", "render", "state", "templates"]
