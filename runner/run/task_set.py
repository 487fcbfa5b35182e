"""What a run measured: the task-set record of summary.json, lineage.json, the report, the viewer and the MLflow
tags.

    {"name": "paper", "suite": "evogenui", "source": "https://github.com/MAPS-research/EvoGenUI-Bench.git",
     "revision": "5e2eb00a...", "checksum": "<sha256 of the pulled copy>", "paper_tasks": 150, "tasks_run": 150}

`name` is `paper` (the authors' released data at its pin, `suite.task_set=paper`), `project` (the project's own
tasks, under tasks/, at the project's commit) or `local` (files the config points at elsewhere); `paper_tasks`
is the size of the paper's own set (None: the suite stands for no paper), `tasks_run` the tasks this run
selected. A number read beside a paper's table says which of these it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runner.run.paper_data import find_pulled

__all__ = ["describe_task_set", "task_set_identity", "task_set_record", "task_set_tags"]

TAG_PREFIX = "genui.task_set."
PROJECT_ROOT = Path(__file__).resolve().parents[2]  # the project's own task sets live in its tasks/ folder


def task_set_identity(config: Any, suite: Any, *, project_commit: str | None) -> dict[str, Any]:
    """The task set a run of `config` reads (without its size: shards of one run share it)."""
    settings = suite.settings
    identity: dict[str, Any] = {"suite": settings.name, "paper_tasks": suite.paper_tasks}
    if settings.task_set == "paper":
        data_dir = config.resolve_path(config.data_dir)
        copies = [find_pulled(data_dir, name, data) for name, data in settings.paper_data.items()]
        return {"name": "paper", **identity,
                "source": "; ".join(copy.data.pin.source for copy in copies),
                "revision": "; ".join(copy.data.pin.revision for copy in copies),
                "checksum": "; ".join(str(copy.checksum) for copy in copies)}
    source = Path(suite.task_source).resolve() if suite.task_source is not None else None
    own = source is not None and source.is_relative_to(PROJECT_ROOT / "tasks")
    shown = source.relative_to(PROJECT_ROOT).as_posix() if own and source is not None else \
        (str(source) if source is not None else None)
    return {"name": "project" if own else "local", **identity, "source": shown,
            "revision": project_commit if own else None, "checksum": None}


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
