"""The human labels file: one JSON object per line, one line per (item, annotator) judgement.

    {"item": "s-0f3a9c", "task_id": "smoke-counter", "turn": 2, "annotator": "ann1", "passed": true,
     "dimensions": {"presentation": 4}, "mechanism": null, "note": ""}

`item` is the blinded sample's opaque id (runner/validity/sampling.py); `task_id` and `turn` name the slot
(they say nothing of the model). Several annotators label one item (EvoGenUI-Bench §4.4: three per case). A
later line of the same annotator for the same item replaces the earlier one (the annotation page appends a
corrected label instead of rewriting the file). `mechanism` is the failure taxonomy label (§6.1) of a
non-passing slot; `dimensions` the annotator's optional per-dimension scores. Which dimensions, on which scale,
and which mechanisms, is a suite's codebook (`Codebook`, declared as ANNOTATION_CODEBOOKS["slot"] in its package,
runner/kinds.py; EvoGenUI-Bench's §4.2 dimensions and §6.1 mechanisms).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from runner.errors import UserError
from runner.validity.jsonl_models import read_model_lines

AnyLabel = TypeVar("AnyLabel", bound=BaseModel)

__all__ = ["LABELS_FILE", "Codebook", "Label", "LabelsError", "append_label", "by_slot", "majority", "read_labels"]

LABELS_FILE = "labels.jsonl"  # a sample folder's labels, one JSON line per decision (its default place)


@dataclass(frozen=True)
class Codebook:
    """What an annotator may record beside pass/fail: the dimensions scored, their scale, the failure mechanisms."""

    dimensions: tuple[str, ...]
    score_range: tuple[float, float]
    mechanisms: tuple[str, ...]


class LabelsError(ValueError, UserError):
    """A labels file that cannot be read: names the file, the line and the field."""


class Label(BaseModel):
    model_config = ConfigDict(extra="forbid")

    item: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    turn: int = Field(ge=1)
    annotator: str = Field(min_length=1)
    passed: bool
    dimensions: dict[str, float] = Field(default_factory=dict)
    mechanism: str | None = None
    note: str = ""

    @property
    def slot(self) -> tuple[str, int]:
        return (self.task_id, self.turn)


def read_latest_labels(path: Path, model: type[AnyLabel]) -> list[AnyLabel]:
    """Every annotator's latest label (a `model` with `item` and `annotator`) per item, in file order of first
    appearance."""
    latest: dict[tuple[str, str], AnyLabel] = {}
    for _, label in read_model_lines(path, model, error=LabelsError, prefix="label"):
        key = (label.item, label.annotator)  # type: ignore[attr-defined]
        latest.pop(key, None)  # re-inserted: the corrected label keeps one place
        latest[key] = label
    return list(latest.values())


def read_labels(path: Path) -> list[Label]:
    """Every annotator's latest label per item, in file order of first appearance."""
    return read_latest_labels(path, Label)


def append_label(path: Path, label: BaseModel) -> None:
    """One whole line with a single write and fsync: a killed page never leaves half a label."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (label.model_dump_json() + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def by_slot(labels: list[Label]) -> dict[tuple[str, int], list[Label]]:
    slots: dict[tuple[str, int], list[Label]] = {}
    for label in labels:
        slots.setdefault(label.slot, []).append(label)
    return slots


def majority(labels: list[Label]) -> bool | None:
    """The human reference of one item: the majority vote (EvoGenUI-Bench §4.4); None on a tie."""
    votes = Counter(label.passed for label in labels)
    if votes[True] == votes[False]:
        return None
    return votes[True] > votes[False]
