"""Both trackers (MLflow's and the null one) offer every member of the RunTracker protocol, with its parameters."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from runner.tracking.protocol import RunTracker
from runner.tracking.tracker import NullTracker, Tracker

_MEMBERS = sorted(name for name in vars(RunTracker) if not name.startswith("_"))
_METHODS = [name for name in _MEMBERS if inspect.isfunction(vars(RunTracker)[name])]


def test_the_protocol_names_what_callers_use() -> None:
    assert set(_MEMBERS) == {"run_id", "experiment_id", "tracking_uri", "task_run", "log_turn", "log_summary",
                             "log_model_call", "log_artifact", "finish"}


@pytest.mark.parametrize("tracker", [NullTracker, Tracker])
@pytest.mark.parametrize("name", _METHODS)
def test_each_tracker_has_each_method_with_its_parameters(tracker: type, name: str) -> None:
    wanted = inspect.signature(vars(RunTracker)[name]).parameters
    given = inspect.signature(getattr(tracker, name)).parameters
    assert [(p.name, p.kind) for p in given.values()] == [(p.name, p.kind) for p in wanted.values()]


def test_the_null_tracker_is_one_and_does_nothing(tmp_path: Path) -> None:
    tracker: RunTracker = NullTracker()
    assert tracker.run_id is None and tracker.experiment_id is None and tracker.tracking_uri is None
    assert tracker.task_run("t") is None
    tracker.log_artifact(tmp_path / "absent.html", artifact_path="x")
    tracker.finish("KILLED")
