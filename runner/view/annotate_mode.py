"""The annotation mode of the viewer (/annotate): people label a blinded sample, one item at a time.

The labelling itself (the sample, the codebook, the labels file) belongs to runner/validity/annotate.py, which
builds this mode around its Annotation and starts the app; this module is only the page and its JSON API, so
it takes any object with the AnnotationSource methods. Two kinds of item share the page: a slot's pass/fail
with dimension scores and a failure mechanism (EvoGenUI-Bench §4.4, §4.2, §6.1), and a failed APR
transition's attribution (EvoGenUI-Bench Appendix C.2.1), chosen by the sample's mode.

Blinding: the page shows only what the sample's item.json holds (no model, no verdict) and the annotator's
own earlier label; every text from the sample is set as text by static/annotate.js, never as HTML.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

from runner.errors import UserError
from runner.view.pages import render

__all__ = ["AnnotationMode", "AnnotationSource"]

MAX_LABEL_BYTES = 64 * 1024
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}
# What each attribution means, as the annotator reads it (EvoGenUI-Bench Appendix C.2.1).
ATTRIBUTION_TITLES = {
    "prior_regression": ("Prior-regression-containing", "something the previous passing turn had was removed, "
                         "contradicted, disconnected or made stale"),
    "new_requirement_only": ("New-requirement-only", "previous behaviour intact; the new request failed"),
    "insufficient_evidence": ("Insufficient evidence", "too little evidence to attribute the failure"),
}


class AnnotationSource(Protocol):
    """What the page needs of a sample and its labels file (runner.validity.annotate.Annotation)."""

    items: list[str]

    def codebook(self) -> dict[str, Any]: ...
    def view(self, annotator: str, index: int | None) -> dict[str, Any]: ...
    def next_open(self, annotator: str, after: int = -1) -> int | None: ...
    def record(self, data: dict[str, Any]) -> Any: ...
    def image_path(self, item: str, name: str) -> Path | None: ...


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _annotator(request: Request) -> str:
    return request.query_params.get("annotator", "").strip()


class AnnotationMode:
    """The /annotate page over one sample; hand it to ViewState.modes."""

    name = "annotate"
    title = "Annotate"

    def __init__(self, source: AnnotationSource) -> None:
        self.source = source
        self.router = APIRouter(prefix=f"/{self.name}")
        self.router.add_api_route("", self.page, methods=["GET"], response_class=HTMLResponse)
        self.router.add_api_route("/api/next", self.next_item, methods=["GET"])
        self.router.add_api_route("/api/item/{index}", self.item, methods=["GET"])
        self.router.add_api_route("/api/label", self.save, methods=["POST"])
        self.router.add_api_route("/images/{item}/{name}", self.image, methods=["GET"])

    def page(self, request: Request) -> HTMLResponse:
        codebook = self.source.codebook()
        low, high = codebook["score_range"]
        attributions = [(name, *ATTRIBUTION_TITLES.get(name, (name, ""))) for name in codebook["attributions"]]
        return render(request, "annotate.html", nav=self.name, codebook=codebook, scores=list(range(low, high + 1)),
                      attributions=attributions, audit=codebook["mode"] == "apr_audit")

    def next_item(self, request: Request) -> JSONResponse:
        """The first item the annotator has not labelled after `after` (default: from the start)."""
        annotator = _annotator(request)
        if not annotator:
            return _error("annotator: give your annotator id")
        try:
            after = int(request.query_params.get("after", "-1"))
        except ValueError:
            return _error("after: not an item index")
        return JSONResponse(self.source.view(annotator, self.source.next_open(annotator, after)))

    def item(self, request: Request, index: int) -> JSONResponse:
        annotator = _annotator(request)
        if not annotator:
            return _error("annotator: give your annotator id")
        try:
            return JSONResponse(self.source.view(annotator, index))
        except UserError as error:
            return _error(str(error), 404)

    async def save(self, request: Request) -> JSONResponse:
        """Append one label; answers with the next unlabelled item after the saved one."""
        body = await request.body()
        if len(body) > MAX_LABEL_BYTES:
            return _error("the label is too large", 413)
        try:
            data = json.loads(body or b"null")
            if not isinstance(data, dict):
                raise ValueError("the label must be a JSON object")
            label = self.source.record(data)
        except (UserError, ValueError) as error:
            return _error(str(error))
        saved = self.source.items.index(label.item)
        return JSONResponse(self.source.view(label.annotator, self.source.next_open(label.annotator, saved)))

    def image(self, item: str, name: str) -> Response:
        path = self.source.image_path(item, name)
        if path is None:  # only the item's own screenshots, by name
            return _error("not found", 404)
        return FileResponse(path, media_type=IMAGE_TYPES.get(path.suffix.lower(), "application/octet-stream"))
