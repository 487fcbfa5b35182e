"""suite=evogenui: EvoGenUI-Bench, multi-turn interface maintenance in three sub-suites.

- Tasks: EvoGenUI's own JSON format (loader.py), the project's set under tasks/evogenui or any
  file / folder / glob given as `suite.tasks_path`; `suite.sub_suites` picks presentation,
  interaction and/or tool_grounded.
- `suite.benchmark_path`: a checkout of the published benchmark, run unchanged (checkout.py): its task
  folders, its `runtime` package of tool backends (the benchmark's call convention and scenario state
  layout in the artifact server: tool_bridge.py), its scaffold as the web template (`evogenui`) and, with
  `suite.prompts=benchmark`, its own prompts (benchmark_prompts.py).
- Tool-grounded tasks bind their tools to backend modules (backends.py) in `suite.tool_backends_path`.
  Every backend of every selected task is checked when the tasks load: a missing one stops the run
  before any model call, naming the task, the tool and the fixture id (a run with an unusable task
  set would only produce a column of infra failures; fixing a path is cheaper than re-running).
- Payload: Appendix F.2 (payload.py). Runtime state: runtime.py. Metrics: §4.3 / Appendix C.2
  (runner.metrics.reliability) plus a Table-2-shaped table (table2.py), Table 6's requested-slot
  accounting (runner.suites.evogenui.slot_accounting) and the failure-mechanism counts of §6.1 (taxonomy.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, field_validator, model_validator

from runner.judges.base import Judge, JudgeInput
from runner.judges.llm_bundle import final_dom_path
from runner.metrics.basic import basic_summary
from runner.metrics.reliability import Unobserved
from runner.suites.evogenui.slot_accounting import slot_accounting
from runner.turns.evidence_folder import EvidenceFolder
from runner.turns.records import TurnRecord, Verdict
from runner.sandbox.base import ToolBridge
from runner.suites.base import EpisodeState, RunFacts, SuiteBase, SuiteSettings, select_tasks
from runner.suites.evogenui.backends import BackendError, public_tool_contract
from runner.suites.evogenui.benchmark_prompts import BenchmarkPrompts, load_benchmark_prompts, use_benchmark_evaluator
from runner.suites.evogenui.diagnosis import DIAGNOSIS_VERSION, DiagnosisError, diagnose
from runner.suites.evogenui.checkout import (
    RUNTIME_PACKAGE,
    BenchmarkCheckout,
    CheckoutError,
    api_doc,
    initial_scenario_states,
    scenario_fixtures,
)
from runner.suites.evogenui.loader import SUB_SUITES, load_file
from runner.suites.evogenui.payload import PROMPT_VERSION, build_turn_messages
from runner.suites.evogenui.resources import served_resources
from runner.suites.evogenui.runtime import turn_start_state
from runner.suites.evogenui.table2 import table2
from runner.suites.evogenui.taxonomy import classify_turn, dom_text, mechanism_counts
from runner.suites.evogenui import tool_bridge
from runner.suites.native import TaskFormatError, expand_task_paths
from runner.turns.tasks import Task, TurnSpec

PROJECT_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_TASKS = PROJECT_ROOT / "tasks" / "evogenui"
BACKENDS_DIR = "backends"
SUB_SUITE_NAMES = tuple(SUB_SUITES.values())  # presentation, interaction, tool_grounded
DIAGNOSTIC_ROLE = "diagnostic"  # the §6.1 diagnostic judge's model role (roles.diagnostic)
BRIDGE_RUNTIME = Path(tool_bridge.__file__)  # the tool semantics the sandboxed artifact server runs


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
    # EvoGenUI-Bench eq. 3: a transition into an infra / judge_error / truncated / missing slot has no observed p_{T,t}:
    # "exclude" leaves it out (counted beside APR); "fail" counts it as a failed retention (older reading).
    apr_unobserved: Unobserved = "exclude"
    # Who labels the failure mechanism of a non-passing turn (§6.1, Appendix D.2.2; diagnosis.py):
    # judge: the separate diagnostic call with previous-turn context (the paper), by the model of `roles.diagnostic`
    # when the run composes it, else by the evaluator's own model (an LLM judge; the paper names no diagnostic model);
    # evaluator: the turn evaluator's own label from the same call, else the rule-based classifier (taxonomy.py);
    # auto: judge when the run has a model to ask (roles.diagnostic or an LLM judge), else evaluator (the summary
    # names which was used, and whose model).
    diagnosis: Literal["auto", "judge", "evaluator"] = "auto"
    diagnosis_structured_output: Literal["json_schema", "json_object", "none"] = "json_schema"
    diagnosis_max_attempts: int = Field(default=3, ge=1, le=10)  # malformed answers retried, then unclassified
    benchmark_path: str | None = None  # a checkout of EvoGenUI-Bench: its tasks, backends, scaffold (and prompts)
    prompts: Literal["own", "benchmark"] = "own"  # benchmark: the checkout's generator/evaluator/actor prompts
    # web_template (inherited; `template` is its older name): None: `evogenui` with a checkout, else the default
    web_template: str | None = Field(default=None, validation_alias=AliasChoices("web_template", "template"))

    @model_validator(mode="after")
    def _prompts_need_checkout(self) -> "EvoGenUISuiteSettings":
        if self.prompts == "benchmark" and self.benchmark_path is None and self.task_set != "paper":
            raise ValueError("prompts='benchmark' reads the prompts from the checkout: set suite.benchmark_path")
        return self

    @field_validator("sub_suites")
    @classmethod
    def _known_sub_suites(cls, value: list[str]) -> list[str]:
        unknown = [name for name in value if name not in SUB_SUITE_NAMES]
        if unknown:
            raise ValueError(f"unknown sub-suite(s) {unknown}; choose from {list(SUB_SUITE_NAMES)}")
        return value


class EvoGenUISuite(SuiteBase):
    name = "evogenui"
    prompt_version = PROMPT_VERSION  # the Appendix F.2 payload, recorded in lineage.json
    paper_tasks = 150  # EvoGenUI-Bench §5.1: "150 five-turn tasks", three suites of 50

    def __init__(self, settings: EvoGenUISuiteSettings, *, project_root: Path) -> None:
        self.settings = settings
        self.project_root = Path(project_root)
        self.checkout = BenchmarkCheckout(self._resolve(settings.benchmark_path)) if settings.benchmark_path else None
        self.tasks_spec = self._tasks_spec()
        self.backends_path = self._backends_path()
        self._contracts: dict[str, dict[str, Any]] = {}  # task id -> public contract (built once)
        self._definitions: dict[str, dict[str, dict[str, Any]]] = {}  # checkout tasks: tool runtime contracts
        self._tasks: dict[str, Task] = {}
        self.benchmark_prompts: BenchmarkPrompts | None = (
            load_benchmark_prompts(self.checkout) if self.checkout is not None and settings.prompts == "benchmark" else None
        )
        # "judge" or "evaluator" once configure_run has seen the run's roles (auto resolves there).
        self.diagnosis: str = "evaluator" if settings.diagnosis == "auto" else settings.diagnosis
        # The role whose model the diagnostic judge calls: its own, or the evaluator's ("judge").
        self.diagnostic_model_role = DIAGNOSTIC_ROLE
        self.diagnosis_vision = False

    def configure_run(self, facts: RunFacts) -> None:
        """Resolve `diagnosis: auto` and the diagnostic judge's model against the run's roles (its own role, else
        an LLM judge's model), and learn whether that model has vision (undeclared: none)."""
        evaluator_model = facts.judge_model
        own_model = facts.roles.get(DIAGNOSTIC_ROLE)
        if self.settings.diagnosis == "auto":
            self.diagnosis = "judge" if own_model is not None or evaluator_model is not None else "evaluator"
        use_evaluator = own_model is None and evaluator_model is not None
        self.diagnostic_model_role = "judge" if use_evaluator else DIAGNOSTIC_ROLE
        model = evaluator_model if use_evaluator else own_model
        if model is not None:
            self.diagnosis_vision = bool(model.vision)

    @property
    def required_roles(self) -> tuple[str, ...]:
        """The §6.1 diagnostic judge's own model role, `roles.diagnostic` (runner/run/roles.py), unless it asks the
        evaluator's model."""
        asks_own = self.diagnosis == "judge" and self.diagnostic_model_role == DIAGNOSTIC_ROLE
        return (DIAGNOSTIC_ROLE,) if asks_own else ()

    def role_structured_output(self, role: str) -> str | None:
        """The diagnostic judge's answer is structured (diagnosis.py) as `suite.diagnosis_structured_output` says."""
        mode = self.settings.diagnosis_structured_output
        return mode if role == DIAGNOSTIC_ROLE and mode != "none" else None

    def rubric_versions(self) -> dict[str, str]:
        return {"evogenui-diagnosis": DIAGNOSIS_VERSION} if self.diagnosis == "judge" else {}

    def call_bounds(self, tasks: list[Task], per_use: Mapping[str, int]) -> dict[str, int | None]:
        """The shared bounds, plus §6.1's diagnostic call (and its retries) on each slot that does not pass, by
        the diagnostic role's model or the evaluator's."""
        bounds = super().call_bounds(tasks, per_use)
        if self.diagnosis == "judge":
            role = self.diagnostic_model_role
            calls = sum(len(task.turns) for task in tasks) * self.settings.diagnosis_max_attempts
            bounds[role] = None if role in bounds and bounds[role] is None else (bounds.get(role) or 0) + calls
        return bounds

    @property
    def web_template(self) -> str | None:
        """The template artifacts build in (the engine passes it to the sandbox); None: the default."""
        if self.settings.web_template is not None:
            return self.settings.web_template
        return "evogenui" if self.checkout is not None else None

    @property
    def actor_instructions(self) -> str | None:
        """The checkout's actor prompt (`ACTOR_SYSTEM_PROMPT_EXTEND`) with `prompts=benchmark`; None: the actor's own."""
        return self.benchmark_prompts.actor_system_extension if self.benchmark_prompts is not None else None

    @property
    def prompt_version(self) -> str:
        """Recorded in the lineage: the benchmark's prompt hashes, or the project's own prompt version."""
        return self.benchmark_prompts.version() if self.benchmark_prompts is not None else PROMPT_VERSION

    # -- paths -------------------------------------------------------------------------------------

    def _resolve(self, spec: str) -> Path:
        path = Path(spec).expanduser()
        return path if path.is_absolute() else self.project_root / path

    @property
    def task_source(self) -> Path:
        return self.tasks_spec

    def _tasks_spec(self) -> Path:
        if self.settings.tasks_path is None and self.checkout is not None:
            return self.checkout.root / "bench" / "task_subsets"
        return DEFAULT_TASKS if self.settings.tasks_path is None else self._resolve(self.settings.tasks_path)

    def _backends_path(self) -> Path:
        if self.checkout is not None:  # the `runtime` package, mounted as a whole into the artifact server
            return self.checkout.runtime_dir
        if self.settings.tool_backends_path is not None:
            return self._resolve(self.settings.tool_backends_path)
        spec = self.tasks_spec
        beside = (spec if spec.is_dir() else spec.parent) / BACKENDS_DIR
        return beside if beside.is_dir() else DEFAULT_TASKS / BACKENDS_DIR

    # -- tasks -------------------------------------------------------------------------------------

    def _task_files(self) -> list[Path]:
        """Task JSON files; *.schema.json files and anything under the backends folder (configured, or
        `backends/` beside the tasks) are never task files (backends may keep JSON fixtures)."""
        if self.checkout is not None and self.settings.tasks_path is None:
            return self.checkout.task_files()  # bench/task_subsets/<suite>_50/*.json
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
        if self.checkout is not None:
            return self._check_checkout_backends(tasks)
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

    def _check_checkout_backends(self, tasks: list[Task]) -> None:
        """Every tool of every selected task bound to the checkout's backend, before any work."""
        assert self.checkout is not None
        problems: list[str] = []
        for task in tasks:
            if not task.extra.get("tools"):
                continue
            try:
                definitions = self.checkout.tool_definitions(task)
                scenario_fixtures(task)
            except CheckoutError as error:
                problems.append(f"task {task.id!r}: {error}")
                continue
            self._definitions[task.id] = definitions
            contract = dict(task.public_contract)
            contract["tools"] = [api_doc(definition) for definition in definitions.values()]
            self._contracts[task.id] = contract
        if problems:
            raise MissingToolBackendError("tool-grounded task(s) cannot run:\n  " + "\n  ".join(problems))

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
            if task.extra.get("tools") and self.checkout is not None:
                self._check_checkout_backends([task])
            elif task.extra.get("tools"):
                self._contracts[task.id] = public_tool_contract(task, self.backends_path)
            else:
                self._contracts[task.id] = dict(task.public_contract)
        return self._contracts[task.id]

    async def messages(self, task: Task, turn: TurnSpec, episode: EpisodeState) -> list[dict[str, Any]]:
        s = self.settings
        messages = build_turn_messages(
            task,
            turn,
            episode,
            public_contract=self.public_contract(task),
            history_turns=s.history_turns,
            assistant_text_chars=s.assistant_text_chars,
            ui_text_chars=s.ui_text_chars,
        )
        if self.benchmark_prompts is not None:  # the benchmark's own system prompt and output contract
            messages[0] = {"role": "system", "content": self.benchmark_prompts.generator_system}
        return messages

    def tool_bridge(self, task: Task, turn: TurnSpec, episode: EpisodeState, evidence_dir: Path) -> ToolBridge | None:
        bindings = task.extra.get("tools", {})
        declared_resources = task.public_contract.get("resources", [])
        if not bindings and not declared_resources:
            return None
        folder = EvidenceFolder(evidence_dir)
        if self.checkout is not None:
            return self._benchmark_bridge(task, turn, episode, folder)
        start_state = turn_start_state(task, self.backends_path, episode.runtime_state) if bindings else {}
        # The logs exist and are empty: "never called" then fails instead of being unassessed.
        folder.start_tool_logs(start_state, resources=bool(declared_resources))
        extra: dict[str, Any] = {}
        if declared_resources:  # served by the artifact server, every read logged (resources.py)
            extra["resources"] = served_resources(task, self.backends_path, start_state)
        return ToolBridge(
            backends_path=self.backends_path,
            fixture_ids={name: binding["fixture_id"] for name, binding in sorted(bindings.items())},
            state_in=folder.state_in,
            log_out=folder.tool_log,
            state_out=folder.state,
            runtime=BRIDGE_RUNTIME,
            extra=extra,
        )

    def _benchmark_bridge(self, task: Task, turn: TurnSpec, episode: EpisodeState,
                          folder: EvidenceFolder) -> ToolBridge:
        """The benchmark's layout: scenario states ({"scenarios": {...}}) carried across turns, the
        checkout's `runtime` package, tool definitions and scenario fixtures (private, server-side only)."""
        self.public_contract(task)
        carried = episode.runtime_state
        start = carried if isinstance(carried, dict) and isinstance(carried.get("scenarios"), dict) \
            else initial_scenario_states(task)
        folder.start_tool_logs(start, resources=False)
        definitions = self._definitions[task.id]
        return ToolBridge(
            backends_path=self.backends_path,
            fixture_ids={name: definition["fixture_id"] for name, definition in definitions.items()},
            state_in=folder.state_in,
            log_out=folder.tool_log,
            state_out=folder.state,
            runtime=BRIDGE_RUNTIME,
            extra={
                "layout": "benchmark",
                "package": RUNTIME_PACKAGE,
                "tool_definitions": definitions,
                "public_tools": self._contracts[task.id]["tools"],
                "scenario_fixtures": scenario_fixtures(task),
                "turn": turn.index,
            },
        )

    async def judge_turn(self, judge: Judge, judge_input: JudgeInput) -> Verdict:
        """The configured judge's verdict, plus the diagnostic mechanism (§6.1) of a non-passing turn: from the
        separate diagnostic judge (`diagnosis: judge`), else the evaluator's own label or the rule-based
        classifier. The label never changes the pass decision."""
        if self.benchmark_prompts is not None and self.benchmark_prompts.evaluator_system:
            use_benchmark_evaluator(judge, self.benchmark_prompts.evaluator_system)
        verdict: Verdict = await judge.score(judge_input)
        if self.diagnosis == "judge":
            if verdict.passed is not True:
                await self._diagnose(judge_input, verdict)
            return verdict
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

    async def _diagnose(self, judge_input: Any, verdict: Verdict) -> None:
        """The diagnostic judge's label replaces any the evaluator gave in its own call (D.2.2: a separate
        protocol); without a valid answer the turn is unclassified and the summary says why."""
        model = self.context.roles.get(self.diagnostic_model_role)
        if model is None:
            raise RuntimeError(f"suite.diagnosis=judge: the run's context holds no `{self.diagnostic_model_role}` "
                               f"model role (roles.{DIAGNOSTIC_ROLE}, or an LLM judge)")
        s = self.settings
        try:
            answer = await diagnose(model, judge_input, verdict, vision=self.diagnosis_vision,
                                    mode=s.diagnosis_structured_output, max_attempts=s.diagnosis_max_attempts)
        except DiagnosisError as error:
            verdict.mechanism = None
            verdict.summary = f"{verdict.summary}; mechanism: unclassified (diagnostic judge: {error})".lstrip("; ")
            return
        verdict.mechanism = answer.mechanism.value
        verdict.summary = f"{verdict.summary}; mechanism: {answer.mechanism.value} (diagnostic judge)".lstrip("; ")

    # -- metrics -----------------------------------------------------------------------------------

    def summarize(self, records: list[TurnRecord], tasks: list[Task]) -> dict[str, Any]:
        from runner.metrics.reliability import summarize as reliability_summary

        s = self.settings
        requested = sum(len(task.turns) for task in tasks)
        summary = basic_summary(records, requested_slots=requested)
        summary["failure_mechanisms"] = mechanism_counts(records)
        summary["failure_mechanisms_source"] = "diagnostic_judge" if self.diagnosis == "judge" else "evaluator"
        if self.diagnosis == "judge":  # whose model the diagnostic calls asked: roles.diagnostic or the evaluator's
            summary["failure_mechanisms_model_role"] = self.diagnostic_model_role
        # Appendix D, Table 6: executed calls and blocked slots by the upstream failure that blocked them.
        summary["slot_accounting"] = slot_accounting(records, {task.id: len(task.turns) for task in tasks})
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
                   "requested_tasks": {task.id: task.sub_suite for task in tasks}, "unobserved": s.apr_unobserved}
        summary["reliability"] = reliability_summary(chosen, turns_per_task=n_turns, **options)
        summary["table2"] = table2(chosen, n_turns, **options)
        return summary



SUITE_ENTRY = (EvoGenUISuiteSettings, EvoGenUISuite)
