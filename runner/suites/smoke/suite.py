"""suite=smoke: a few small multi-turn tasks of the project's own that exercise the whole path quickly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.metrics.basic import basic_summary
from runner.turns.records import TurnRecord
from runner.suites.base import EpisodeState, SuiteBase, SuiteSettings, select_tasks
from runner.suites.native import load_native_tasks
from runner.suites.payload import PROMPT_VERSION, build_webapp_messages
from runner.turns.tasks import Task, TurnSpec

DEFAULT_TASKS = Path(__file__).resolve().parents[3] / "tasks" / "smoke"


class SmokeSuiteSettings(SuiteSettings):
    pass


class SmokeSuite(SuiteBase):
    name = "smoke"
    prompt_version = PROMPT_VERSION  # recorded in lineage.json
    reads_page_files = False  # the judge's verdict is the score; the summary counts records

    def __init__(self, settings: SmokeSuiteSettings, *, project_root: Path) -> None:
        self.settings = settings
        self.project_root = project_root

    @property
    def task_source(self) -> Path:
        spec = self.settings.tasks_path
        return DEFAULT_TASKS if spec is None else (Path(spec) if Path(spec).is_absolute() else self.project_root / spec)

    async def load_tasks(self) -> list[Task]:
        return select_tasks(load_native_tasks(self.task_source, suite=self.name), self.settings)

    async def messages(self, task: Task, turn: TurnSpec, episode: EpisodeState) -> list[dict[str, Any]]:
        return build_webapp_messages(task, turn, episode)

    def summarize(self, records: list[TurnRecord], tasks: list[Task]) -> dict[str, Any]:
        from runner.metrics.reliability import summarize as reliability_summary

        requested = sum(len(task.turns) for task in tasks)
        summary = basic_summary(records, requested_slots=requested)
        lengths = {len(task.turns) for task in tasks}
        if len(lengths) == 1:  # episode metrics (TP@N, CPT, APR) need episodes of one length
            summary["reliability"] = reliability_summary(
                records, turns_per_task=lengths.pop(), requested_tasks={task.id: task.sub_suite for task in tasks})
        return summary


SUITE_ENTRY = (SmokeSuiteSettings, SmokeSuite)
