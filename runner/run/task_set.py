"""What a run measured: the identity of the task set it reads, recorded in lineage.json (and, with the number of
tasks run, in summary.json, the report, the viewer and the MLflow tags: runner/report/task_set.py).

    {"name": "paper", "suite": "evogenui", "source": "https://github.com/MAPS-research/EvoGenUI-Bench.git",
     "revision": "5e2eb00a...", "checksum": "<sha256 of the pulled copy>", "paper_tasks": 150, "tasks_run": 150}

`name` is `paper` (the authors' released data at its pin, `suite.task_set=paper`), `project` (the project's own
tasks, under tasks/, at the project's commit) or `local` (files the config points at elsewhere); `paper_tasks`
is the size of the paper's own set (None: the suite stands for no paper), `tasks_run` the tasks this run
selected. A number read beside a paper's table says which of these it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.suites.paper_data import find_pulled

__all__ = ["task_set_identity"]

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
