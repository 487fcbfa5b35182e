"""The task library of a run (EvoGenUI-Bench Appendix E, Fig. 7): task metadata, domain, suite membership,
tool availability and the user turns. Only public fields are kept: requirements, reference solutions
and suite-private extras (validation contracts, fixtures) never leave the task files through a report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.turns.records import write_json_atomic
from runner.turns.tasks import Task

from runner.report.collect import TASKS_FILE


def _tool_names(task: Task) -> list[str]:
    """Tool names from the public contract (a list of tool schemas or a name -> schema map); else from the
    suite's bindings, whose names (not their backends) are public too."""
    tools = task.public_contract.get("tools") or task.extra.get("tools") or []
    if isinstance(tools, dict):
        return sorted(str(name) for name in tools)
    return sorted(str(tool.get("name", "")) if isinstance(tool, dict) else str(tool) for tool in tools)


def task_library(tasks: list[Task]) -> list[dict[str, Any]]:
    return [
        {
            "id": task.id,
            "suite": task.suite,
            "sub_suite": task.sub_suite,
            "title": task.title,
            "domain": task.domain,
            "tools": _tool_names(task),
            "turns": [{"index": turn.index, "prompt": turn.prompt} for turn in task.turns],
        }
        for task in sorted(tasks, key=lambda t: t.id)
    ]


def write_task_library(run_dir: Path, tasks: list[Task]) -> Path:
    return write_json_atomic(Path(run_dir) / TASKS_FILE, task_library(tasks))


__all__ = ["task_library", "write_task_library"]
