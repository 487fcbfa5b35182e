"""The Suite protocol, its defaults (SuiteBase), the run services a suite gets (SuiteContext), and the
per-episode state that carries over between turns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from runner.actors.base import Actor
from runner.browser.launch import BrowserPools
from runner.turns.generation import STRATEGIES, GenerationStrategy, build_strategy
from runner.judges.base import Judge, JudgeInput
from runner.suites.paper_data import PaperData
from runner.models.base import Model
from runner.models.role import VISION_DEFAULT
from runner.turns.records import FailureBucket, RequirementStatus, TurnRecord, Verdict
from runner.sandbox.base import Sandbox, ToolBridge
from runner.sandbox.web_template import TEMPLATES
from runner.turns.tasks import Task, TurnSpec


class SuiteSettings(BaseModel):
    """Keys every suite accepts; suites subclass this with their own options."""

    model_config = ConfigDict(extra="forbid")

    name: str
    tasks_path: str | None = None  # file, folder or glob; None: the suite's own task set
    task_ids: list[str] = Field(default_factory=list)  # run only these (empty: all)
    limit: int | None = Field(default=None, ge=1)  # the first N tasks
    turns: int | None = Field(default=None, ge=1)  # the first N turns of each task
    shard: str | None = None  # "I/N": only the I-th of N deterministic parts of the selection (0 <= I < N)
    web_template: str | None = None  # the template artifacts build in (runner/sandbox/web_templates); None: default
    generation: str = "single_pass"  # how a slot's answer is generated (runner/turns/generation.py: STRATEGIES)
    # Which tasks: `project`, the project's own (tasks/<suite>, or the paths given); `paper`, the authors' released
    # data as `python -m runner.pull` fetched it into the data dir (`paper_data`; runner/suites/paper_data.py).
    task_set: Literal["project", "paper"] = "project"
    paper_data: dict[str, PaperData] = Field(default_factory=dict)  # the authors' data, by source name

    @field_validator("web_template")
    @classmethod
    def _known_template(cls, value: str | None) -> str | None:
        if value is not None and value not in TEMPLATES:
            raise ValueError(f"unknown web template {value!r}; choose from {sorted(TEMPLATES)}")
        return value

    @field_validator("generation")
    @classmethod
    def _known_generation(cls, value: str) -> str:
        if value not in STRATEGIES:
            raise ValueError(f"unknown generation strategy {value!r}; choose from {sorted(STRATEGIES)}")
        return value

    @field_validator("shard")
    @classmethod
    def _check_shard(cls, value: str | None) -> str | None:
        if value is not None:
            parse_shard(value)
        return value

    @model_validator(mode="after")
    def _paper_data_points_at_suite_keys(self) -> SuiteSettings:
        for name, data in self.paper_data.items():
            for key in data.pin.suite_paths:
                if key not in type(self).model_fields:
                    raise ValueError(f"paper_data.{name}.{data.kind}.suite_paths: {key!r} is no key of suite "
                                     f"{self.name!r}")
        if self.task_set != "paper":
            return self
        if not self.paper_data:
            raise ValueError(f"task_set='paper': the authors of suite {self.name!r} released no data to pull "
                             "(docs/presets.md); run the project's own tasks with task_set=project")
        for name, data in self.paper_data.items():
            for key in data.pin.suite_paths:
                if getattr(self, key) != type(self).model_fields[key].default:
                    raise ValueError(f"{key} is set with task_set='paper', which reads {key} from the pulled "
                                     f"copy of {name}; drop {key}, or run your own files with task_set=project")
        return self


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


ArtifactKind = Literal["vite", "static"]


@dataclass(frozen=True)
class ModelFacts:
    """What a suite may know of one model the run calls: its name, its section as composed (for a suite that
    builds a model of its own from it, WebGen-Bench's tester), its `vision` (as declared, else the one default of
    runner/models/role.py; a suite that needs another behaviour says so in a setting of its own) and whether it
    replays each task's reference answer (model=oracle)."""

    name: str
    section: dict[str, Any]
    vision: bool = VISION_DEFAULT
    replays_reference: bool = False


@dataclass(frozen=True)
class ActorFacts:
    """The run's actor as a suite may know it: its kind's name (for messages), whether it acts at all (actor=none
    does not) and whether the same page gives the same trace (the scripted actor replays its steps)."""

    kind: str
    acts: bool = True
    deterministic: bool = False


@dataclass(frozen=True)
class RunFacts:
    """What a suite may know of the run it is in (`configure_run`), made from the validated config by the run's
    wiring (runner/run/roles.py `run_facts`): the generator, the roles the config declares (`roles.<name>`), the
    judge's model when the judge calls one, the actor, and a turn's time limit."""

    generator: ModelFacts
    actor: ActorFacts
    roles: Mapping[str, ModelFacts] = field(default_factory=dict)
    judge_model: ModelFacts | None = None
    turn_timeout_s: float | None = None


@dataclass
class SuiteContext:
    """The run's shared services a suite may use; it never builds its own.

    `browsers`: the run's browser pools (`concurrency.browsers` of them, the engine's own set): a suite that
    renders checks one out (`async with context.browsers.checkout() as pool`) and never launches a browser.
    `sandbox`: the run's sandbox. `roles`: the run's models by role name (runner/run/roles.py): the suite's own
    `required_roles` (e.g. MT-Web2Code's caption model) before `load_tasks`, then "generator", "judge" and
    "actor" once they are built, before the first turn. `actor`: the run's actor (config `actor`), from then on
    too; None for actor=none.
    """

    browsers: BrowserPools
    sandbox: Sandbox
    roles: dict[str, Model] = field(default_factory=dict)
    actor: Actor | None = None


class Suite(Protocol):
    """A benchmark protocol: its tasks, the payload of each turn, its scoring and its summary.

    A suite's configuration is its SuiteSettings (conf/suite/<name>.yaml); `bind(context)` hands it the
    run's shared services before `load_tasks`. `SuiteBase` gives every member but the four core methods
    a default.
    """

    name: str
    settings: SuiteSettings

    @property
    def artifact_kind(self) -> ArtifactKind:
        """"vite" (a React + Vite build in `web_template`) or "static" (HTML/CSS pages, no build)."""

    @property
    def reads_page_files(self) -> bool:
        """The suite's own scoring or summary may read a slot's load-time screenshots or DOM file."""

    @property
    def web_template(self) -> str | None:
        """The web template artifacts build in (runner.sandbox.web_template.TEMPLATES); None: the default."""

    @property
    def prompt_version(self) -> str:
        """The version of the suite's payload prompt, recorded in lineage.json."""

    @property
    def actor_instructions(self) -> str | None:
        """The suite's actor prompt (ActorContext.instructions); None: the actor's own."""

    @property
    def uses_judge(self) -> bool:
        """False for a suite that scores without the judge's model (it is then never started)."""

    @property
    def actor_on_slot_page(self) -> bool:
        """True: the engine runs the run's actor on each slot's served page (its trace is the slot's). False: the
        suite drives the actor itself (`context.actor`; FlowEval runs every flow on both sites)."""

    @property
    def paper_tasks(self) -> int | None:
        """How many tasks the paper's own set has (the task-set record's `paper_tasks`); None: no paper's set."""

    @property
    def task_source(self) -> Path | None:
        """The file or folder the tasks are read from (the task-set record's `source` outside the paper's set)."""

    def configure_run(self, facts: RunFacts) -> None:
        """Learn what it may know of the run (its roles, the actor, the judge's model) before anything is loaded."""

    def bind(self, context: SuiteContext) -> None:
        """Receive the run's shared services (before load_tasks)."""

    @property
    def context(self) -> SuiteContext:
        """The services `bind` handed over (the run adds its models by role to `context.roles`); a suite asked
        for them before it is bound raises RuntimeError."""

    @property
    def required_roles(self) -> tuple[str, ...]:
        """Model roles of the suite's own it calls, composed by the config under `roles.<name>` and found in
        `context.roles` (the suite never builds a model)."""

    def role_structured_output(self, role: str) -> str | None:
        """How the suite asks one of its own roles for structured output (json_schema, json_object), so the run's
        live check and lineage request what its calls will; None: plain text (the default)."""

    def rubric_versions(self) -> dict[str, str]:
        """Rubric name -> version of every rubric the suite asks its judge (recorded in lineage.json)."""

    def generation_strategy(self) -> GenerationStrategy:
        """How each slot's answer is generated (runner/turns/generation.py), asked once the run's roles are in the
        context; the default builds `settings.generation` by name."""

    def check_task_sources(self) -> list[str] | None:
        """Preflight's cheap check of the task sources (problems found); None: load the tasks instead."""

    def check_resources(self) -> list[tuple[str, str, str]]:
        """Preflight's check of what the suite itself loads besides model roles (a featurizer's weights):
        (config key, what is missing, how to get it) per problem, found without loading anything heavy."""

    async def planned_tasks(self) -> list[Task]:
        """The tasks a run would select, for `run.plan=true`, found without a browser, a build or a model (a
        suite whose loading needs them gives stand-ins with the same ids and turns)."""

    def call_bounds(self, tasks: list[Task], per_use: Mapping[str, int]) -> dict[str, int | None]:
        """The most model calls each role makes over `tasks` (role -> calls; None: no bound known). `per_use`: the
        most calls one use of the run's judge (a slot's verdict) and actor (a trace) makes, for those that call a
        model."""

    async def load_tasks(self) -> list[Task]: ...

    async def messages(self, task: Task, turn: TurnSpec, episode: EpisodeState) -> list[dict[str, Any]]:
        """The public payload of one turn, in OpenAI chat format."""

    def tool_bridge(self, task: Task, turn: TurnSpec, episode: EpisodeState, evidence_dir: Path) -> ToolBridge | None:
        """Tool backends the artifact reaches through `callTool`; None: a suite without tools."""

    def artifact_assets(self, task: Task, turn: TurnSpec) -> Path | None:
        """Read-only files served beside a static artifact (a golden page's images)."""

    def visits_per_slot(self, task: Task) -> int:
        """Browser visits one slot of `task` makes (1: the slot's page; FlowEval: every flow x run), for the run's
        cost estimate (runner/run/estimate.py)."""

    async def prepare_judging(self, task: Task, turn: TurnSpec, files: dict[str, str], out_dir: Path) -> dict[str, Any]:
        """Execution-phase material for judge_turn (renders, located elements), frozen into the packet as
        `judge_input.suite_context`, so judging never browses."""

    async def judge_turn(self, judge: Judge, judge_input: JudgeInput) -> Verdict:
        """The verdict of one slot; the default asks the configured judge."""

    def summarize(self, records: list[TurnRecord], tasks: list[Task]) -> dict[str, Any]: ...

    def turn_reward(self, record: TurnRecord) -> float | None:
        """One judged slot as a scalar in [0, 1] for a training loop (runner/reward); None: not the answer's
        to answer for (the harness or the judge failed, the turn was blocked) or nothing was assessed."""


class SuiteBase:
    """The defaults of every optional member of `Suite`; each suite subclasses this."""

    name: str
    settings: SuiteSettings
    prompt_version: str
    artifact_kind: ArtifactKind = "vite"
    actor_instructions: str | None = None  # the actor keeps its own prompt
    uses_judge: bool = True
    actor_on_slot_page: bool = True
    paper_tasks: int | None = None  # the paper's own set has this many tasks (each suite cites its paper)
    task_source: Path | None = None
    # Whether the suite's own scoring or summary may read a slot's load-time screenshots or DOM file; False lets
    # the reward service leave them out where the judge reads none either (docs/reward.md, lean evidence).
    reads_page_files: bool = True
    _context: SuiteContext | None = None

    @property
    def web_template(self) -> str | None:
        return self.settings.web_template

    def configure_run(self, facts: RunFacts) -> None:
        return None

    def bind(self, context: SuiteContext) -> None:
        self._context = context

    @property
    def context(self) -> SuiteContext:
        if self._context is None:
            raise RuntimeError(f"suite {self.name!r} needs the run's services: call bind(SuiteContext(...)) first")
        return self._context

    @property
    def required_roles(self) -> tuple[str, ...]:
        return ()

    def role_structured_output(self, role: str) -> str | None:
        return None

    def rubric_versions(self) -> dict[str, str]:
        return {}

    def generation_strategy(self) -> GenerationStrategy:
        return build_strategy(self.settings.generation)

    def check_task_sources(self) -> list[str] | None:
        return None

    def check_resources(self) -> list[tuple[str, str, str]]:
        return []

    async def planned_tasks(self) -> list[Task]:
        return await self.load_tasks()  # type: ignore[attr-defined]  # every suite defines load_tasks

    def call_bounds(self, tasks: list[Task], per_use: Mapping[str, int]) -> dict[str, int | None]:
        """One generator call per slot (`single_pass`; a suite with another strategy counts its rounds), the
        judge's per judged slot, the actor's per slot page it visits."""
        slots = sum(len(task.turns) for task in tasks)
        bounds: dict[str, int | None] = {"generator": slots if self.settings.generation == "single_pass" else None}
        if self.uses_judge and "judge" in per_use:
            bounds["judge"] = slots * per_use["judge"]
        if self.actor_on_slot_page and "actor" in per_use:
            bounds["actor"] = slots * per_use["actor"]
        return bounds

    def tool_bridge(self, task: Task, turn: TurnSpec, episode: EpisodeState, evidence_dir: Path) -> ToolBridge | None:
        return None

    def artifact_assets(self, task: Task, turn: TurnSpec) -> Path | None:
        return None

    def visits_per_slot(self, task: Task) -> int:
        return 1

    async def prepare_judging(self, task: Task, turn: TurnSpec, files: dict[str, str], out_dir: Path) -> dict[str, Any]:
        return {}

    async def judge_turn(self, judge: Judge, judge_input: JudgeInput) -> Verdict:
        return await judge.score(judge_input)

    def turn_reward(self, record: TurnRecord) -> float | None:
        return requirement_reward(record)


# Buckets that say nothing about the answer: the harness, the judge or the chain failed, not the model.
NO_REWARD = frozenset({FailureBucket.INFRA, FailureBucket.JUDGE_ERROR, FailureBucket.TRUNCATED,
                       FailureBucket.BLOCKED, FailureBucket.PROVIDER_ERROR})


def requirement_reward(record: TurnRecord) -> float | None:
    """The share of the turn's requirements the judge passed (a failed or unassessed one earns nothing: a
    judge never awards what it did not check); a turn without requirements earns its pass. Any other failure
    bucket earns 0; those in NO_REWARD earn None."""
    if record.status in NO_REWARD:
        return None
    if record.status is not FailureBucket.OK or record.verdict is None:
        return 0.0
    requirements = record.verdict.requirements
    if not requirements:
        return None if record.passed is None else float(record.passed)
    return sum(r.status is RequirementStatus.PASSED for r in requirements) / len(requirements)


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
