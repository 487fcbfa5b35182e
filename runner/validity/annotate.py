"""`python -m runner.annotate SAMPLE_DIR [--labels FILE] [--host H] [--port N]`: the annotation mode of the viewer.

It starts the viewer app (runner/view/) with its annotation mode at /annotate (runner/view/annotate_mode.py) and
with no runs, so nothing on the page leads to a verdict. The page shows one sample item at a time
(runner/validity/sampling.py): the request, the task text and validation criteria, the assistant text, the
screenshots, the actor trace and the tool log, never the model's name or the judge's decision (key.jsonl is
never read). The annotator records pass/fail, optional dimension scores (EvoGenUI-Bench §4.2: presentation,
execution, alignment on 1-5) and, for a failure, the mechanism of the §6.1 codebook; each label is appended to
the labels file (default SAMPLE_DIR/labels.jsonl) at once, so the page resumes at the annotator's first
unlabelled item after a restart. The dimensions, their scale and the mechanisms are the codebook a suite
declares for this mode (runner.validity.labels.Codebook).

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
from runner.kinds import KINDS
from runner.validity.apr_audit import ATTRIBUTIONS, AUDIT_MODE, PREVIOUS, AuditLabel, append_audit_label, read_audit_labels
from runner.validity.labels import LABELS_FILE, Codebook, Label, LabelsError, append_label, read_labels
from runner.validity.sampling import ITEM_FILE, ITEMS_DIR, SAMPLE_FILE

__all__ = ["Annotation", "main"]

SLOT_MODE = "slot"  # pass/fail per slot, with the codebook's dimension scores and mechanism
_ITEM_ID = re.compile(r"^[A-Za-z0-9_.-]+$")


def slot_codebook() -> Codebook:
    """The codebook of the slot labelling mode, as a suite declares it (ANNOTATION_CODEBOOKS["slot"])."""
    if SLOT_MODE not in KINDS.members("annotation_codebook"):
        raise LabelsError(f"no suite package declares ANNOTATION_CODEBOOKS[{SLOT_MODE!r}] (runner/kinds.py)")
    return KINDS.member("annotation_codebook", SLOT_MODE)


class Annotation:
    """The sample, its labels file and what the page needs of them (runner.view.annotate_mode.AnnotationSource)."""

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

    def codebook(self) -> dict[str, Any]:
        """What the page offers: the labelling mode and its choices."""
        return {"mode": self.mode, "total": len(self.items), "dimensions": list(self.dimensions),
                "score_range": [int(self.score_range[0]), int(self.score_range[1])],
                "mechanisms": list(self.mechanisms), "attributions": list(ATTRIBUTIONS)}

    def screenshots(self, item: str) -> list[str]:
        """The image names the page may serve for this item (the previous turn's too, in audit mode)."""
        shown = self.item(item)
        previous = shown.get(PREVIOUS) or {}
        return list(shown.get("screenshots", [])) + list(previous.get("screenshots", []))

    def image_path(self, item: str, name: str) -> Path | None:
        """An item's own screenshot by name; None for anything else (no path ever leaves the item's folder)."""
        if item not in self.items or name not in self.screenshots(item):
            return None
        path = self.sample_dir / ITEMS_DIR / item / name
        return path if path.is_file() else None

    def item(self, item: str) -> dict[str, Any]:
        return json.loads((self.sample_dir / ITEMS_DIR / item / ITEM_FILE).read_text())

    def latest(self, annotator: str) -> dict[str, dict[str, Any]]:
        """item -> this annotator's latest label (their own judgement only: never the judge's)."""
        if not self.labels.exists():
            return {}
        return {label.item: label.model_dump(exclude={"item", "task_id", "turn", "annotator"})
                for label in self._read_labels() if label.annotator == annotator}

    def done(self, annotator: str) -> set[str]:
        return set(self.latest(annotator))

    def next_open(self, annotator: str, after: int = -1) -> int | None:
        """The index of the first item this annotator has not labelled after `after` (wrapping round); None when
        every item is labelled. after=-1: the first unlabelled item of the sample (where a restart resumes)."""
        done = self.done(annotator)
        count = len(self.items)
        for step in range(1, count + 1):
            index = (after + step) % count
            if self.items[index] not in done:
                return index
        return None

    def view(self, annotator: str, index: int | None) -> dict[str, Any]:
        """One item as the page shows it, with the progress and the annotator's own label of it, if any."""
        latest = self.latest(annotator)
        payload: dict[str, Any] = {"total": len(self.items), "done": sum(item in latest for item in self.items),
                                   "index": index, "item": None, "label": None}
        if index is not None:
            if not 0 <= index < len(self.items):
                raise LabelsError(f"index: {index} is not an item of this sample (0-{len(self.items) - 1})")
            name = self.items[index]
            payload["item"] = self.item(name)
            payload["label"] = latest.get(name)
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


def main(argv: list[str] | None = None) -> int:
    from runner.view.annotate_mode import AnnotationMode
    from runner.view.app import ViewState, create_app, serve_until_interrupted
    from runner.view.catalog import Catalog

    parser = argparse.ArgumentParser(prog="python -m runner.annotate", description=__doc__.split("\n\n")[0])
    parser.add_argument("sample_dir", type=Path)
    parser.add_argument("--labels", type=Path, help=f"the labels file (default SAMPLE_DIR/{LABELS_FILE})")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0: any free port")
    args = parser.parse_args(argv)
    try:
        annotation = Annotation(args.sample_dir, args.labels or args.sample_dir / LABELS_FILE)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    # No runs in this app: the runs pages would show the verdicts the annotator must not see.
    mode = AnnotationMode(annotation)
    what = "failed APR transition(s)" if annotation.audit else "item(s)"

    def announce(url: str) -> None:
        print(f"annotating {len(annotation.items)} {what} into {annotation.labels} (Ctrl-C stops)", file=sys.stderr)
        print(f"{url}/{mode.name}", flush=True)

    serve_until_interrupted(create_app(ViewState(Catalog([]), modes={mode.name: mode})), host=args.host,
                            port=args.port, announce=announce)
    return 0


if __name__ == "__main__":
    sys.exit(main())
