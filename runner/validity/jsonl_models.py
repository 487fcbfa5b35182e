"""Reading a JSONL file of records that a person writes (label files): each line one pydantic model, and every
error names the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from runner.errors import format_validation_error

ModelT = TypeVar("ModelT", bound=BaseModel)


def read_model_lines(path: Path, model: type[ModelT], *, error: type[Exception],
                     prefix: str = "") -> Iterator[tuple[int, ModelT]]:
    """(line number, record) for each non-blank line, in file order; `error` is raised naming `path:line`."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as problem:
        raise error(f"{path}: cannot read it: {problem}") from problem
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError as problem:
            raise error(f"{path}:{number}: not JSON: {problem}") from None
        if not isinstance(raw, dict):
            raise error(f"{path}:{number}: expected a JSON object, got {type(raw).__name__}")
        try:
            yield number, model.model_validate(raw)
        except ValidationError as problem:
            detail = format_validation_error(problem, raw, prefix).replace("invalid configuration:", "invalid record:")
            raise error(f"{path}:{number}: {detail}") from None
