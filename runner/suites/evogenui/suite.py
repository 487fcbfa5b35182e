"""suite=evogenui: EvoGenUI-Bench (seed 000), multi-turn interface maintenance in three sub-suites.

- Tasks: EvoGenUI's own JSON format (loader.py), the project's set under tasks/evogenui or any
  file / folder / glob given as `suite.tasks_path`; `suite.sub_suites` picks presentation,
  interaction and/or tool_grounded.
- Tool-grounded tasks bind their tools to backend modules (backends.py) in `suite.tool_backends_path`.
  Every backend of every selected task is checked when the tasks load: a missing one stops the run
  before any model call, naming the task, the tool and the fixture id (a run with an unusable task
  set would only produce a column of infra failures; fixing a path is cheaper than re-running).
- Payload: Appendix F.2 (payload.py). Runtime state: runtime.py. Metrics: §4.3 / Appendix C.2
  (runner.metrics.reliability) plus a Table-2-shaped table (table2.py) and the failure-mechanism
  counts of §6.1 (taxonomy.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from runner.judges.llm_bundle import final_dom_path
from runner.metrics.basic import basic_summary
from runner.records import TurnRecord, Verdict, write_json_atomic
from runner.sandbox.base import ToolBridge
from runner.suites.base import EpisodeState, SuiteSettings, select_tasks
from runner.suites.evogenui.backends import BackendError, public_tool_contract
from runner.suites.evogenui.loader import SUB_SUITES, load_file
from runner.suites.evogenui.payload import PROMPT_VERSION, build_turn_messages
from runner.suites.evogenui.resources import RESOURCE_LOG_FILE, served_resources
from runner.suites.evogenui.runtime import turn_start_state
from runner.suites.evogenui.table2 import table2
from runner.suites.evogenui.taxonomy import classify_turn, dom_text, mechanism_counts
from runner.suites.native import TaskFormatError, expand_task_paths
from runner.tasks import Task, TurnSpec

PROJECT_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_TASKS = PROJECT_ROOT / "tasks" / "evogenui"
BACKENDS_DIR = "backends"
SUB_SUITE_NAMES = tuple(SUB_SUITES.values())  # presentation, interaction, tool_grounded

STATE_IN_FILE = "state_in.json"
TOOL_LOG_FILE = "tool_log.jsonl"  # read by the rules judge (runner/judges/rules.py)
STATE_FILE = "state.json"


class MissingToolBackendError(TaskFormatError):
    """A selected tool-grounded task names a fixture id that has no usable backend module."""


class EvoGenUISuiteSettings(SuiteSettings):
    # tasks_path (inherited): file, folder or glob; None: tasks/evogenui of the project.
    tool_backends_path: str | None = None  # None: <tasks folder>/backends if present, else tasks/evogenui/backends
    sub_suites: list[str] = Field(default_factory=list)  # empty: all three
    history_turns: int | None = Field(default=None, ge=0)  # compact previous turns shown; None: all (F.2)
    assistant_text_chars: int | None = Field(default=2000, ge=1)  # per previous turn; None: unclipped
    ui_text_chars: int | None = Field(default=2000, ge=1)  # final UI text per previous turn; None: unclipped
    bootstrap_resamples: int = Field(default=1000, ge=1)  # Appendix C.2 task-level bootstrap
    bootstrap_seed: int = 0
    ci_alpha: float = Field(default=0.05, gt=0, lt=1)  # 95% intervals

    @field_validator("sub_suites")
    @classmethod
    def _known_sub_suites(cls, value: list[str]) -> list[str]:
        unknown = [name for name in value if name not in SUB_SUITE_NAMES]
        if unknown:
            raise ValueError(f"unknown sub-suite(s) {unknown}; choose from {list(SUB_SUITE_NAMES)}")
        return value


class EvoGenUISuite:
    name = "evogenui"
    prompt_version = PROMPT_VERSION  # the Appendix F.2 payload, recorded in lineage.json

    def __init__(self, settings: EvoGenUISuiteSettings, *, project_root: Path) -> None:
        self.settings = settings
        self.project_root = Path(project_root)
        self.tasks_spec = self._tasks_spec()
        self.backends_path = self._backends_path()
        self._contracts: dict[str, dict[str, Any]] = {}  # task id -> public contract (built once)
        self._tasks: dict[str, Task] = {}

    # -- paths -------------------------------------------------------------------------------------

    def _resolve(self, spec: str) -> Path:
        path = Path(spec).expanduser()
        return path if path.is_absolute() else self.project_root / path

    def _tasks_spec(self) -> Path:
        return DEFAULT_TASKS if self.settings.tasks_path is None else self._resolve(self.settings.tasks_path)

    def _backends_path(self) -> Path:
        if self.settings.tool_backends_path is not None:
            return self._resolve(self.settings.tool_backends_path)
        spec = self.tasks_spec
        beside = (spec if spec.is_dir() else spec.parent) / BACKENDS_DIR
        return beside if beside.is_dir() else DEFAULT_TASKS / BACKENDS_DIR

    # -- tasks -------------------------------------------------------------------------------------

    def _task_files(self) -> list[Path]:
        """Task JSON files; *.schema.json files and anything under the backends folder (configured, or
        `backends/` beside the tasks) are never task files (backends may keep JSON fixtures)."""
        files = expand_task_paths(self.tasks_spec, suffixes=(".json",))
        spec = self.tasks_spec
        excluded = {self.backends_path.resolve(), ((spec if spec.is_dir() else spec.parent) / BACKENDS_DIR).resolve()}
        return [
            file
            for file in files
            if not file.name.endswith(".schema.json") and not excluded & set(file.resolve().parents)
        ]

    def _load_all(self) -> list[Task]:
        files = self._task_files()
        if not files:
            raise TaskFormatError(f"{self.tasks_spec}: no EvoGenUI task files found (expected a file, a folder or a glob)")
        tasks: list[Task] = []
        origin: dict[str, Path] = {}
        for file in files:
            for task in load_file(file):
                if task.id in origin:
                    raise TaskFormatError(f"{file}: task id {task.id!r} already defined in {origin[task.id]}")
                origin[task.id] = file
                tasks.append(task)
        return tasks

    def _check_backends(self, tasks: list[Task]) -> None:
        """Build every public tool contract now, so a missing or broken backend fails before any work."""
        problems: list[str] = []
        for task in tasks:
            bindings = task.extra.get("tools", {})
            if not bindings:
                continue
            missing = sorted({binding["fixture_id"] for binding in bindings.values()
                              if not (self.backends_path / f"{binding['fixture_id']}.py").is_file()})
            if missing:
                for fixture_id in missing:
                    tools = sorted(name for name, binding in bindings.items() if binding["fixture_id"] == fixture_id)
                    problems.append(
                        f"task {task.id!r} ({task.source_path}): no tool backend for fixture id {fixture_id!r} "
                        f"(tools {', '.join(tools)}): {fixture_id}.py not found in {self.backends_path}"
                    )
                continue
            try:
                self._contracts[task.id] = public_tool_contract(task, self.backends_path)
            except BackendError as error:
                problems.append(f"task {task.id!r} ({task.source_path}): {error}")
        if problems:
            raise MissingToolBackendError(
                "tool-grounded task(s) cannot run:\n  " + "\n  ".join(problems)
                + "\n  (set suite.tool_backends_path=DIR to a folder of <fixture_id>.py backend modules,"
                " or leave these tasks out with suite.sub_suites / suite.task_ids)"
            )

    async def load_tasks(self) -> list[Task]:
        tasks = self._load_all()
        if self.settings.sub_suites:
            tasks = [task for task in tasks if task.sub_suite in self.settings.sub_suites]
            if not tasks:
                raise TaskFormatError(f"{self.tasks_spec}: no task of sub-suite(s) {self.settings.sub_suites}")
        tasks = select_tasks(tasks, self.settings)
        self._check_backends(tasks)
        self._tasks = {task.id: task for task in tasks}
        return tasks

    # -- turn hooks --------------------------------------------------------------------------------

    def public_contract(self, task: Task) -> dict[str, Any]:
        """The task's public tool and resource contracts (tools from the backends' TOOL_SCHEMAS)."""
        if task.id not in self._contracts:
            if task.extra.get("tools"):
                self._contracts[task.id] = public_tool_contract(task, self.backends_path)
            else:
                self._contracts[task.id] = dict(task.public_contract)
        return self._contracts[task.id]

    def messages(self, task: Task, turn: TurnSpec, episode: EpisodeState) -> list[dict[str, Any]]:
        s = self.settings
        return build_turn_messages(
            task,
            turn,
            episode,
            public_contract=self.public_contract(task),
            history_turns=s.history_turns,
            assistant_text_chars=s.assistant_text_chars,
            ui_text_chars=s.ui_text_chars,
        )

    def tool_bridge(self, task: Task, turn: TurnSpec, episode: EpisodeState, evidence_dir: Path) -> ToolBridge | None:
        bindings = task.extra.get("tools", {})
        declared_resources = task.public_contract.get("resources", [])
        if not bindings and not declared_resources:
            return None
        evidence_dir = Path(evidence_dir)
        state_in = evidence_dir / STATE_IN_FILE
        start_state = turn_start_state(task, self.backends_path, episode.runtime_state) if bindings else {}
        write_json_atomic(state_in, start_state)
        log_out = evidence_dir / TOOL_LOG_FILE
        log_out.write_text("")  # exists and is empty: "never called" then fails instead of being unassessed
        extra: dict[str, Any] = {}
        if declared_resources:  # served by the artifact server, every read logged (resources.py)
            extra["resources"] = served_resources(task, self.backends_path, start_state)
            (evidence_dir / RESOURCE_LOG_FILE).write_text("")
        return ToolBridge(
            backends_path=self.backends_path,
            fixture_ids={name: binding["fixture_id"] for name, binding in sorted(bindings.items())},
            state_in=state_in,
            log_out=log_out,
            state_out=evidence_dir / STATE_FILE,
            extra=extra,
        )

    async def judge_turn(self, judge: Any, judge_input: Any) -> Verdict:
        """The configured judge's verdict, plus the diagnostic mechanism (§6.1) of a non-passing turn
        when the judge did not give one. The label never changes the pass decision."""
        verdict: Verdict = await judge.score(judge_input)
        evidence = judge_input.evidence
        if verdict.mechanism is None:
            path = final_dom_path(judge_input)  # the DOM the actor left, else the load-time one
            dom = dom_text(path) if path is not None else None
            label = classify_turn(
                verdict,
                judge_input.turn,
                build_ok=judge_input.build.ok,
                load_error=evidence.load_error if evidence is not None else "",
                blank=evidence.blank if evidence is not None else False,
                dom=dom,
            )
            if label is not None:
                verdict.mechanism = label.mechanism.value
                verdict.summary = f"{verdict.summary}; mechanism: {label.mechanism.value} ({label.basis})".lstrip("; ")
        return verdict

    # -- metrics -----------------------------------------------------------------------------------

    def summarize(self, records: list[TurnRecord], tasks: list[Task]) -> dict[str, Any]:
        from runner.metrics.reliability import summarize as reliability_summary

        s = self.settings
        requested = sum(len(task.turns) for task in tasks)
        summary = basic_summary(records, requested_slots=requested)
        summary["failure_mechanisms"] = mechanism_counts(records)
        lengths = sorted({len(task.turns) for task in tasks})
        if len(lengths) != 1:
            # TP@N and CPT compare episodes of one length N (the paper's N = 5); mixed lengths have none.
            summary["reliability_note"] = f"episode metrics need tasks of one length, got lengths {lengths}"
            return summary
        n_turns = lengths[0]
        summary["turns_per_task"] = n_turns
        known = {task.id for task in tasks}
        chosen = [record for record in records if record.task_id in known and record.turn <= n_turns]
        if not tasks:
            return summary
        options = {"n_resamples": s.bootstrap_resamples, "seed": s.bootstrap_seed, "alpha": s.ci_alpha,
                   "requested_tasks": {task.id: task.sub_suite for task in tasks}}
        summary["reliability"] = reliability_summary(chosen, turns_per_task=n_turns, **options)
        summary["table2"] = table2(chosen, n_turns, **options)
        return summary

