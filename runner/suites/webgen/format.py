"""WebGen-Bench's `test.jsonl`: one website task per line, with its `ui_instruct` test cases; or the same rows as
the dataset's test parquet on the Hugging Face hub (`data/test-00000-of-00001.parquet` of luzimu/WebGen-Bench).

Each line (row) is validated by a pydantic model; a bad one is refused with the file, its number and the field.
One task becomes one single-turn Task: the instruction is the turn's prompt, and each test case is a private
Requirement (`tc1`, `tc2`, ...) with its category kept in `turn.extra["test_cases"]`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from runner.errors import UserError
from runner.turns.tasks import Requirement, Task, TurnSpec

SUITE_NAME = "webgen"


class WebGenFormatError(ValueError, UserError):
    """A test.jsonl line is malformed; the message names the file, the line and the field."""


class Category(BaseModel):
    model_config = ConfigDict(extra="forbid")

    primary_category: str = Field(min_length=1)
    subcategories: list[str] = Field(default_factory=list)


class UITestCase(BaseModel):
    """One `ui_instruct` entry: what the tester does and what it should see."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1)
    expected_result: str = Field(min_length=1)
    task_category: Category


class WebGenTask(BaseModel):
    """One line of test.jsonl."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    category: Category = Field(alias="Category")
    application_type: str = ""
    ui_instruct: list[UITestCase] = Field(min_length=1)


def case_id(index: int) -> str:
    """The requirement id of the index-th (0-based) test case."""
    return f"tc{index + 1}"


def to_task(row: WebGenTask, *, source: Path) -> Task:
    cases = [
        {"id": case_id(i), "task": case.task, "expected_result": case.expected_result,
         "category": case.task_category.primary_category, "subcategories": case.task_category.subcategories}
        for i, case in enumerate(row.ui_instruct)
    ]
    requirements = [
        Requirement(id=case["id"], description=f"{case['task']} Expected result: {case['expected_result']}")
        for case in cases
    ]
    turn = TurnSpec(index=1, prompt=row.instruction, requirements=requirements,
                    requires_previous_artifact=False, extra={"test_cases": cases})
    return Task(id=row.id, suite=SUITE_NAME, sub_suite=row.category.primary_category,
                title=row.application_type, domain=row.application_type, turns=[turn], source_path=str(source),
                extra={"subcategories": row.category.subcategories})


def _rows(path: Path) -> list[tuple[int, Any]]:
    """(number, row) of a test.jsonl (blank lines skipped) or of a test parquet (nulls dropped)."""
    if Path(path).suffix == ".parquet":
        import pyarrow.parquet as parquet

        try:
            table = parquet.read_table(path)
        except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
            raise WebGenFormatError(f"{path}: cannot be read as WebGen-Bench's test parquet: {error}") from None
        return [(number, _without_nulls(row)) for number, row in enumerate(table.to_pylist(), start=1)]
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise WebGenFormatError(f"{path}: cannot be read as WebGen-Bench test.jsonl: {error}") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as error:
            raise WebGenFormatError(f"{path}:{number}: not a JSON object: {error}") from None
    return rows


def _without_nulls(value: Any) -> Any:
    """A parquet row as JSON would give it: a struct field the row leaves empty is absent, not null."""
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def load_webgen_tasks(path: Path) -> list[Task]:
    """All tasks of a test.jsonl (or test parquet) file; ids must be unique."""
    tasks: list[Task] = []
    seen: set[str] = set()
    for number, raw in _rows(path):
        try:
            row = WebGenTask.model_validate(raw)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in item['loc']) or '(line)'}: {item['msg']}" for item in error.errors()
            )
            raise WebGenFormatError(f"{path}:{number}: {problems}") from None
        if row.id in seen:
            raise WebGenFormatError(f"{path}:{number}: id {row.id!r} appears twice")
        seen.add(row.id)
        tasks.append(to_task(row, source=Path(path)))
    if not tasks:
        raise WebGenFormatError(f"{path}: no tasks (an empty test.jsonl)")
    return tasks
