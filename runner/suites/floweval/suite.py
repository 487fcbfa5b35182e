"""suite=floweval (FlowEval: reference-based evaluation of generated UIs).

One task per reference site; its turns are `suite.repeats` independent generations of the same prompt
(§3.1: five outputs per prompt). Each slot's built site is kept at evidence/<task>/<turn>/site/, then the
run's actor performs every flow task on it and on the reference site (`runs` times each, §3.2), and the
judging phase scores the traces (scoring.py, §3.3). The reference site's traces are made once per task,
under <run dir>/reference/<task>/, and copied into each slot's evidence/<task>/<turn>/reference/ so that a
slot's packet folder holds everything its scoring reads (a re-judged copy too).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Mapping
from pathlib import Path
from statistics import mean, median
from typing import Any

from typing import Literal

from pydantic import Field, field_validator, model_validator

from runner.actors.base import Actor
from runner.errors import ConfigError
from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.base import Judge, JudgeInput
from runner.metrics.basic import basic_summary
from runner.turns.records import TurnRecord, Verdict
from runner.suites.base import ActorFacts, ArtifactKind, EpisodeState, RunFacts, SuiteBase, SuiteSettings, select_tasks
from runner.suites.floweval.flows import FLOW_TRACES_DIR, FlowSpec, flow_run_dir, record_flow_traces
from runner.suites.floweval.loaders import (
    ExternalSite, LiveSiteRefused, add_flow_steps, load_real_v2, load_webvoyager, resolve_snapshot,
)
from runner.suites.floweval.prompt import PROMPT_VERSION, STATIC_PROMPT_VERSION, generation_messages
from runner.suites.floweval.featurizers import FEATURIZERS, featurizer_problems, get_featurizer
from runner.suites.floweval.scoring import COMPLETION, METRICS, Embed, score_flows
from runner.suites.floweval.sites import SITES_DIR, load_sites, static_assets
from runner.turns.tasks import Task, TurnSpec

REFERENCE_DIR = "reference"
# FlowEval §3.2/§3.3: three CUA runs per site and task; a deterministic actor repeats itself exactly.
STOCHASTIC_RUNS = 3


class FlowEvalSuiteSettings(SuiteSettings):
    web_template: str | None = "floweval"  # FlowEval App. A: React + TailwindCSS + FontAwesome
    sites_path: str | None = None  # None: tasks/floweval/sites
    source: str = "own"  # own | real-v2 | webvoyager
    tasks_file: str | None = None  # the REAL v2 folder/glob or the WebVoyager JSONL (source real-v2 / webvoyager)
    snapshots: dict[str, str] = Field(default_factory=dict)  # site id -> local snapshot folder (index.html)
    repeats: int = Field(5, ge=1)  # FlowEval §3.1: "5 outputs for the same prompt"
    runs: int | None = Field(None, ge=1)  # None: 3 (§3.3), 1 for the deterministic scripted actor
    featurizer: str = "minilm_text"  # offline default; the paper's UI-CLIP is `uiclip`
    # The featurizer's own options, e.g. uiclip's `revision` and `processor_revision` (commits of the hub repos,
    # for a pinned run; default `main`), `cache_dir`; pixels' `size`.
    featurizer_options: dict[str, Any] = Field(default_factory=dict)
    flows: list[str] = Field(default_factory=list)  # trace only these flow ids (empty: all of each site's)
    # Scripted steps for the flows of source real-v2 / webvoyager (their tasks are goals only): a YAML file,
    # site id -> flow id -> steps in the project's flow format (docs/suites/floweval.md).
    flow_steps: str | None = None
    # What a generated site is: "vite", App. A's React sources built in the web template (the paper's); "static",
    # a static site (index.html, CSS, JavaScript) served as it is (not the paper's: for static references and
    # answers from elsewhere, e.g. the oracle on a static reference site).
    artifact: Literal["vite", "static"] = "vite"
    # CSS selectors of page regions (e.g. footers) whose text the state text leaves out; empty: the whole visible
    # text, the paper's reading. Only the text featurizer reads state text (docs/floweval-metrics.md).
    exclude_regions: list[str] = Field(default_factory=list)

    @field_validator("featurizer")
    @classmethod
    def _known_featurizer(cls, value: str) -> str:
        if value not in FEATURIZERS:
            raise ValueError(f"unknown featurizer {value!r}; choose from {sorted(FEATURIZERS)}")
        return value

    @model_validator(mode="after")
    def _featurizer_takes_its_options(self) -> FlowEvalSuiteSettings:
        try:
            get_featurizer(self.featurizer, **self.featurizer_options)  # loads nothing: checks the option names
        except ConfigError as error:
            raise ValueError(f"featurizer_options: {error}") from None
        return self

    @field_validator("source")
    @classmethod
    def _known_source(cls, value: str) -> str:
        if value not in ("own", "real-v2", "webvoyager"):
            raise ValueError(f"unknown source {value!r}; choose own, real-v2 or webvoyager")
        return value

    @model_validator(mode="after")
    def _flow_steps_for_benchmarks(self) -> FlowEvalSuiteSettings:
        if self.flow_steps is not None and self.source == "own":
            raise ValueError("flow_steps: scripted steps for benchmark sites (source real-v2 / webvoyager); "
                             "an own site's flows carry their steps in its site.yaml")
        return self


class FlowEvalSuite(SuiteBase):
    name = "floweval"
    paper_tasks = 27  # FlowEval §3.1: 27 reference sites (15 of WebVoyager, 12 of REAL v2)
    uses_judge = False  # scored from traces (§3.3), no judge model
    actor_on_slot_page = False  # the actor runs every flow on both sites (prepare_judging), not once per slot

    def __init__(self, settings: FlowEvalSuiteSettings, *, project_root: Path) -> None:
        self.settings = settings
        self.project_root = project_root
        self._actor: ActorFacts | None = None  # None: not configured for a run (a scripted actor's one run)
        self._oracle_generator = False
        self._references: dict[str, asyncio.Task[dict[str, list[str]]]] = {}

    @property
    def artifact_kind(self) -> ArtifactKind:  # type: ignore[override]
        return self.settings.artifact

    @property
    def prompt_version(self) -> str:  # type: ignore[override]
        return STATIC_PROMPT_VERSION if self.settings.artifact == "static" else PROMPT_VERSION

    def artifact_assets(self, task: Task, turn: TurnSpec) -> Path | None:
        """A static answer is served beside its static reference's images and fonts (files an answer's text
        cannot carry), as MT-Web2Code serves a golden page's images."""
        reference = task.extra.get("reference") or {}
        if self.settings.artifact != "static" or reference.get("kind") != "static":
            return None
        return static_assets(Path(reference["folder"]))

    # -- configuration -------------------------------------------------------------------------------

    def configure_run(self, facts: RunFacts) -> None:
        if not facts.actor.acts:
            raise ConfigError(f"invalid configuration:\n  actor = {facts.actor.kind}: suite=floweval traces flows "
                              "with an actor; choose actor=scripted or actor=ui-tars")
        self._actor = facts.actor
        self._oracle_generator = facts.generator.replays_reference

    def check_resources(self) -> list[tuple[str, str, str]]:
        # The chosen featurizer loads here, or the run stops before any work; never another one instead.
        return [("suite.featurizer", f"{self.settings.featurizer!r}: {problem}",
                 "get what the message names on this machine, or choose another featurizer explicitly "
                 "(suite.featurizer=minilm_text; not the paper's, FlowEval §3.3 featurizes with UIClip)")
                for problem in featurizer_problems(self.settings.featurizer, self.settings.featurizer_options)]

    def call_bounds(self, tasks: list[Task], per_use: Mapping[str, int]) -> dict[str, int | None]:
        """One generator call per generation (§3.1); the actor's traces: every flow `runs` times on each
        generated site and once more on its reference site (§3.2), each trace at most the actor's calls."""
        bounds = super().call_bounds(tasks, per_use)
        if "actor" in per_use:
            traces = sum((len(task.turns) + 1) * len(task.extra.get("flows") or []) * self.runs for task in tasks)
            bounds["actor"] = traces * per_use["actor"]
        return bounds

    @property
    def runs(self) -> int:
        if self.settings.runs is not None:
            return self.settings.runs
        deterministic = self._actor.deterministic if self._actor is not None else True
        return 1 if deterministic else STOCHASTIC_RUNS

    def visits_per_slot(self, task: Task) -> int:
        return len(task.extra.get("flows", [])) * self.runs  # every flow `runs` times on the generated site

    def _path(self, spec: str) -> Path:
        return Path(spec) if Path(spec).is_absolute() else self.project_root / spec

    # -- tasks ---------------------------------------------------------------------------------------

    async def load_tasks(self) -> list[Task]:
        s = self.settings
        tasks = self._own_tasks() if s.source == "own" else self._benchmark_tasks()
        chosen = [self._only_chosen_flows(task) for task in select_tasks(tasks, s)]
        if self._actor is not None and self._actor.deterministic:
            for task in chosen:
                unscripted = [f["id"] for f in task.extra["flows"] if not f["steps"]]
                if unscripted:
                    raise ConfigError(f"invalid configuration:\n  actor = scripted: task {task.id!r} has flows "
                                      f"without scripted steps {unscripted}; write their steps (suite.flow_steps) "
                                      "or use a computer-use actor (actor=ui-tars)")
        if self._oracle_generator:
            self._oracle_can_answer(chosen)
        return chosen

    def _oracle_can_answer(self, tasks: list[Task]) -> None:
        """The oracle answers with the reference site, which builds only as the artifact kind it is."""
        for task in tasks:
            kind = task.extra["reference"]["kind"]
            if kind == "snapshot":
                raise ConfigError(f"invalid configuration:\n  model = oracle: task {task.id!r}'s reference is a "
                                  "snapshot, not a site the oracle can answer with")
            wanted = "static" if kind == "static" else "vite"
            if wanted != self.settings.artifact:
                raise ConfigError(f"invalid configuration:\n  model = oracle: task {task.id!r}'s reference site is "
                                  f"{'a static site' if wanted == 'static' else 'React sources'}, which the oracle "
                                  f"answers with: set suite.artifact={wanted}")

    def _only_chosen_flows(self, task: Task) -> Task:
        if not self.settings.flows:
            return task
        known = [flow["id"] for flow in task.extra["flows"]]
        missing = [flow_id for flow_id in self.settings.flows if flow_id not in known]
        if len(missing) == len(self.settings.flows):
            raise ConfigError(f"invalid configuration:\n  suite.flows = {self.settings.flows}: task {task.id!r} "
                              f"has none of them; its flows: {known}")
        flows = [flow for flow in task.extra["flows"] if flow["id"] in self.settings.flows]
        return task.model_copy(update={"extra": {**task.extra, "flows": flows}})

    def _task(self, site_id: str, name: str, description: str, flows: list[FlowSpec], *,
              files: dict[str, str] | None, reference: dict[str, Any]) -> Task:
        turn_extra = {"site_name": name, "description": description, "goals": [flow.goal for flow in flows]}
        # §3.1: the same prompt, `repeats` independent generations: turn r is sample r - 1, its own model request
        # (and response-cache entry), recorded as its own answer.
        turns = [TurnSpec(index=r, prompt=f"{name}: {description}", reference_files=files,
                          requires_previous_artifact=False, sample=r - 1, extra=turn_extra)
                 for r in range(1, self.settings.repeats + 1)]
        return Task(id=site_id, suite=self.name, title=name, context=description, turns=turns,
                    extra={"flows": [flow.model_dump(mode="json", exclude_none=True) for flow in flows],
                           "reference": reference})

    @property
    def task_source(self) -> Path | None:
        s = self.settings
        if s.source != "own":
            return self._path(s.tasks_file) if s.tasks_file is not None else None
        return SITES_DIR if s.sites_path is None else self._path(s.sites_path)

    def _own_tasks(self) -> list[Task]:
        root = SITES_DIR if self.settings.sites_path is None else self._path(self.settings.sites_path)
        return [self._task(site.id, site.spec.name, site.spec.description, site.spec.flows, files=site.files,
                           reference=site.reference)
                for site in load_sites(root)]

    def _benchmark_tasks(self) -> list[Task]:
        s = self.settings
        if s.tasks_file is None:
            raise ConfigError(f"invalid configuration:\n  suite.tasks_file = null: source {s.source} needs its task file")
        sites: list[ExternalSite] = (load_real_v2 if s.source == "real-v2" else load_webvoyager)(self._path(s.tasks_file))
        if s.flow_steps is not None:
            sites = add_flow_steps(sites, self._path(s.flow_steps))
        if s.task_ids:
            sites = [site for site in sites if site.id in s.task_ids]
        tasks = []
        for site in sites:
            try:
                folder = resolve_snapshot(site, s.snapshots, root=self.project_root)
            except LiveSiteRefused as refused:
                raise ConfigError(f"invalid configuration:\n  {refused}") from None
            tasks.append(self._task(site.id, site.name, site.description, site.flows, files=None,
                                    reference={"kind": "snapshot", "folder": str(folder), "url": site.url}))
        return tasks

    async def messages(self, task: Task, turn: TurnSpec, episode: EpisodeState) -> list[dict[str, Any]]:
        return generation_messages(turn.extra["site_name"], turn.extra["description"], turn.extra["goals"],
                                   static=self.settings.artifact == "static")

    # -- traces (execution phase) --------------------------------------------------------------------

    def _flow_actor(self) -> Actor:
        """The run's actor (its context's): every flow trace, generated and reference side, is one of its runs."""
        if self.context.actor is None:
            raise RuntimeError("suite floweval: the run's actor is not in the suite's context yet")
        return self.context.actor

    async def site_traces(self, task: Task, turn: TurnSpec, site_dir: Path, out_dir: Path) -> dict[str, list[str]]:
        """The task's flows traced by the run's actor on the site in `site_dir`, served as it is (a built site, a
        static reference or snapshot, or any static folder: an analog to study); flow id -> trace.json paths."""
        flows = [FlowSpec.model_validate(flow) for flow in task.extra["flows"]]
        return await record_flow_traces(self._flow_actor(), self.context.browsers, self.context.sandbox, site_dir,
                                        task=task, turn=turn, flows=flows, runs=self.runs, out_dir=out_dir,
                                        exclude_regions=self.settings.exclude_regions)

    async def _reference_traces(self, task: Task, turn: TurnSpec, out_dir: Path) -> dict[str, list[str]]:
        """The reference site's traces, made once per task (every repeat compares against the same runs)."""
        if task.id not in self._references:
            self._references[task.id] = asyncio.ensure_future(self._make_reference(task, turn, out_dir))
        return await self._references[task.id]

    async def _make_reference(self, task: Task, turn: TurnSpec, out_dir: Path) -> dict[str, list[str]]:
        """Traces of every flow and run, reused when an earlier process of this run made all of them (resume)."""
        flows = [flow["id"] for flow in task.extra["flows"]]
        done = {flow_id: [str(flow_run_dir(out_dir, flow_id, run) / EvidenceFolder.TRACE) for run in range(1, self.runs + 1)]
                for flow_id in flows}
        if all(Path(path).is_file() for paths in done.values() for path in paths):
            return done
        shutil.rmtree(out_dir, ignore_errors=True)  # a killed attempt's part: made again whole
        reference = task.extra["reference"]
        if reference["kind"] in ("snapshot", "static"):  # served as it is
            return await self.site_traces(task, turn, Path(reference["folder"]), out_dir)
        return await self.source_traces(task, turn, turn.reference_files or {}, out_dir)

    async def source_traces(self, task: Task, turn: TurnSpec, files: dict[str, str], out_dir: Path) -> dict[str, list[str]]:
        """Build site sources in the suite's template (out_dir/site/) and trace the task's flows on them."""
        build = await self.context.sandbox.build(files, out_dir / EvidenceFolder.WORKSPACE, kind="vite",
                                                 template=self.web_template)
        if not build.ok or build.dist_dir is None:
            raise RuntimeError(f"site of {task.id!r} did not build ({build.status}): {build.log[-1000:]}")
        site_dir = out_dir / EvidenceFolder.SITE
        shutil.copytree(build.dist_dir, site_dir)
        return await self.site_traces(task, turn, site_dir, out_dir)

    async def prepare_judging(self, task: Task, turn: TurnSpec, files: dict[str, str], out_dir: Path) -> dict[str, Any]:
        folder = EvidenceFolder(out_dir)
        site_dir = out_dir / EvidenceFolder.SITE  # kept for the arena page
        reference_dir = out_dir / REFERENCE_DIR
        for leftover in (site_dir, out_dir / FLOW_TRACES_DIR, reference_dir):  # a killed attempt of this slot
            shutil.rmtree(leftover, ignore_errors=True)
        shutil.copytree(folder.workspace / "dist", site_dir)
        generated = await self.site_traces(task, turn, site_dir, out_dir)
        reference_root = out_dir.parents[2] / REFERENCE_DIR / task.id  # run dir, from evidence/<task>/<turn>/
        await self._reference_traces(task, turn, reference_root)
        # The packet holds its reference traces too: judging (and a re-judged copy) reads only the slot folder.
        shutil.copytree(reference_root / FLOW_TRACES_DIR, reference_dir / FLOW_TRACES_DIR)
        flows = {flow_id: {"reference": [str((flow_run_dir(reference_dir, flow_id, run) / EvidenceFolder.TRACE)
                                             .relative_to(out_dir)) for run in range(1, len(paths) + 1)],
                           "generated": [str(Path(p).relative_to(out_dir)) for p in paths]}
                 for flow_id, paths in generated.items()}
        return {"floweval": {"flows": flows, "featurizer": self.settings.featurizer,
                             "featurizer_options": self.settings.featurizer_options, "runs": self.runs,
                             "exclude_regions": list(self.settings.exclude_regions)}}

    # -- scoring (judging phase) ---------------------------------------------------------------------

    async def judge_turn(self, judge: Judge, judge_input: JudgeInput) -> Verdict:
        material = judge_input.suite_context.get("floweval")
        if not material:  # nothing was built or served: no traces, so no similarity was measured
            return Verdict(judge="floweval", passed=None, summary="unassessed: no built site, no flow traces")
        flows = {flow_id: {side: [str(judge_input.out_dir / p) for p in paths] for side, paths in sides.items()}
                 for flow_id, sides in material["flows"].items()}
        embed = embedder(material["featurizer"], material.get("featurizer_options") or {})
        result = await asyncio.to_thread(score_flows, flows, embed,
                                         exclude_regions=bool(material.get("exclude_regions")))
        scores = {name: float(value) for name, value in result["means"].items()}
        for flow_id, values in result["flows"].items():
            scores.update({f"{name}/{flow_id}": float(v) for name, v in values.items()})
        summary = "FlowEval §3.3: mean over flows of the best of the run pairings"
        completion = result.get("completion")
        if completion is not None:  # beside the metrics, never folded into them
            scores[COMPLETION] = float(completion["mean"])
            scores.update({f"{COMPLETION}/{f}": float(flow["value"]) for f, flow in completion["flows"].items()})
            summary += "; " + completion_line(completion)
        if material.get("exclude_regions"):
            result["exclude_regions"] = list(material["exclude_regions"])
            summary += f"; state text without regions {', '.join(material['exclude_regions'])} (not the paper's)"
        return Verdict(judge="floweval", passed=None, scores=scores, raw=result, summary=summary)

    def summarize(self, records: list[TurnRecord], tasks: list[Task]) -> dict[str, Any]:
        summary = basic_summary(records, requested_slots=sum(len(task.turns) for task in tasks))
        metrics: dict[str, Any] = {}
        for name in (*METRICS, COMPLETION):
            values = [r.verdict.scores[name] for r in records if r.verdict is not None and name in r.verdict.scores]
            if values:  # Appendix D: the raw metric values aggregated by the median
                metrics[name] = {"mean": mean(values), "median": median(values), "slots": len(values)}
        if COMPLETION in metrics:  # which slots' traces stopped short, by name: every table shows them
            incomplete = {}
            for record in records:
                found = (record.verdict.raw or {}).get("completion") if record.verdict is not None else None
                if isinstance(found, dict) and found.get("incomplete"):
                    incomplete[f"{record.task_id}/{record.turn}"] = list(found["incomplete"])
            metrics[COMPLETION]["incomplete_slots"] = incomplete
        summary["floweval"] = metrics
        deviations = self._deviations()
        if deviations:
            summary["floweval_deviations"] = deviations
        return summary

    def _deviations(self) -> list[str]:
        """The settings of this run that are not the paper's, in words (summary, report)."""
        s = self.settings
        found = []
        if s.artifact == "static":
            found.append("suite.artifact=static: generated sites are static pages served as they are "
                         "(FlowEval App. A: React sources)")
        if s.exclude_regions:
            found.append(f"suite.exclude_regions={list(s.exclude_regions)}: the state text leaves those regions out "
                         "(FlowEval §3.3: the page's visible text)")
        return found


def completion_line(completion: dict[str, Any]) -> str:
    """Completion in words: how many flows were performed to their end, and where the others stopped."""
    flows = completion["flows"]
    parts = [f"{sum(flow['complete'] for flow in flows.values())}/{len(flows)} flows complete"]
    for flow_id in completion.get("incomplete", []):
        flow = flows[flow_id]
        where = flow.get("stopped_at") or {}
        index = where.get("index")
        step = f"step {index + 1} ({where.get('action', '')})" if isinstance(index, int) else "a step"
        parts.append(f"{flow_id} stopped at {step} of {flow['of']}")
    return ", ".join(parts)


def embedder(name: str, options: dict[str, Any] | None = None) -> Embed:
    """The featurizer of that name, built with its options, as (screenshots, texts) -> (states, dim)."""
    return get_featurizer(name, **(options or {})).featurize


SUITE_ENTRY = (FlowEvalSuiteSettings, FlowEvalSuite)
