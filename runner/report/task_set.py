"""The task-set record of a run as summary.json, the console, report.html, the viewer and the MLflow tags show it:
lineage.json's task-set identity (runner/run/task_set.py) with the number of tasks the run selected, and one line
for people that says which set a number was measured on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["describe_task_set", "task_set_record", "task_set_tags"]

TAG_PREFIX = "genui.task_set."


def task_set_record(identity: Mapping[str, Any] | None, tasks_run: int) -> dict[str, Any] | None:
    """The identity with the number of tasks this run selected (None for a run dir written before records)."""
    return None if identity is None else {**identity, "tasks_run": tasks_run}


def describe_task_set(record: Mapping[str, Any] | None) -> str:
    """One line for people: which set, from where, how many tasks of the paper's."""
    if not record:
        return "task set: not recorded"
    name, run, paper = record.get("name"), record.get("tasks_run"), record.get("paper_tasks")
    where = str(record.get("source") or "?")
    if name == "paper":
        where += f"@{str(record.get('revision') or '?')[:12]}"
    elif name == "project" and record.get("revision"):
        where += f" at {str(record['revision'])[:10]}"
    if paper is None:
        size = f"{run} task(s); no paper set"
    elif name == "paper":
        size = f"{run} of the paper's {paper} task(s)"
    else:
        size = f"{run} task(s), not the paper's set of {paper}"
    return f"task set: {name} ({where}): {size}"


def task_set_tags(record: Mapping[str, Any] | None) -> dict[str, str]:
    """MLflow tags `genui.task_set.<field>` (empty values left out)."""
    if not record:
        return {}
    return {f"{TAG_PREFIX}{key}": str(value) for key, value in record.items() if value is not None}
