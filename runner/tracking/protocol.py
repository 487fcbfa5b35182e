"""What a run asks of its tracker, apart from MLflow: the engine, the judging phase, the run session and the
server-log upload type against this protocol, so importing them never imports MLflow.

`runner.tracking.tracker.Tracker` (MLflow) and `NullTracker` (tracking off: same methods, no effects) both
satisfy it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from runner.tracking.call_traces import ModelCall
    from runner.turns.records import TurnRecord

FinishStatus = Literal["FINISHED", "FAILED", "KILLED"]

__all__ = ["FinishStatus", "RunTracker"]


class RunTracker(Protocol):
    """One job's run in the tracking store; `run_id` is None when tracking is off."""

    @property
    def run_id(self) -> str | None: ...

    @property
    def experiment_id(self) -> str | None: ...

    @property
    def tracking_uri(self) -> str | None: ...

    def task_run(self, task_id: str, *, tags: Mapping[str, Any] | None = None) -> str | None:
        """The nested run of one task (None when tracking is off)."""
        ...

    def log_turn(self, record: TurnRecord, run_dir: Path) -> None:
        ...

    def log_summary(self, summary: Mapping[str, Any], *, run_dir: Path | None = None) -> None:
        ...

    def log_model_call(self, call: ModelCall) -> None:
        ...

    def log_artifact(self, path: Path, *, artifact_path: str | None = None) -> None:
        """Upload one file to the job run (into `artifact_path` when given)."""
        ...

    def finish(self, status: FinishStatus = "FINISHED") -> None:
        ...
