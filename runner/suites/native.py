"""Loader for the project's own task files (YAML or JSON documents of runner.turns.tasks.Task)."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from runner.errors import UserError
from runner.turns.tasks import Task


class TaskFormatError(ValueError, UserError):
    """A task file is malformed; the message names the file and the path inside it."""


def expand_task_paths(spec: str | Path, *, suffixes: tuple[str, ...] = (".yaml", ".yml", ".json")) -> list[Path]:
    """A file, a folder (searched recursively) or a glob pattern -> sorted task files."""
    path = Path(spec)
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in suffixes and p.is_file())
    matches = sorted(Path(p) for p in glob.glob(str(spec), recursive=True))
    files = [p for p in matches if p.is_file() and p.suffix in suffixes]
    if not files:
        raise TaskFormatError(f"{spec}: no task files found (expected a file, a folder or a glob)")
    return files


def read_document(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as error:
        raise TaskFormatError(f"{path}: cannot be read as a task file: {error}") from None


def describe_validation_error(path: Path, error: ValidationError, prefix: str = "") -> str:
    lines = []
    for item in error.errors():
        location = prefix
        for part in item["loc"]:
            location += f"[{part}]" if isinstance(part, int) else (f".{part}" if location else str(part))
        lines.append(f"{path}: {location or '<root>'}: {item['msg']}")
    return "\n".join(lines)


def load_native_tasks(spec: str | Path, *, suite: str) -> list[Task]:
    """Load Task documents; a file may hold one task or {"tasks": [...]}."""
    tasks: list[Task] = []
    for path in expand_task_paths(spec):
        document = read_document(path)
        items, prefix = (document["tasks"], "tasks") if isinstance(document, dict) and "tasks" in document else ([document], "")
        if not isinstance(items, list):
            raise TaskFormatError(f"{path}: tasks: expected a list")
        for position, item in enumerate(items):
            item_prefix = f"{prefix}[{position}]" if prefix else ""
            if not isinstance(item, dict):
                raise TaskFormatError(f"{path}: {item_prefix or '<root>'}: expected a mapping, got {type(item).__name__}")
            item = {"suite": suite, "source_path": str(path), **item}
            try:
                tasks.append(Task.model_validate(item))
            except ValidationError as error:
                raise TaskFormatError(describe_validation_error(path, error, item_prefix)) from None
    ids = [task.id for task in tasks]
    duplicates = sorted({task_id for task_id in ids if ids.count(task_id) > 1})
    if duplicates:
        raise TaskFormatError(f"{spec}: duplicate task id(s) {duplicates}")
    return tasks
