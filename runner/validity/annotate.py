"""`python -m runner.annotate SAMPLE_DIR [--labels FILE] [--port N]`: the local annotation page.

It serves one sample item at a time (runner/validity/sampling.py): the request, the task text and
validation criteria, the assistant text, the screenshots, the actor trace and the tool log, never the model's
name or the judge's decision (key.jsonl is never read). The annotator records pass/fail, optional dimension
scores (EvoGenUI-Bench §4.2: presentation, execution, alignment on 1-5) and, for a failure, the mechanism of
the §6.1 codebook; each label is appended to the labels file (default SAMPLE_DIR/labels.jsonl) at once, so
the page resumes at the annotator's first unlabelled item after a restart. The dimensions, their scale and
the mechanisms are the codebook a suite declares for this mode (runner.validity.labels.Codebook).

An audit sample of failed APR transitions (runner/validity/apr_audit.py, EvoGenUI-Bench Appendix C.2.1; its
sample.json says `"mode": "apr_audit"`) opens the page in its labelling mode: each item shows the previous
(passed) turn's request and evidence beside the current (failed) turn's, and the annotator records the
transition's attribution (prior-regression-containing, new-requirement-only, or insufficient evidence) instead
of pass/fail; those labels go to the same kind of labels file (runner.validity.apr_audit.AuditLabel).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from runner.errors import UserError, format_validation_error
from runner.report.local_page import LocalPage, Request, Response, json_response
from runner.run import plugins
from runner.validity.apr_audit import ATTRIBUTIONS, AUDIT_MODE, PREVIOUS, AuditLabel, append_audit_label, read_audit_labels
from runner.validity.labels import Codebook, Label, LabelsError, append_label, read_labels
from runner.validity.sampling import ITEM_FILE, ITEMS_DIR, SAMPLE_FILE

__all__ = ["Annotation", "build_page", "main"]

PAGE_DIR = Path(__file__).parent / "annotate_page"
LABELS_FILE = "labels.jsonl"
SLOT_MODE = "slot"  # pass/fail per slot, with the codebook's dimension scores and mechanism
_ITEM_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


def slot_codebook() -> Codebook:
    """The codebook of the slot labelling mode, as a suite declares it (ANNOTATION_CODEBOOKS["slot"])."""
    reference = plugins.declared("ANNOTATION_CODEBOOKS").get(SLOT_MODE)
    if reference is None:
        raise LabelsError(f"no suite package declares ANNOTATION_CODEBOOKS[{SLOT_MODE!r}] (runner/run/plugins.py)")
    return plugins.load(reference)


class Annotation:
    """The sample, its labels file and what the page needs of them."""

    def __init__(self, sample_dir: Path, labels: Path, *, dimensions: tuple[str, ...] | None = None,
                 mechanisms: tuple[str, ...] | None = None) -> None:
        self.sample_dir = Path(sample_dir)
        try:
            sample = json.loads((self.sample_dir / SAMPLE_FILE).read_text())
        except (OSError, ValueError) as error:
            raise LabelsError(f"{self.sample_dir / SAMPLE_FILE}: not a sample (runner.validity.sampling): {error}") from None
        self.items: list[str] = [str(item) for item in sample.get("items", [])]
        bad = [item for item in self.items if not _ITEM_ID.match(item)]
        if bad:
            raise LabelsError(f"{self.sample_dir / SAMPLE_FILE}: items: bad item id {bad[0]!r}")
        self.mode = str(sample.get("mode") or SLOT_MODE)  # "slot" (pass/fail) or "apr_audit" (attribution)
        if self.mode not in (SLOT_MODE, AUDIT_MODE):
            raise LabelsError(f"{self.sample_dir / SAMPLE_FILE}: mode: {self.mode!r} is not 'slot' or {AUDIT_MODE!r}")
        self.labels = Path(labels)
        codebook = slot_codebook()
        self.dimensions = codebook.dimensions if dimensions is None else dimensions
        self.mechanisms = codebook.mechanisms if mechanisms is None else mechanisms
        self.score_range = codebook.score_range
        if self.labels.exists():
            self._read_labels()  # a broken file fails now, naming its line, not on the first save

    @property
    def audit(self) -> bool:
        return self.mode == AUDIT_MODE

    def _read_labels(self) -> list[Label] | list[AuditLabel]:
        return read_audit_labels(self.labels) if self.audit else read_labels(self.labels)

    def screenshots(self, item: str) -> list[str]:
        """The image names the page may serve for this item (the previous turn's too, in audit mode)."""
        shown = self.item(item)
        previous = shown.get(PREVIOUS) or {}
        return list(shown.get("screenshots", [])) + list(previous.get("screenshots", []))

    def item(self, item: str) -> dict[str, Any]:
        return json.loads((self.sample_dir / ITEMS_DIR / item / ITEM_FILE).read_text())

    def done(self, annotator: str) -> set[str]:
        if not self.labels.exists():
            return set()
        return {label.item for label in self._read_labels() if label.annotator == annotator}

    def next_item(self, annotator: str) -> dict[str, Any]:
        done = self.done(annotator)
        remaining = [item for item in self.items if item not in done]
        payload: dict[str, Any] = {"total": len(self.items), "done": len(self.items) - len(remaining),
                                   "dimensions": list(self.dimensions), "score_range": list(self.score_range),
                                   "mechanisms": list(self.mechanisms), "mode": self.mode,
                                   "attributions": list(ATTRIBUTIONS), "item": None}
        if remaining:
            payload["item"] = self.item(remaining[0])
        return payload

    def record(self, data: dict[str, Any]) -> Label | AuditLabel:
        item = str(data.get("item", ""))
        if item not in self.items:
            raise LabelsError(f"item: {item!r} is not in this sample")
        shown = self.item(item)
        if self.audit:
            return self._record_attribution(item, shown, data)
        mechanism = data.get("mechanism") or None
        if mechanism is not None and mechanism not in self.mechanisms:
            raise LabelsError(f"mechanism: {mechanism!r} is not one of {list(self.mechanisms)}")
        unknown = sorted(set(data.get("dimensions") or {}) - set(self.dimensions))
        if unknown:
            raise LabelsError(f"dimensions: unknown dimension {unknown[0]!r}; allowed: {list(self.dimensions)}")
        raw = {"item": item, "task_id": shown["task_id"], "turn": shown["turn"], "annotator": data.get("annotator"),
               "passed": data.get("passed"), "dimensions": data.get("dimensions") or {}, "mechanism": mechanism,
               "note": data.get("note") or ""}
        try:
            label = Label.model_validate(raw)
        except ValidationError as error:
            raise LabelsError(format_validation_error(error, raw, "label")) from None
        append_label(self.labels, label)
        return label

    def _record_attribution(self, item: str, shown: dict[str, Any], data: dict[str, Any]) -> AuditLabel:
        attribution = data.get("attribution")
        if attribution not in ATTRIBUTIONS:
            raise LabelsError(f"attribution: {attribution!r} is not one of {list(ATTRIBUTIONS)}")
        raw = {"item": item, "task_id": shown["task_id"], "turn": shown["turn"], "annotator": data.get("annotator"),
               "attribution": attribution, "note": data.get("note") or ""}
        try:
            label = AuditLabel.model_validate(raw)
        except ValidationError as error:
            raise LabelsError(format_validation_error(error, raw, "label")) from None
        append_audit_label(self.labels, label)
        return label


def build_page(annotation: Annotation, *, port: int = 0) -> LocalPage:
    def static(name: str, content_type: str) -> Any:
        return lambda request: Response(200, content_type, (PAGE_DIR / name).read_bytes())

    def next_item(request: Request) -> Response:
        annotator = request.query.get("annotator", "").strip()
        if not annotator:
            return json_response({"error": "annotator: give your annotator id"}, 400)
        return json_response(annotation.next_item(annotator))

    def save(request: Request) -> Response:
        try:
            data = request.json()
            if not isinstance(data, dict):
                raise LabelsError("the label must be a JSON object")
            label = annotation.record(data)
        except (LabelsError, ValueError) as error:
            return json_response({"error": str(error)}, 400)
        return json_response(annotation.next_item(label.annotator))

    def image(request: Request) -> Response:
        item, _, name = request.rest.partition("/")
        if item not in annotation.items or name not in annotation.screenshots(item):
            return Response(404, "text/plain", b"not found")  # only the item's own screenshots, by name
        return Response(200, "image/png", (annotation.sample_dir / ITEMS_DIR / item / name).read_bytes())

    return LocalPage({("GET", "/"): static("index.html", "text/html; charset=utf-8"),
                      ("GET", "/annotate.js"): static("annotate.js", "text/javascript; charset=utf-8"),
                      ("GET", "/api/next"): next_item, ("POST", "/api/label"): save,
                      ("GET", "/images/*"): image}, port=port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.annotate", description=__doc__.split("\n\n")[0])
    parser.add_argument("sample_dir", type=Path)
    parser.add_argument("--labels", type=Path, help=f"the labels file (default SAMPLE_DIR/{LABELS_FILE})")
    parser.add_argument("--port", type=int, default=8765, help="0: any free port")
    args = parser.parse_args(argv)
    try:
        annotation = Annotation(args.sample_dir, args.labels or args.sample_dir / LABELS_FILE)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    page = build_page(annotation, port=args.port)
    what = "failed APR transition(s)" if annotation.audit else "item(s)"
    print(f"annotating {len(annotation.items)} {what} into {annotation.labels}", file=sys.stderr)
    print(page.url, flush=True)
    try:
        page.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        page.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
