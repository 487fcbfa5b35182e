"""What every page module of the viewer shares: the state the app was started with, the templates, render.

A leaf of runner.view: the page modules import this, and app.py (which includes their routers) imports them
and this; a page module importing app.py would be an import cycle (tests/test_import_graph.py).
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
    static_export: bool = False  # pages rendered to files: links end in .html, no server calls


def state(request: Request) -> ViewState:
    return request.app.state.view


def render(request: Request, template: str, **context: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, template, {"view": state(request), **context})
