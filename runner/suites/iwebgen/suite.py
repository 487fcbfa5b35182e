"""suite=iwebgen: I-WebGenBench (interactive scientific web apps from paper-derived specifications).

One single-turn task per specification (loader.py). The payload is the system prompt plus the specification
(§4.1, C.2; prompts.py); the app is a React + Vite build in the default web template (§4.1: the environment
"installs dependencies, builds the project, and launches it in a Chromium instance"); the actor is the
Interaction Probe (actor=probe, §4.1 and B.1), whose trace gives IR. Scoring (judge_turn): Rule & Stability
from the probe's evidence (stability.py), the four judged dimensions from an LLM judge with the suite's
rubric (rubric.py; unassessed under any other judge), 0 on every dimension for an app that does not build
(C.3). summarize() gives BSR, first-pass BSR, IR and the 100-point table per domain (metrics.py).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.base import Judge, JudgeError, JudgeInput, structured_judge_error
from runner.metrics.basic import basic_summary
from runner.models.base import ProviderError
from runner.models.structured import StructuredOutputError
from runner.turns.generation import GenerationStrategy, build_strategy
from runner.turns.records import DimensionScore, FailureBucket, TurnRecord, Verdict
from runner.suites.base import NO_REWARD, ArtifactKind, EpisodeState, RunFacts, SuiteBase, SuiteSettings, select_tasks
from runner.suites.iwebgen import loader
from runner.suites.iwebgen.blocks import MAX_BLOCKS, SPLIT_ATTEMPTS
from runner.suites.iwebgen.background import capture_background
from runner.suites.iwebgen.blocks import STRUCTURED_MODE as BLOCK_STRUCTURED_MODE
from runner.suites.iwebgen.metrics import DIMENSION_OF_COLUMN, iwebgen_summary
from runner.suites.iwebgen.prompts import PROMPT_VERSION, generation_messages
from runner.suites.iwebgen.repair import REPAIR_ROUNDS
from runner.suites.iwebgen.rubric import JUDGED_POINTS, IWebGenRubric, judge_messages
from runner.suites.iwebgen.spec import Domain
from runner.suites.iwebgen.stability import StabilityPenalties, stability
from runner.suites.iwebgen.strategy import Pipeline, iwebgen_strategy, pipeline_roles
from runner.suites.iwebgen.structure import analyze_app, classify_theme, parse_css_rgb
from runner.suites.iwebgen.structure_summary import structure_summary
from runner.turns.tasks import Task, TurnSpec

__all__ = ["SUITE_ENTRY", "IWebGenSuite", "IWebGenSuiteSettings"]

log = logging.getLogger(__name__)

DEFAULT_TASKS = Path(__file__).resolve().parents[3] / "tasks" / "iwebgen"


class IWebGenSuiteSettings(SuiteSettings):
    domains: list[Domain] = Field(default_factory=list)  # only these domains ([]: all five)
    # Only specifications with a reference app; None: exactly when the generator is model=oracle (it answers
    # with the reference, and has none for the others).
    reference_only: bool | None = None
    judge_max_steps: int = Field(12, ge=0)  # before/after screenshot pairs shown to the judge, in probe order
    stability: StabilityPenalties = Field(default_factory=StabilityPenalties)
    # Generation (strategy.py): the first pass, one call or C.4's block pipeline (splitter and merger roles);
    # with `generation: self_repair`, up to `repair_rounds` repairs of an app that does not build (C.3: K = 5).
    pipeline: Pipeline = "single"
    repair_rounds: int = Field(REPAIR_ROUNDS, ge=0)


class IWebGenSuite(SuiteBase):
    name = "iwebgen"
    prompt_version = PROMPT_VERSION  # recorded in lineage.json
    paper_tasks = 201  # I-WebGenBench §3.1: "201 high-quality specifications"
    artifact_kind: ArtifactKind = "vite"

    def __init__(self, settings: IWebGenSuiteSettings, *, project_root: Path) -> None:
        self.settings = settings
        self.project_root = Path(project_root)
        self.rubric = IWebGenRubric()
        self._generator_is_oracle = False

    def configure_run(self, facts: RunFacts) -> None:
        self._generator_is_oracle = facts.generator.replays_reference

    @property
    def required_roles(self) -> tuple[str, ...]:
        return pipeline_roles(self.settings.pipeline)  # blocks: roles.splitter and roles.merger (C.4)

    def role_structured_output(self, role: str) -> str | None:
        """The block pipeline's splitter answers a structured block list (blocks.py); the merger answers files."""
        return BLOCK_STRUCTURED_MODE if role == "splitter" and self.settings.pipeline == "blocks" else None

    def generation_strategy(self) -> GenerationStrategy:
        repair = self.settings.generation == "self_repair"
        if self.settings.pipeline == "single" and not repair:
            return build_strategy(self.settings.generation)
        return iwebgen_strategy(self.settings.pipeline, repair_rounds=self.settings.repair_rounds if repair else None,
                                roles=self.context.roles)

    def rubric_versions(self) -> dict[str, str]:
        return {self.rubric.name: self.rubric.version}

    def call_bounds(self, tasks: list[Task], per_use: Mapping[str, int]) -> dict[str, int | None]:
        """The shared bounds with this suite's generation: one call (§4.1), or C.4's blocks (the splitter's plan
        and its retries, at most MAX_BLOCKS block calls, the merger's call), then C.3's repair rounds."""
        bounds = super().call_bounds(tasks, per_use)
        slots = sum(len(task.turns) for task in tasks)
        first = 1 if self.settings.pipeline == "single" else MAX_BLOCKS
        repairs = self.settings.repair_rounds if self.settings.generation == "self_repair" else 0
        bounds["generator"] = slots * (first + repairs)
        if self.settings.pipeline == "blocks":
            bounds["splitter"] = slots * SPLIT_ATTEMPTS
            bounds["merger"] = slots
        return bounds

    @property
    def reference_only(self) -> bool:
        chosen = self.settings.reference_only
        return self._generator_is_oracle if chosen is None else chosen

    @property
    def task_source(self) -> Path:
        return self._tasks_root()

    def _tasks_root(self) -> Path:
        spec = self.settings.tasks_path
        if spec is None:
            return DEFAULT_TASKS
        return Path(spec) if Path(spec).is_absolute() else self.project_root / spec

    async def load_tasks(self) -> list[Task]:
        tasks = loader.load_tasks(self._tasks_root())
        if self.settings.domains:
            tasks = [task for task in tasks if task.domain in self.settings.domains]
        if self.reference_only:
            with_reference = [task for task in tasks if task.turns[0].reference_files is not None]
            log.info("iwebgen: %d of %d specifications have a reference app; running those (suite.reference_only)",
                     len(with_reference), len(tasks))
            tasks = with_reference
        return select_tasks(tasks, self.settings)

    async def messages(self, task: Task, turn: TurnSpec, episode: EpisodeState) -> list[dict[str, Any]]:
        return generation_messages(loader.spec_of(task))

    # ---- scoring ---------------------------------------------------------------------------------------------

    async def prepare_judging(self, task: Task, turn: TurnSpec, files: dict[str, str], out_dir: Path) -> dict[str, Any]:
        """§5 theme: the built app's computed page background, on the slot's own build served once more."""
        dist = EvidenceFolder(out_dir).workspace / "dist"
        async with self.context.browsers.checkout() as pool:
            async with self.context.sandbox.serve(dist, network=pool.network_namespace) as served:
                async with pool.session(served.url) as session:
                    try:
                        background = await capture_background(session)
                    except Exception as error:  # a crashed page: the theme stays unknown, never guessed
                        log.warning("iwebgen: background of %s not captured: %s", task.id, error)
                        background = None
        return {"background": background}

    @staticmethod
    def _structure(judge_input: JudgeInput) -> dict[str, Any]:
        """§5 structure of the app's source, and its theme from the captured background (None: not captured)."""
        background = judge_input.suite_context.get("background")
        try:
            theme = classify_theme(parse_css_rgb(background)) if background else None
        except ValueError:  # a colour syntax the parser does not read (e.g. oklch()): unknown
            theme = None
        return {"structure": analyze_app(judge_input.files).to_json(), "background": background, "theme": theme}

    async def judge_turn(self, judge: Judge, judge_input: JudgeInput) -> Verdict:
        if not judge_input.build.ok:  # C.3: "it receives a score of 0 across all evaluation dimensions"
            reason = f"the app did not build ({judge_input.build.status}): 0 (I-WebGenBench C.3)"
            dimensions = {name: DimensionScore(score=0.0, reason=reason) for name in DIMENSION_OF_COLUMN.values()}
            return Verdict(judge=judge.name, passed=None, dimensions=dimensions,
                           scores={"score": 0.0, **{f"score_{c.lower()}": 0.0 for c in DIMENSION_OF_COLUMN}},
                           summary=reason, raw=self._structure(judge_input))
        trace, evidence = judge_input.trace, judge_input.evidence
        rule = stability(built=True, evidence=evidence, trace=trace, page_errors=judge_input.page_errors,
                         penalties=self.settings.stability)
        dimensions = {"rule": DimensionScore(score=rule.points, reason="; ".join(rule.penalties) or "no penalty")}
        scores: dict[str, float] = {"score_r": rule.points}
        if trace is not None and "elements_exercised" in trace.summary:
            scores["ir_actions"] = float(trace.summary["elements_exercised"])
            scores["ir_responsive"] = float(trace.summary["elements_responsive"])
        raw: dict[str, Any] = {"rubric": self.rubric.name, "stability_penalties": rule.penalties,
                               **self._structure(judge_input)}
        summary = f"rule & stability {rule.points:g}/5"
        if judge.answers_rubrics and judge.accepts_images:
            messages, shown = judge_messages(
                loader.spec_of(judge_input.task), Path(judge_input.out_dir), trace,
                evidence.screenshot_viewport if evidence is not None else "", max_steps=self.settings.judge_max_steps)
            request: dict[str, Any] = {}
            try:
                result = await judge.ask(self.rubric, messages, ids=[], task_id=judge_input.task.id,
                                         turn=judge_input.turn.index, out_dir=Path(judge_input.out_dir),
                                         request_record=request, trim_order=("spec",))
            except StructuredOutputError as error:  # what it wrote is in judge_failed_calls.jsonl (judge.ask)
                raise structured_judge_error(error, judge=judge.name, what="iwebgen verdict") from error
            except ProviderError as error:  # no answer after the endpoint's own retries: the judge failed
                raise JudgeError(f"{judge.name}: judge model failed: {error}") from error
            outcome = result.value
            dimensions.update(outcome.dimensions)
            for column, name in DIMENSION_OF_COLUMN.items():
                scores[f"score_{column.lower()}"] = float(dimensions[name].score or 0.0)
            scores["score"] = sum(scores[f"score_{c.lower()}"] for c in DIMENSION_OF_COLUMN)
            raw.update(response=result.data, attempts=result.attempts, usage=result.usage, evidence=shown,
                       request=request)
            summary = f"{scores['score']:g}/100; " + ", ".join(
                f"{c} {scores[f'score_{c.lower()}']:g}" for c in DIMENSION_OF_COLUMN)
            if outcome.summary:
                summary += f"; {outcome.summary}"
        else:  # the judged points need a vision LLM judge (B.1: a VLM): unassessed, never 0 or full marks
            kind = "has no vision (judge.options.model.vision)" if judge.answers_rubrics else "is not an LLM judge"
            why = f"not assessed: judge {judge.name!r} {kind}; I-WebGenBench B.1 asks a VLM"
            dimensions.update({name: DimensionScore(score=None, reason=why) for name in JUDGED_POINTS})
            summary += f"; judged dimensions {why}"
        return Verdict(judge=judge.name, passed=None, dimensions=dimensions, scores=scores, summary=summary, raw=raw)

    def turn_reward(self, record: TurnRecord) -> float | None:
        """An app that does not build earns 0 (C.3). A built one earns its B.1 total / 100 when an LLM judge
        scored it; under judge=rules (the judged points unassessed) the rule-based IR of §3.2 (0 for a page
        that failed at runtime, None when no probe ran). Rule & stability points come with the parts."""
        if record.status in NO_REWARD:
            return None
        if record.extra.get("build_status") != "ok":
            return 0.0
        if "score" in record.scores:
            return record.scores["score"] / 100.0
        if "interaction_rate" in record.scores:
            return record.scores["interaction_rate"]
        return 0.0 if record.status is FailureBucket.RUNTIME_ERROR else None

    def summarize(self, records: list[TurnRecord], tasks: list[Task]) -> dict[str, Any]:
        summary = basic_summary(records, requested_slots=len(tasks))
        summary["turn_pass"] = None  # I-WebGenBench defines no pass/fail: BSR, IR and the score carry the result
        summary.update(iwebgen_summary(records, tasks))
        summary["structure"] = structure_summary(records, summary["apps_table"])  # §5, Tables 4 and 5
        return summary


SUITE_ENTRY = (IWebGenSuiteSettings, IWebGenSuite)
