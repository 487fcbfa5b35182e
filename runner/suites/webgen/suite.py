"""suite=webgen: WebGen-Bench's website tasks, each test case graded by the LLM actor (YES / PARTIAL / NO).

One task is one slot (one generation, one build): the instruction is the turn's prompt. After the engine has
served and captured the site, `prepare_judging` serves the same build once more and runs the tester (the shared
LLM actor, runner/actors/llm.py, on the run's `roles.tester` model) once per test case, each in a fresh browser
context from the home page, with the suite's instructions that make it finish with YES, PARTIAL or NO. The
answers are frozen into the packet; `judge_turn` turns them into the verdict without a judge model.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr, ValidationError, field_validator, model_validator

from runner.actors.base import ActorContext
from runner.actors.llm import LLMActor, LLMActorSettings
from runner.turns.evidence import Evidence
from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.base import Judge, JudgeInput
from runner.turns.records import RequirementResult, RequirementStatus, TurnRecord, Verdict
from runner.suites.base import EpisodeState, RunFacts, SuiteBase, SuiteSettings, select_tasks
from runner.suites.payload import PROMPT_VERSION, build_webapp_messages
from runner.suites.webgen.format import load_webgen_tasks
from runner.suites.webgen.outcome import SCORES, TESTER_INSTRUCTIONS, accuracy_summary, answer_of
from runner.turns.tasks import Task, TurnSpec

log = logging.getLogger(__name__)

TESTER_ROLE = "tester"
TESTER_VERSION = "webgen-tester-v1"
CASES_DIR = "cases"  # evidence/<task>/1/cases/<case id>/: each test case's trace and screenshots


class WebGenSuiteSettings(SuiteSettings):
    # The tester's LLM actor options (runner/actors/llm.py: LLMActorSettings) except `model`: that is the run's
    # `roles.tester` model (+model@roles.tester=<name>).
    tester: dict[str, Any] = Field(default_factory=dict)
    _tester_settings: LLMActorSettings | None = PrivateAttr(default=None)  # `tester`, parsed once (model: {})

    @field_validator("tester")
    @classmethod
    def _tester_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "model" in value:
            raise ValueError("the tester's model is the run's roles.tester (+model@roles.tester=<name>), not tester.model")
        return value

    @model_validator(mode="after")
    def _parse_tester(self) -> "WebGenSuiteSettings":
        try:
            self._tester_settings = LLMActorSettings.model_validate({**self.tester, "model": {}})
        except ValidationError as error:  # its own errors, each naming the option under suite.tester
            raise ValidationError.from_exception_data(type(self).__name__, [
                {"type": item["type"], "loc": ("tester", *item["loc"]), "input": item["input"],
                 **({"ctx": item["ctx"]} if "ctx" in item else {})} for item in error.errors()]) from None
        return self

    @property
    def tester_settings(self) -> LLMActorSettings:
        """The tester's LLM actor options, parsed with the suite's settings (its model is the run's roles.tester)."""
        assert self._tester_settings is not None
        return self._tester_settings


class WebGenSuite(SuiteBase):
    name = "webgen"
    prompt_version = PROMPT_VERSION
    paper_tasks = 101  # WebGen-Bench (Lu et al., 2025), §3: 101 instructions with 647 test cases
    uses_judge = False  # the tester's answers are the grade

    def __init__(self, settings: WebGenSuiteSettings, *, project_root: Path) -> None:
        self.settings = settings
        self.project_root = project_root
        self._tester_model: dict[str, Any] = {}
        self._turn_timeout_s: float | None = None
        self._tester: LLMActor | None = None

    @property
    def required_roles(self) -> tuple[str, ...]:
        return (TESTER_ROLE,)

    def role_structured_output(self, role: str) -> str | None:
        """The tester is the LLM actor: one structured action per step, as its `structured_output` says."""
        if role != TESTER_ROLE:
            return None
        mode = self.settings.tester_settings.structured_output
        return mode if mode != "none" else None

    def rubric_versions(self) -> dict[str, str]:
        return {"webgen_tester": TESTER_VERSION}

    def configure_run(self, facts: RunFacts) -> None:
        role = facts.roles.get(TESTER_ROLE)
        self._tester_model = dict(role.section) if role is not None else {}
        self._turn_timeout_s = float(facts.turn_timeout_s) if facts.turn_timeout_s is not None else None

    @property
    def task_source(self) -> Path | None:
        spec = self.settings.tasks_path
        return None if spec is None else self._tasks_file()

    def _tasks_file(self) -> Path:
        spec = self.settings.tasks_path
        if spec is None:
            raise ValueError("suite.tasks_path: give the path of WebGen-Bench's test.jsonl, or read the pulled test "
                             "set with suite.task_set=paper (`python -m runner.pull suite=webgen` fetches it; "
                             "suite=webgen has no bundled task set)")
        path = Path(spec)
        return path if path.is_absolute() else self.project_root / path

    def check_task_sources(self) -> list[str] | None:
        try:
            path = self._tasks_file()
        except ValueError as error:
            return [str(error)]
        return None if path.is_file() else [f"suite.tasks_path = {self.settings.tasks_path!r}: no such file ({path})"]

    async def load_tasks(self) -> list[Task]:
        tasks = select_tasks(load_webgen_tasks(self._tasks_file()), self.settings)
        # Every test case runs inside its slot's turn_timeout_s, and a slot over it is a miss.
        budget = self.settings.tester_settings.max_total_s
        most = max((len(turn.extra["test_cases"]) for task in tasks for turn in task.turns), default=0)
        if self._turn_timeout_s is not None and most * budget >= self._turn_timeout_s:
            log.warning("webgen: a task has %d test cases of up to %g s each (suite.tester.max_total_s) but "
                        "turn_timeout_s is %g s; raise turn_timeout_s so slow testers do not make a slot a miss",
                        most, budget, self._turn_timeout_s)
        return tasks

    async def messages(self, task: Task, turn: TurnSpec, episode: EpisodeState) -> list[dict[str, Any]]:
        return build_webapp_messages(task, turn, episode)

    # -- the test cases (execution phase) ---------------------------------------------------------------

    def call_bounds(self, tasks: list[Task], per_use: Mapping[str, int]) -> dict[str, int | None]:
        """The shared bounds, plus the tester's: every test case one trace of at most max_steps answers (each
        with its retries)."""
        bounds = super().call_bounds(tasks, per_use)
        tester = self.settings.tester_settings
        cases = sum(len(turn.extra.get("test_cases") or []) for task in tasks for turn in task.turns)
        bounds[TESTER_ROLE] = cases * tester.max_steps * tester.max_attempts
        return bounds

    def tester(self) -> LLMActor:
        """The shared LLM actor on the run's tester model (built once; the run owns and closes the model)."""
        if self._tester is None:
            model = self.context.roles.get(TESTER_ROLE)
            if model is None:
                raise ValueError(f"suite=webgen: the run's context holds no `{TESTER_ROLE}` model role "
                                 f"(roles.{TESTER_ROLE})")
            settings = self.settings.tester_settings.model_copy(update={"model": dict(self._tester_model)})
            self._tester = LLMActor(settings, model=model, role=TESTER_ROLE)
        return self._tester

    async def prepare_judging(self, task: Task, turn: TurnSpec, files: dict[str, str], out_dir: Path) -> dict[str, Any]:
        """Run every test case on the slot's own build (served again, one fresh browser context per case)."""
        dist = EvidenceFolder(out_dir).workspace / "dist"
        tester = self.tester()
        results: list[dict[str, Any]] = []
        async with self.context.browsers.checkout() as pool:
            async with self.context.sandbox.serve(dist, network=pool.network_namespace) as served:
                for case in turn.extra["test_cases"]:
                    case_dir = Path(out_dir) / CASES_DIR / case["id"]
                    case_turn = turn.model_copy(
                        update={"requirements": [r for r in turn.requirements if r.id == case["id"]]})
                    async with pool.session(served.url) as session:
                        context = ActorContext(task=task, turn=case_turn, evidence=Evidence(url=served.url),
                                               out_dir=case_dir, instructions=TESTER_INSTRUCTIONS)
                        trace = await tester.act(session, context)
                    results.append({"id": case["id"], "answer": answer_of(trace),
                                    "stop_reason": trace.summary.get("stop_reason", ""),
                                    "trace": f"{CASES_DIR}/{case['id']}/trace.json"})
        return {"test_cases": results}

    # -- grading (judging phase) ------------------------------------------------------------------------

    async def judge_turn(self, judge: Judge, judge_input: JudgeInput) -> Verdict:
        return grade(judge_input)

    def summarize(self, records: list[TurnRecord], tasks: list[Task]) -> dict[str, Any]:
        from runner.metrics.basic import basic_summary

        summary = basic_summary(records, requested_slots=sum(len(task.turns) for task in tasks))
        summary.update(accuracy_summary(records, tasks))
        return summary


def grade(judge_input: JudgeInput) -> Verdict:
    """The slot's verdict from the frozen tester answers; a site that did not build or start misses every case."""
    cases = judge_input.turn.extra["test_cases"]
    evidence = judge_input.evidence
    failure = ""
    if not judge_input.build.ok:
        failure = "the site did not build"
    elif evidence is None or evidence.load_error or evidence.blank:
        failure = "the site did not start: " + (evidence.load_error if evidence and evidence.load_error else "blank page")
    if failure:
        return Verdict(judge="webgen_tester", passed=False, summary=failure,
                       requirements=[RequirementResult(id=c["id"], status=RequirementStatus.FAILED, reason=failure)
                                     for c in cases],
                       scores={f"case:{c['id']}": 0.0 for c in cases})
    answers = {item["id"]: item for item in judge_input.suite_context.get("test_cases", [])}
    results: list[RequirementResult] = []
    scores: dict[str, float] = {}
    for case in cases:
        item = answers.get(case["id"], {})
        answer = item.get("answer")
        if answer is None:
            reason = f"the tester gave no YES/PARTIAL/NO answer ({item.get('stop_reason') or 'not run'})"
            results.append(RequirementResult(id=case["id"], status=RequirementStatus.UNASSESSED, reason=reason))
            continue
        scores[f"case:{case['id']}"] = SCORES[answer]
        status = RequirementStatus.PASSED if answer == "YES" else RequirementStatus.FAILED
        results.append(RequirementResult(id=case["id"], status=status, reason=f"{answer} ({SCORES[answer]:g})"))
    if scores:
        scores["accuracy"] = sum(scores.values()) / len(scores)
    statuses = {result.status for result in results}
    passed = False if RequirementStatus.FAILED in statuses else (None if RequirementStatus.UNASSESSED in statuses else True)
    return Verdict(judge="webgen_tester", passed=passed, requirements=results, scores=scores,
                   summary=f"{sum(s == 1.0 for k, s in scores.items() if k != 'accuracy')} of {len(cases)} test cases YES")


SUITE_ENTRY = (WebGenSuiteSettings, WebGenSuite)
