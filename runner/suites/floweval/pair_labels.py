"""Pairwise preference labels (FlowEval §4): the JSONL format people, metrics and the MLLM judge share.

One JSON object per line:

    {"prompt_id": "shop", "model_a": "gpt-x", "model_b": "qwen-y", "winner": "a", "rater": "r1"}

- `prompt_id`: the prompt (task) both sites were generated for;
- `model_a`, `model_b`: the two generator models, as the run records name them (two different models);
- `winner`: "a", "b" or "tie";
- `rater`: who decided: a person's id, `metric:<name>` or `mllm:<model>`;
- optional `site_a`, `site_b` (which generated sites were shown, e.g. `<run dir>::<task>::<turn>`) and
  `decided_at` (ISO 8601 time).

A bad line is an error naming the file, the line number and the field.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from runner.errors import UserError
from runner.validity.jsonl_models import read_model_lines

Winner = Literal["a", "b", "tie"]


class LabelFormatError(ValueError, UserError):
    """A labels file line that is not a valid pairwise label (the message names file, line and field)."""


class PairwiseLabel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_id: str
    model_a: str
    model_b: str
    winner: Winner
    rater: str
    site_a: str = ""
    site_b: str = ""
    decided_at: str = ""

    @model_validator(mode="after")
    def _two_models(self) -> PairwiseLabel:
        if self.model_a == self.model_b:
            raise ValueError(f"model_a and model_b are both {self.model_a!r}: a label compares two models")
        if not self.prompt_id or not self.rater:
            raise ValueError("prompt_id and rater must not be empty")
        return self

    @property
    def winner_model(self) -> str | None:
        """The preferred model; None for a tie."""
        return {"a": self.model_a, "b": self.model_b}.get(self.winner)


def read_labels(path: Path) -> list[PairwiseLabel]:
    """Every label of a JSONL file, in file order (blank lines skipped)."""
    return [label for _, label in read_model_lines(path, PairwiseLabel, error=LabelFormatError)]


def append_label(path: Path, label: PairwiseLabel) -> None:
    """Append one label as one whole line (a single write + fsync, so a killed writer leaves whole lines)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (label.model_dump_json(exclude_defaults=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def write_labels(path: Path, labels: Iterable[PairwiseLabel]) -> None:
    Path(path).write_text("".join(label.model_dump_json(exclude_defaults=True) + "\n" for label in labels))
