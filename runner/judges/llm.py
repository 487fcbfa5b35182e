"""The LLM judge: a rubric applied by any OpenAI-compatible (vision) model to the turn's evidence bundle.

Default rubric `evogenui` (EvoGenUI-Bench §4.2 and Appendix C.1): Presentation, Execution and Alignment, 1-5
each with reasons, failure types from a fixed list and, for a failing turn, one of the six diagnostic
mechanisms of §6.1. The verdict is requested as structured output (the rubric's JSON schema as
`response_format`), validated, and retried when malformed; after `max_attempts` the turn is recorded
as `judge_error` (JudgeError), or `truncated` (JudgeTruncated) when the answer was cut at the output cap, in the
answer or inside a reasoning model's reasoning; what the model wrote is kept in the slot's judge_failed_calls.jsonl.
The official decision is the paper's (§4.3): the turn passes only if
generation succeeded, the artifact was evaluable and all three scores are at least 4. A turn whose
artifact is not evaluable (no build, page did not load) fails without a model call, unless
`judge_unevaluable` asks for the model's scores anyway (the decision is the same).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.base import JudgeBase, JudgeError, JudgeInput, structured_judge_error
from runner.judges.llm_bundle import TRIM_ORDER, build_bundle, join_text
from runner.judges.llm_settings import EndpointSettings, LLMJudgeSettings
from runner.judges.rubrics import Rubric, RubricOutcome, get_rubric
from runner.models.base import Model, ProviderError
from runner.models.fitting import FitResult, RequestRefused, correction_reserve_chars, fit_messages, model_limits
from runner.models.structured import (MAX_ECHO_CHARS, StructuredOutputError, StructuredResult, ask_structured,
                                      failed_call_record)
from runner.turns.records import DimensionScore, RequirementResult, RequirementStatus, Verdict
from runner.models.untrusted import RULE, with_rule

__all__ = ["LLMJudge", "build_endpoint_model"]

_REASONING_KEPT = 4000  # characters of an accepted verdict's reasoning kept in the record (turns.jsonl)


def build_endpoint_model(settings: EndpointSettings) -> Model:
    """The model of a judge's or actor's options, from the provider settings parsed with them (`with_endpoint`);
    options made without that (a test's) have their section parsed here."""
    from runner.models.registry import build_model

    return build_model(settings.endpoint if settings.endpoint is not None else settings.model)


def with_untrusted_rule(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` whose instructions carry the untrusted-data rule: appended to the first system message, else
    a text part in front of the first user message (a rubric asked as one user message stays one)."""
    if any(_carries_rule(message) for message in messages):
        return messages
    for role in ("system", "user"):
        for index, message in enumerate(messages):
            if message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                content = with_rule(content) if role == "system" else [{"type": "text", "text": RULE},
                                                                       {"type": "text", "text": content}]
            else:
                content = [{"type": "text", "text": RULE}, *(content or [])]
            return [*messages[:index], {**message, "content": content}, *messages[index + 1:]]
    return [{"role": "system", "content": RULE}, *messages]


def _carries_rule(message: dict[str, Any]) -> bool:
    """The rule as the harness places it: the end of a system prompt, or a text part of its own (quoted text
    can hold the rule's words, but every line of it is prefixed: never a whole part)."""
    content = message.get("content")
    if isinstance(content, str):
        return message.get("role") == "system" and content.endswith(RULE)
    return any(isinstance(part, dict) and part.get("text") == RULE for part in content or [])


class LLMJudge(JudgeBase):
    """Implements the Judge protocol with a rubric and a chat model."""

    answers_rubrics = True  # a suite's own rubric can be put to its model (`ask`)

    def __init__(self, settings: LLMJudgeSettings, *, name: str = "llm", model: Model | None = None) -> None:
        self.settings = settings
        self.name = name
        self.rubric: Rubric = get_rubric(settings.rubric)
        self._model = model if model is not None else build_endpoint_model(settings)

    @property
    def accepts_images(self) -> bool:
        return self.settings.vision

    async def aclose(self) -> None:
        await self._model.aclose()

    def fit(self, messages: list[dict[str, Any]], *, schema: dict[str, Any] | None,
            trim_order: tuple[str, ...] = ()) -> FitResult:
        """`messages` fitted to this judge's server (runner/models/fitting.py): images per prompt, context minus
        the output cap and a structured-output correction turn, image size. RequestTooLarge when they cannot."""
        limits, max_tokens = model_limits(self._model)
        max_tokens = max_tokens or int(self.settings.model.get("max_tokens") or 0)
        reserve = correction_reserve_chars(schema, MAX_ECHO_CHARS) if self.settings.max_attempts > 1 else 0
        return fit_messages(messages, limits, max_tokens=max_tokens, max_side=self.settings.screenshot_max_side,
                            trim_order=trim_order, reserve_chars=reserve)

    @staticmethod
    def record_request(out_dir: Path | None, record: dict[str, Any]) -> None:
        if out_dir is not None:
            EvidenceFolder(out_dir).append_request_record(record, judging=True)

    def keep_failed_call(self, out_dir: Path | None, failure: StructuredOutputError | StructuredResult[Any], *,
                         role: str = "judge", task_id: str = "", turn: int = 0, **context: Any) -> None:
        """What the model wrote in a failed call (or before a call's accepted answer), in the slot's
        judge_failed_calls.jsonl: nothing the judge's model said is lost."""
        if out_dir is None or (isinstance(failure, StructuredResult) and not failure.rejected):
            return
        EvidenceFolder(out_dir).append_failed_call(
            failed_call_record(failure, role=role, model=self._model.name, task_id=task_id, turn=turn, **context),
            judging=True)


    async def ask(self, rubric: Rubric, messages: list[dict[str, Any]], *, ids: list[str],
                  max_attempts: int | None = None, task_id: str = "", turn: int = 0,
                  out_dir: Path | None = None, request_record: dict[str, Any] | None = None,
                  trim_order: tuple[str, ...] = ()) -> StructuredResult[RubricOutcome]:
        """A suite's own rubric (MT-Web2Code eq. 8) on `messages`, by structured output under this judge's
        settings: the schema of the rubric's answer model as response_format, its parser validating with that model,
        malformed answers retried
        (`max_attempts`, default the judge's). The messages are fitted to the server first; what was fitted
        out goes into `request_record` (when given) and the slot's judge_requests.jsonl (`out_dir`).
        StructuredOutputError when none validates; ProviderError when the model gives no answer (its
        RequestRefused: the server, or the fitting, refused the request). The suite quotes the artifact's text
        (runner/models/untrusted.py); the rule that quoted text is data is added here when its messages do not carry it."""
        messages = with_untrusted_rule(messages)
        schema = rubric.schema(ids)
        record: dict[str, Any] = {"role": "judge", "rubric": rubric.name, "model": self._model.name,
                                  "task_id": task_id, "turn": turn}
        try:
            fitted = self.fit(messages, schema=schema, trim_order=trim_order)
        except RequestRefused as error:
            record["refused"] = str(error)
            self.record_request(out_dir, record)
            raise
        record.update(fitted.record)
        if request_record is not None:
            request_record.update(record)
        try:
            result = await self._ask_fitted(rubric, fitted.messages, ids=ids, max_attempts=max_attempts,
                                            task_id=task_id, turn=turn)
        except StructuredOutputError as error:
            self.keep_failed_call(out_dir, error, task_id=task_id, turn=turn, rubric=rubric.name)
            raise
        except RequestRefused as error:
            record["refused"] = error.server_message or str(error)
            if request_record is not None:
                request_record.update(record)
            raise
        finally:
            self.record_request(out_dir, record)
        self.keep_failed_call(out_dir, result, task_id=task_id, turn=turn, rubric=rubric.name)
        return result

    async def _ask_fitted(self, rubric: Rubric, messages: list[dict[str, Any]], *, ids: list[str],
                          max_attempts: int | None, task_id: str, turn: int) -> StructuredResult[RubricOutcome]:
        return await ask_structured(
            self._model,
            role="judge",
            messages=messages,
            answer=rubric.answer_model(ids),
            validate=lambda data: rubric.parse(data, ids),
            name=f"{rubric.name}_verdict",
            mode=self.settings.structured_output,
            strict=self.settings.strict_schema,
            max_attempts=self.settings.max_attempts if max_attempts is None else max_attempts,
            task_id=task_id,
            turn=turn,
        )

    async def score(self, judge_input: JudgeInput) -> Verdict:
        try:
            verdict = await self._score(judge_input)
        except JudgeError:
            raise
        except ProviderError as error:  # no answer at all after the endpoint's own retries
            raise JudgeError(f"{self.name}: judge model failed: {error}") from error
        except Exception as error:  # a bug or unreadable evidence: not the artifact's fault
            raise JudgeError(f"{self.name}: {type(error).__name__}: {error}") from error
        EvidenceFolder(judge_input.out_dir).write_verdict(verdict.model_dump(mode="json"))
        return verdict

    # ---- the decision --------------------------------------------------------------------------------------

    @staticmethod
    def _evaluability(judge_input: JudgeInput) -> tuple[bool, bool, str, str]:
        """(generation_ok, evaluable, failure type, reason) for the §4.3 gate."""
        if not judge_input.files:
            return False, False, "generation_failed", "the model returned no source"
        build = judge_input.build
        if not build.ok:
            return True, False, "build_failed", f"build {build.status}"
        evidence = judge_input.evidence
        if evidence is not None and evidence.load_error:
            return True, False, "not_evaluable", f"page did not load: {evidence.load_error}"
        return True, True, "", ""

    async def _score(self, judge_input: JudgeInput) -> Verdict:
        s = self.settings
        generation_ok, evaluable, gate_type, gate_reason = self._evaluability(judge_input)
        if not evaluable and not s.judge_unevaluable:
            return self._not_evaluated(judge_input, gate_type, gate_reason)

        bundle = build_bundle(judge_input, s, vision=s.vision)
        requirement_ids = [r.id for r in judge_input.turn.requirements]
        schema = self.rubric.schema(requirement_ids)
        request: dict[str, Any] = {"role": "judge", "rubric": self.rubric.name,
                                   "model": self._model.name, "task_id": judge_input.task.id,
                                   "turn": judge_input.turn.index}
        try:
            fitted = self.fit([{"role": "system", "content": with_rule(self.rubric.instructions())},
                               {"role": "user", "content": bundle.parts}], schema=schema, trim_order=TRIM_ORDER)
        except RequestRefused as error:
            self.record_request(judge_input.out_dir, {**request, "refused": str(error)})
            raise JudgeError(f"{self.name}: {error}") from error
        request.update(fitted.record)
        messages = fitted.messages
        user = messages[-1]["content"]
        if not any(part.get("type") == "image_url" for part in user):
            messages[-1] = {**messages[-1], "content": join_text(user)}  # a text model gets plain text
        started = time.perf_counter()
        try:
            result = await ask_structured(
                self._model,
                messages=messages,
                answer=self.rubric.answer_model(requirement_ids),
                validate=lambda data: self.rubric.parse(data, requirement_ids),
                name=f"{self.rubric.name}_verdict",
                mode=s.structured_output,
                strict=s.strict_schema,
                max_attempts=s.max_attempts,
                task_id=judge_input.task.id,
                turn=judge_input.turn.index,
                role="judge",
            )
        except StructuredOutputError as error:
            self.record_request(judge_input.out_dir, request)
            self.keep_failed_call(judge_input.out_dir, error, task_id=judge_input.task.id,
                                  turn=judge_input.turn.index, rubric=self.rubric.name)
            raise structured_judge_error(error, judge=self.name) from error
        except ProviderError as error:  # a refusal is recorded with the server's own words, never retried
            outcome_key = "refused" if isinstance(error, RequestRefused) else "error"
            message = (error.server_message if isinstance(error, RequestRefused) else "") or str(error)
            self.record_request(judge_input.out_dir, {**request, outcome_key: message})
            raise
        self.record_request(judge_input.out_dir, request)
        self.keep_failed_call(judge_input.out_dir, result, task_id=judge_input.task.id, turn=judge_input.turn.index,
                              rubric=self.rubric.name)
        outcome: RubricOutcome = result.value
        passed = self.rubric.decide(outcome, generation_ok=generation_ok, evaluable=evaluable)

        requirements = [
            outcome.requirements.get(r.id)
            or RequirementResult(id=r.id, status=RequirementStatus.UNASSESSED, reason="the judge gave no assessment")
            for r in judge_input.turn.requirements
        ]
        failure_types = list(outcome.failure_types)
        if gate_type:
            failure_types.insert(0, gate_type)
        scores_text = ", ".join(f"{name} {int(value)}" for name, value in outcome.scores.items())
        summary = f"{'PASSED' if passed else 'FAILED'}; {scores_text}"
        if gate_reason:
            summary += f"; not evaluable: {gate_reason}"
        if outcome.summary:
            summary += f"; {outcome.summary}"
        return Verdict(
            judge=self.name,
            passed=passed,
            dimensions=dict(outcome.dimensions),
            requirements=requirements,
            failure_types=list(dict.fromkeys(failure_types)),
            mechanism=None if passed else outcome.mechanism,
            scores=dict(outcome.scores),
            summary=summary,
            raw={
                "rubric": self.rubric.name,
                "model": self._model.name,
                "response": result.data,
                "attempts": result.attempts,
                "rejected": result.errors,
                "usage": result.usage,  # reasoning_tokens apart, where the server counts them
                # a thinking model's reasoning, apart from the answer (its start: the record stays small)
                **({"reasoning": {"chars": len(result.reasoning), "text": result.reasoning[:_REASONING_KEPT]}}
                   if result.reasoning else {}),
                "latency_s": round(time.perf_counter() - started, 3),
                "evidence": bundle.included,
                "request": request,  # what the request held and what was fitted out (runner/models/fitting.py)
                "notes": outcome.notes,
            },
        )

    def _not_evaluated(self, judge_input: JudgeInput, failure_type: str, reason: str) -> Verdict:
        """§4.3: no evaluable artifact, no pass; nothing for the model to score."""
        dimensions = {name: DimensionScore(score=None, reason=f"not evaluated: {reason}")
                      for name in self.rubric.dimensions}
        requirements = [
            RequirementResult(id=r.id, status=RequirementStatus.FAILED, reason=f"artifact not evaluable: {reason}")
            for r in judge_input.turn.requirements
        ]
        return Verdict(
            judge=self.name,
            passed=False,
            dimensions=dimensions,
            requirements=requirements,
            failure_types=[failure_type],
            summary=f"FAILED; not evaluable: {reason}",
            raw={"rubric": self.rubric.name, "model_called": False},
        )
