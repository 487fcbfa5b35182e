"""The tool runtime's state at the start of a turn (EvoGenUI-Bench §4.1: later turns use "for tool-grounded
tasks, restored runtime state"; B.2: "initial state" is private to execution and evaluation).

Turn 1 starts from the initial state, every later turn from the state the previous turn's user
interactions left (the engine carries it in EpisodeState.runtime_state). The initial state is

    the merge of every backend module's optional initial state, in fixture-id order:
        INITIAL_STATE = {...}            (a dict), or
        def initial_state() -> dict      (called once per episode; wins over INITIAL_STATE)
    then the task's own private `initial_state` object (task JSON, top level) on top.

Merging is shallow (top-level keys): backends sharing one task keep their data under their own keys.
All backends of a task share that one state dict, as the artifact server passes it to every `invoke`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from runner.suites.evogenui.backends import BackendError, task_backends
from runner.turns.tasks import Task


def initial_runtime_state(task: Task, backends_path: Path) -> dict[str, Any]:
    """The runtime state of turn 1 (a fresh, JSON-serialisable dict)."""
    state: dict[str, Any] = {}
    for fixture_id, module in sorted(task_backends(task, backends_path).items()):
        if callable(getattr(module, "initial_state", None)):
            initial = module.initial_state()
        else:
            initial = getattr(module, "INITIAL_STATE", {})
        if not isinstance(initial, dict):
            raise BackendError(f"backend {fixture_id!r}: the initial state must be a dict, got {type(initial).__name__}")
        state.update(copy.deepcopy(initial))
    task_state = task.extra.get("initial_state")
    if isinstance(task_state, dict):
        state.update(copy.deepcopy(task_state))
    try:
        return json.loads(json.dumps(state))
    except (TypeError, ValueError) as error:
        raise BackendError(f"task {task.id!r}: the initial runtime state is not JSON: {error}") from error


def turn_start_state(task: Task, backends_path: Path, carried: Any) -> dict[str, Any]:
    """The state a turn starts from: what the previous turn left, else the initial state."""
    if isinstance(carried, dict):
        return copy.deepcopy(carried)
    return initial_runtime_state(task, backends_path)
