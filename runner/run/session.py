"""One run dir's job run in the tracker, from its opening to its finish; a run and a re-judge share it.

`RunSession.open` names the job run (unless `tracking.run_name` is set), opens it with the run's tags (or
reattaches to the one the run dir recorded), records it in the run dir (`tracking.json`), and at the end
uploads the servers' logs and finishes it: FINISHED when the body returns, KILLED when it is interrupted,
FAILED otherwise. `conclude` writes what a finished run leaves: summary.json, the summary in the tracker, the
evidence viewer and the console table.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from runner.config import RunnerConfig
from runner.kinds import KINDS
from runner.models.serving import SERVER_LOG_DIR, log_server_logs
from runner.report.console import print_summary
from runner.tracking import tracker as tracking
from runner.tracking.protocol import FinishStatus, RunTracker
from runner.turns.records import RunDirectory, TurnRecord

log = logging.getLogger(__name__)

__all__ = ["RunSession", "rejudge_run_name", "run_name", "write_run_viewer"]


def _compared(config: RunnerConfig) -> str:
    """What a grid of runs compares, so grids read well in the MLflow UI (an agent beside its model)."""
    agent = KINDS.chosen("agent", config.agent)
    generator = config.model.name if agent.inert else f"{config.model.name}+{config.agent.name}"
    return "/".join([config.suite.name, generator, config.judge.name, config.actor.name])


def run_name(config: RunnerConfig) -> str:
    """A run's job-run name: what it compares, then its shard and repeat when it has them."""
    shard = getattr(config.suite, "shard", None)
    suffix = (f"#{shard}" if shard else "") + (f"#r{config.repeat}" if config.repeat else "")
    return _compared(config) + suffix


def rejudge_run_name(config: RunnerConfig, ablated: list[str]) -> str:
    """A re-judge's job-run name: the run it re-judges, and the evidence sources it judged without."""
    suffix = f" without {','.join(ablated)}" if ablated else ""
    return f"rejudge {_compared(config)}{suffix}"


def write_run_viewer(run_dir: Path, tasks: list[Any], tracker: RunTracker) -> Path | None:
    """The run's static evidence viewer (report.html) and task library (tasks.json), logged to the job run.

    A viewer problem never fails a run: the records and summary are already written."""
    try:
        from runner.report.viewer import write_run_report

        path = write_run_report(run_dir, tasks=tasks)
    except Exception:
        log.exception("writing the evidence viewer (report.html) failed")
        return None
    if tracker.run_id is not None:
        try:
            tracker.log_artifact(path)
        except Exception:
            log.exception("logging report.html to MLflow failed")
    return path


@dataclass
class RunSession:
    """A run dir and its open job run."""

    run_dir: RunDirectory
    tracker: RunTracker
    console: Console

    @classmethod
    @asynccontextmanager
    async def open(cls, config: RunnerConfig, run_dir: RunDirectory, *, name: str, tags: Mapping[str, str],
                   reattach: bool, console: Console) -> AsyncIterator[RunSession]:
        """The job run named `name` (unless the config names it), tagged with what ran and `tags`.

        `reattach`: continue the job run the run dir recorded, if it has one (a resumed run)."""
        settings = config.tracking
        if settings.run_name is None:
            settings = settings.model_copy(update={"run_name": name})
        reference = tracking.load_run_ref(run_dir.path) if reattach else None
        tracker = tracking.Tracker.open(
            settings,
            project_root=Path(config.project_root),
            run_params=config.model_dump(mode="json"),
            tags={"suite": config.suite.name, "model": config.model.name, "judge": config.judge.name,
                  "run_dir": str(run_dir.path), **tags},
            resume_run_id=reference["run_id"] if reference else None,
        )
        tracking.save_run_ref(run_dir.path, tracker)
        status: FinishStatus = "FAILED"
        try:
            yield cls(run_dir=run_dir, tracker=tracker, console=console)
            status = "FINISHED"
        except (KeyboardInterrupt, asyncio.CancelledError):
            status = "KILLED"
            raise
        finally:
            log_server_logs(tracker, run_dir.path / SERVER_LOG_DIR)
            tracker.finish(status)

    async def conclude(self, summary: dict[str, Any], *, tasks: list[Any], records: list[TurnRecord]) -> None:
        """summary.json, the summary in the tracker, the evidence viewer, and the summary on the console."""
        self.run_dir.write_json(RunDirectory.SUMMARY, summary)
        try:
            await asyncio.to_thread(self.tracker.log_summary, summary, run_dir=self.run_dir.path)
        except Exception:  # the run dir is the record of truth; a tracking hiccup is only a warning
            log.exception("logging the summary to MLflow failed")
        await asyncio.to_thread(write_run_viewer, self.run_dir.path, tasks, self.tracker)
        print_summary(self.console, summary, records)
        self.console.print(f"evidence of every turn: python -m runner.view {self.run_dir.path}", markup=False,
                           highlight=False, soft_wrap=True)  # unwrapped: a command to copy
