"""The Suite protocol and the per-episode state that carries over between turns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from runner.models.base import Model
from runner.records import TurnRecord
from runner.sandbox.base import ToolBridge
from runner.tasks import Task, TurnSpec


class SuiteSettings(BaseModel):
    """Keys every suite accepts; suites subclass this with their own options."""

    model_config = ConfigDict(extra="forbid")

    name: str
    tasks_path: str | None = None  # file, folder or glob; None: the suite's own task set
    task_ids: list[str] = Field(default_factory=list)  # run only these (empty: all)
    limit: int | None = Field(default=None, ge=1)  # the first N tasks
    turns: int | None = Field(default=None, ge=1)  # the first N turns of each task
    shard: str | None = None  # "I/N": only the I-th of N deterministic parts of the selection (0 <= I < N)

    @field_validator("shard")
    @classmethod
    def _check_shard(cls, value: str | None) -> str | None:
        if value is not None:
            parse_shard(value)
        return value


def parse_shard(value: str) -> tuple[int, int]:
    """'I/N' -> (I, N) with 0 <= I < N; the error names the value."""
    index, sep, count = str(value).strip().partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = -1
    if not sep or n < 1 or not 0 <= i < n:
        raise ValueError(f"shard {value!r} must look like I/N with 0 <= I < N (e.g. 0/4)")
    return i, n


def shard_tasks(tasks: list[Task], shard: str) -> list[Task]:
    """Round-robin over the tasks sorted by id: balanced, and the N parts are disjoint and cover everything."""
    index, count = parse_shard(shard)
    return sorted(tasks, key=lambda task: task.id)[index::count]


@dataclass
class CompactTurn:
    """What later turns see of an earlier one (EvoGenUI-Bench Appendix F.2: compact previous turns)."""

    turn: int
    request: str
    assistant_text: str
    ui_text: str


@dataclass
class EpisodeState:
    """What carries over from turn to turn within one episode."""

    files: dict[str, str] = field(default_factory=dict)  # latest source files
    history: list[CompactTurn] = field(default_factory=list)
    has_artifact: bool = False  # the previous turn produced a built, servable artifact
    runtime_state: Any = None  # tool-grounded runtime state (restored for the next turn)
    extra: dict[str, Any] = field(default_factory=dict)


class Suite(Protocol):
    """A benchmark protocol. Optional hooks (looked up with getattr, defaults in the engine):

    - `artifact_kind`: "vite" (default; a React + Vite build) or "static" (HTML/CSS pages, no build)
    - `artifact_assets(task, turn) -> Path | None`: read-only files served beside a static artifact
    - `async judge_turn(judge, judge_input) -> Verdict`: suite-specific scoring (default: judge.score)
    - `async prepare_judging(task, turn, files, out_dir) -> dict`: execution-phase material for judge_turn
      (renders, located elements), frozen into the packet as `judge_input.suite_context`
    - `record_state(task, turn, outcome_files) -> dict`: extra per-turn state persisted for resume
    """

    name: str
    settings: SuiteSettings
    actor_instructions: str | None  # the suite's actor prompt (ActorContext.instructions); None: the actor's own
    uses_judge: bool  # the run's judge scores its turns (MT-Web2Code micro: False, scored on pixels)
    # Model roles of its own the suite calls (runner/roles.py), given by the run's config under `roles.<name>`.
    required_roles: tuple[str, ...]

    def bind_roles(self, roles: Mapping[str, Model]) -> None:
        """The run's models of `required_roles`, by role, before load_tasks (the suite never builds one)."""

    async def load_tasks(self) -> list[Task]: ...

    def messages(self, task: Task, turn: TurnSpec, episode: EpisodeState) -> list[dict[str, Any]]:
        """The public payload of one turn, in OpenAI chat format."""

    def tool_bridge(self, task: Task, turn: TurnSpec, episode: EpisodeState, evidence_dir: Path) -> ToolBridge | None: ...

    def summarize(self, records: list[TurnRecord], tasks: list[Task]) -> dict[str, Any]: ...


def select_tasks(tasks: list[Task], settings: SuiteSettings) -> list[Task]:
    """Apply task_ids / limit / turns selection, in a deterministic order."""
    chosen = sorted(tasks, key=lambda task: task.id)
    if settings.task_ids:
        known = {task.id for task in chosen}
        missing = [task_id for task_id in settings.task_ids if task_id not in known]
        if missing:
            raise ValueError(f"suite.task_ids: unknown task id(s) {missing}; known: {sorted(known)}")
        chosen = [task for task in chosen if task.id in settings.task_ids]
    if settings.limit is not None:
        chosen = chosen[: settings.limit]
    if settings.shard is not None:  # after limit, so the shards of a limited run add up to that run
        chosen = shard_tasks(chosen, settings.shard)
    if settings.turns is not None:
        chosen = [task.model_copy(update={"turns": task.turns[: settings.turns]}) for task in chosen]
    return chosen
