"""The LLM actor: a blind browser agent driven by any OpenAI-compatible (vision) model.

Each step the model sees the page's visible text, an indexed list of its interactive elements and (with
vision) a screenshot, and answers with ONE action as structured output:

    click(index) | fill(index, text) | select(index, option) | press(key, index?) | scroll(dy) | wait(ms)
    | read_runtime_logs (the tool log tail becomes the next observation) | finish(success, summary)

It is told the turn's request, the private validation contract and the names of the task's tools, but
never the source (EvoGenUI-Bench's blind actor, §4.1). A suite may give its own instructions
(ActorContext.instructions, e.g. EvoGenUI-Bench's actor prompt with suite.prompts=benchmark): they replace
the role text, never the action protocol. Every step is recorded (action, ok, error, whether the
DOM changed, observation, screenshots). Its own success claim goes to Trace.claim and is advisory only
(§4.1: "Actor-reported interaction status is advisory rather than an official label"). The step budget
and a wall-clock budget bound the trace; running out of either leaves `finished=False`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from runner.actors.base import ActorContext
from runner.actors.page_elements import ActionFailed, Element, execute, list_elements
from runner.actors.step_loop import InvalidAnswer, PageUnresponsive, StepHooks, StepLimits, StepLoop
from runner.browser.page_diff import PageState, describe_change, read_page_state
from runner.errors import ConfigError, format_validation_error
from runner.turns.evidence import Trace, TraceStep
from runner.turns.evidence_folder import EvidenceFolder, read_json_objects
from runner.judges.llm import build_endpoint_model
from runner.judges.llm_settings import EndpointSettings
from runner.judges.llm_bundle import clip, image_data_url, tail
from runner.models.untrusted import quote, with_rule
from runner.models.base import Model
from runner.models.fitting import FitResult, collapse_text, fit_for_model
from runner.models.structured import (MAX_ECHO_CHARS, StructuredOutputError, TruncatedAnswer, ask_structured,
                                      decoding_schema, failed_call_record)

if TYPE_CHECKING:
    from runner.browser.session import PageSession

__all__ = ["ACTIONS", "ActionAnswer", "ActorAction", "LLMActor", "LLMActorSettings", "validate_action"]

ACTIONS = ("click", "fill", "select", "press", "scroll", "wait", "read_runtime_logs", "finish")


class LLMActorSettings(EndpointSettings):
    """`actor.options` of a `kind: llm` actor."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: dict[str, Any]  # the endpoint, as for the LLM judge (provider openai: OpenAIModelSettings)
    max_steps: int = Field(15, ge=1, le=200)
    step_timeout_s: float = Field(10.0, gt=0)  # one page action
    max_total_s: float = Field(600.0, gt=0)  # the whole trace, model calls included
    include_screenshot: bool = True  # sent only when the model has vision (model.vision: true)
    screenshot_max_side: int = Field(1280, ge=0)
    max_elements: int = Field(60, ge=1)
    max_visible_text_chars: int = Field(4000, ge=0)
    max_contract_chars: int = Field(6000, ge=0)
    max_log_chars: int = Field(4000, ge=0)
    max_history: int = Field(20, ge=0)  # previous steps repeated in each prompt
    max_wait_ms: int = Field(5000, ge=0)
    settle_ms: int = Field(200, ge=0)  # after each action, before counting mutations
    max_attempts: int = Field(3, ge=1, le=10)  # malformed actions are retried, then the trace stops
    structured_output: Literal["json_schema", "json_object", "none"] = "json_schema"
    strict_schema: bool = False

    @classmethod
    def from_options(cls, options: dict[str, Any], *, prefix: str = "actor.options") -> "LLMActorSettings":
        try:
            settings = cls.model_validate(options)
        except ValidationError as error:
            raise ConfigError(format_validation_error(error, options, prefix)) from None
        settings.with_endpoint(prefix=f"{prefix}.model")
        return settings


class ActorAction(BaseModel):
    """One validated action, flat: what the loop performs and records (built from an `ActionAnswer`)."""

    model_config = ConfigDict(extra="ignore")

    action: Literal["click", "fill", "select", "press", "scroll", "wait", "read_runtime_logs", "finish"]
    index: int | None = None
    text: str | None = None
    option: str | None = None
    key: str | None = None
    dy: int | None = None
    ms: int | None = None
    success: bool | None = None
    summary: str | None = None
    thought: str | None = None

    def record(self, elements: list[Element]) -> dict[str, Any]:
        """The trace's action record: kind, its arguments, and what the index pointed at."""
        fields = {k: v for k, v in self.model_dump().items() if v is not None and k not in ("action", "thought")}
        record: dict[str, Any] = {"kind": self.action, **fields}
        if self.index is not None and 0 <= self.index < len(elements):
            element = elements[self.index].info
            record["element"] = {k: element.get(k) for k in ("tag", "role", "name") if element.get(k)}
        if self.thought:
            record["thought"] = self.thought[:300]
        return record


# ---- the answer: one variant per action, each with exactly the arguments it needs --------------------------
# A tagged union, so the schema sent says which arguments each action requires (a flat object with optional
# fields would let a decoder write a click without its index). Fields an action does not use are ignored.


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")

    thought: str | None = None  # first, so a model reasons before it acts


class _Click(_Action):
    action: Literal["click"]
    index: int


class _Fill(_Action):
    action: Literal["fill"]
    index: int
    text: str  # replaces the field's content ("" clears it)


class _Select(_Action):
    action: Literal["select"]
    index: int
    option: str


class _Press(_Action):
    action: Literal["press"]
    key: str = Field(min_length=1)  # a Playwright key name
    index: int | None = None  # None: the focused element


class _Scroll(_Action):
    action: Literal["scroll"]
    dy: int


class _Wait(_Action):
    action: Literal["wait"]
    ms: int


class _ReadRuntimeLogs(_Action):
    action: Literal["read_runtime_logs"]


class _Finish(_Action):
    action: Literal["finish"]
    success: bool
    summary: str | None = None


ActionAnswer: TypeAdapter[Any] = TypeAdapter(Annotated[
    _Click | _Fill | _Select | _Press | _Scroll | _Wait | _ReadRuntimeLogs | _Finish, Field(discriminator="action")
])
assert {variant.model_fields["action"].annotation.__args__[0]  # type: ignore[union-attr]
        for variant in (_Click, _Fill, _Select, _Press, _Scroll, _Wait, _ReadRuntimeLogs, _Finish)} == set(ACTIONS)


def validate_action(data: Any) -> ActorAction:
    """The model's answer validated by `ActionAnswer` (the validator the sent schema comes from), as an
    ActorAction; ValueError (pydantic's ValidationError) when it is not one valid action."""
    return ActorAction(**ActionAnswer.validate_python(data).model_dump())


_ROLE = """You are the interaction actor of a UI benchmark. You operate a web interface in a browser to \
collect evidence for an evaluator: whether the interface really does what this turn's requirements ask. You \
cannot see its source code; use only what the page shows.

Exercise the behaviour each requirement describes through visible UI operations (type, click, select, read \
the result). Do not conclude success from the mere presence of a component, and do not substitute an easier \
interaction for the one asked. If a control does nothing, record that by finishing with success=false."""

# The action protocol is the actor's own whatever instructions it gets: it is what the structured output parses.
_ACTION_FORMAT = """Each step, answer with exactly ONE action as a JSON object (leave out fields the action does not use):
  {"action": "click", "index": N}
  {"action": "fill", "index": N, "text": "..."}            (replaces the field's content)
  {"action": "select", "index": N, "option": "..."}        (an option label or value of a <select>)
  {"action": "press", "key": "Enter", "index": N or null}  (Playwright key names; null: the focused element)
  {"action": "scroll", "dy": 600}                          (pixels; negative scrolls up)
  {"action": "wait", "ms": 500}
  {"action": "read_runtime_logs"}                           (the tool-call log tail is your next observation)
  {"action": "finish", "success": true or false, "summary": "what you verified and what failed"}
Indices refer to the numbered list of interactive elements of the CURRENT step. You may add a short \
"thought". Finish as soon as every requirement you can test has been tested."""

_SYSTEM = _ROLE + "\n\n" + _ACTION_FORMAT

# What of an observation is cut, first first, when it would not fit the model's context (runner/models/fitting.py):
# the older history, the tool-log tail, the visible text, then the element list.
OBSERVATION_TRIM_ORDER = ("history", "logs", "visible", "elements")


class LLMActor:
    """Implements the Actor protocol; `name` is "llm"."""

    name = "llm"

    def __init__(self, settings: LLMActorSettings, *, model: Model | None = None, role: str = "actor") -> None:
        self.settings = settings
        self.role = role  # what its request records call it: the actor, or WebGen-Bench's tester
        self._model = model if model is not None else build_endpoint_model(settings)

    async def aclose(self) -> None:
        await self._model.aclose()

    # ---- prompts ------------------------------------------------------------------------------------------

    def _briefing(self, context: ActorContext) -> str:
        """The system prompt: role (ours or the suite's instructions), action format, the turn's request and
        private contract, tool names.
        Built only from the task's private contract, never from the artifact's source files."""
        turn, task = context.turn, context.task
        # A suite's own actor prompt (EvoGenUI-Bench's ACTOR_SYSTEM_PROMPT_EXTEND) extends the action protocol
        # in place of our role text, as the benchmark's extends its browser agent's system prompt.
        head = _SYSTEM if context.instructions is None else _ACTION_FORMAT + "\n\n" + context.instructions
        lines = [head, "", f"## Task\n{task.title or task.id}" + (f" ({task.domain})" if task.domain else "")]
        lines.append(f"## Current user request (turn {turn.index})\n{turn.prompt}")
        requirements = [f"- [{r.id}] {r.description}" for r in turn.requirements]
        lines.append("## Requirements to verify (private validation contract)\n" +
                     ("\n".join(requirements) if requirements else "(none listed: test the request itself)"))
        extras = {key: turn.extra[key] for key in ("validation_contract", "actor_guidance") if turn.extra.get(key)}
        if task.extra.get("actor_hints"):
            extras["actor_hints"] = task.extra["actor_hints"]
        if extras:
            lines.append("## Contract details\n" + clip(json.dumps(extras, ensure_ascii=False, default=str),
                                                      self.settings.max_contract_chars))
        if context.tool_names:
            lines.append("## Tools the page may call (read their effects with read_runtime_logs)\n" +
                         ", ".join(context.tool_names))
        return "\n\n".join(lines)

    def _observation(self, step: int, visible_text: str, elements: list[Element], history: list[str],
                     pending: str, url: str) -> list[dict[str, Any]]:
        """The step's observation as text parts; the marked ones may be cut to fit the model's context, in
        OBSERVATION_TRIM_ORDER (runner/models/fitting.py)."""
        s = self.settings

        def part(text: str, section: str | None = None, keep: str = "head") -> dict[str, Any]:
            return {"type": "text", "text": text, **({"fit": {"section": section, "keep": keep}} if section else {})}

        # Everything the page wrote (its text, its elements' labels, what earlier steps observed, the runtime
        # logs) is quoted as untrusted data (runner/models/untrusted.py); the briefing carries the rule.
        parts = [part(f"Step {step + 1} of at most {s.max_steps}. Page: {json.dumps(url)}")]
        if history and s.max_history:
            parts.append(part("Previous steps:\n" + quote("\n".join(history[-s.max_history:]), "previous steps"),
                              "history", keep="tail"))
        if pending:
            title, _, body = pending.partition("\n")
            parts.append(part(f"{title}\n{quote(body, 'runtime logs')}", "logs", keep="tail"))
        parts.append(part("Visible text:\n" + quote(clip(visible_text, s.max_visible_text_chars) or "(none)",
                                                    "visible text"), "visible"))
        listing = "\n".join(element.describe() for element in elements)
        parts.append(part("Interactive elements:\n" + quote(listing or "(none found)", "interactive elements"),
                          "elements"))
        parts.append(part("Your next action (one JSON object):"))
        return parts

    # ---- the steps (runner/actors/step_loop.py runs them) ----------------------------------------------------

    async def act(self, session: "PageSession", context: ActorContext) -> Trace:
        s = self.settings
        out_dir = Path(context.out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        loop: StepLoop[ActorAction] = StepLoop(
            actor=self.name, role=self.role, model=self._model,
            limits=StepLimits(max_steps=s.max_steps, max_total_s=s.max_total_s, step_timeout_s=s.step_timeout_s,
                              settle_ms=s.settle_ms))
        return await loop.run(session, _LLMSteps(self, session, context, out_dir), out_dir)

    def _runtime_logs(self, session: "PageSession", context: ActorContext) -> str:
        path = Path(context.extra.get("tool_log_path") or EvidenceFolder(context.out_dir).tool_log)
        lines = []
        if path.exists():
            entries = []
            for entry in read_json_objects(path):
                compact = {k: entry[k] for k in ("seq", "tool", "arguments", "ok", "error", "result") if k in entry}
                entries.append(json.dumps(compact, ensure_ascii=False, default=str))
            lines.append(f"tool log: {len(entries)} call(s)")
            lines.append(tail("\n".join(entries), self.settings.max_log_chars))
        else:
            lines.append("tool log: no tool calls recorded")
        errors = session.page_errors[-5:]
        console = [c for c in session.console if c.get("type") in ("error", "warning")][-5:]
        if errors:
            lines.append("uncaught page errors:\n" + "\n".join(clip(e, 300) for e in errors))
        if console:
            lines.append("console errors/warnings:\n" + "\n".join(clip(str(c.get("text", "")), 300) for c in console))
        return "\n".join(lines)

class _LLMSteps(StepHooks[ActorAction]):
    """One visit's steps: the indexed elements and visible text each step, the history of earlier steps and
    what read_runtime_logs returned, repeated in the next requests."""

    screenshot_prefix = "llm_actor"

    def __init__(self, actor: LLMActor, session: "PageSession", context: ActorContext, out_dir: Path) -> None:
        self.actor, self.session, self.context, self.out_dir = actor, session, context, out_dir
        self.settings = actor.settings
        self.briefing = actor._briefing(context)
        self.history: list[str] = []
        self.pending = ""  # what the previous step returned that the page does not show (runtime logs)
        self.elements: list[Element] = []
        self.visible_text = ""
        self.claimed: bool | None = None
        self._state_before: PageState | None = None
        self._change = ""

    async def observe(self, session: "PageSession", step_index: int, shot: str) -> None:
        try:
            self.elements, self.visible_text = await asyncio.wait_for(self._read(session),
                                                                      timeout=self.settings.step_timeout_s * 2)
        except Exception as error:  # a hung or crashed page: nothing more to see
            raise PageUnresponsive(f"page unresponsive: {_first_line(error)}") from error

    async def _read(self, session: "PageSession") -> tuple[list[Element], str]:
        elements = await list_elements(session.page, max_elements=self.settings.max_elements)
        return elements, await session.visible_text()

    def fit(self, step_index: int, shot: str) -> FitResult:
        s = self.settings
        content = self.actor._observation(step_index, self.visible_text, self.elements, self.history, self.pending,
                                          self.session.url)
        if s.include_screenshot and s.vision and shot:
            url = image_data_url(self.out_dir / shot, max_side=s.screenshot_max_side)
            content.append({"type": "image_url", "image_url": {"url": url}, "fit": {"name": shot, "priority": 1}})
        self.pending = ""
        return fit_for_model(self.actor._model, [{"role": "system", "content": with_rule(self.briefing)},
                                                 {"role": "user", "content": content}],
                             max_side=s.screenshot_max_side, trim_order=OBSERVATION_TRIM_ORDER,
                             schema=decoding_schema(ActionAnswer), attempts=s.max_attempts, echo_chars=MAX_ECHO_CHARS)

    async def ask(self, messages: list[dict[str, Any]], step_index: int, usage: dict[str, int]) -> ActorAction:
        s, context, model, role = self.settings, self.context, self.actor._model, self.actor.role
        try:
            result = await ask_structured(
                model, messages=collapse_text(messages), answer=ActionAnswer, validate=validate_action,
                name="actor_action", mode=s.structured_output, strict=s.strict_schema,
                max_attempts=s.max_attempts, task_id=context.task.id, turn=context.turn.index, role=role,
            )
        except StructuredOutputError as error:  # what the model wrote is kept; a cut answer is named
            truncated = isinstance(error, TruncatedAnswer)
            raise InvalidAnswer(
                action={"kind": "truncated", "cut": error.cut} if truncated else {"kind": "invalid_action"},
                error=str(error),
                stop_reason=(f"the model's action was truncated: {clip(str(error), 300)}" if truncated
                             else "the model returned no valid action"),
                failed_call=failed_call_record(error, role=role, model=model.name, task_id=context.task.id,
                                               turn=context.turn.index, step=step_index)) from error
        if result.rejected:  # accepted after rejected attempts: what they said is kept too
            EvidenceFolder(self.out_dir).append_failed_call(failed_call_record(
                result, role=role, model=model.name, task_id=context.task.id,
                turn=context.turn.index, step=step_index), judging=False)
        for key, value in result.usage.items():
            usage[key] = usage.get(key, 0) + value
        return result.value

    def begin_step(self, answer: ActorAction, step_index: int, shot: str) -> TraceStep:
        return TraceStep(index=step_index, action=answer.record(self.elements), screenshot_before=shot)

    async def execute(self, session: "PageSession", answer: ActorAction, step: TraceStep) -> bool:
        s = self.settings
        if answer.action == "finish":
            step.observation = f"actor finished: success={answer.success}; {answer.summary or ''}".strip()
            return False
        if answer.action == "read_runtime_logs":
            step.observation = self.actor._runtime_logs(session, self.context)
            return False
        self._state_before = await read_page_state(session)
        try:
            await asyncio.wait_for(
                execute(session.page, answer.model_dump(), self.elements, timeout_s=s.step_timeout_s,
                        max_wait_ms=s.max_wait_ms),
                timeout=s.step_timeout_s + s.max_wait_ms / 1000 + 2,
            )
        except ActionFailed as failure:
            step.ok, step.error = False, str(failure)
        except asyncio.TimeoutError:
            step.ok, step.error = False, f"the page did not respond within {s.step_timeout_s:g} s"
        return True

    async def after_settle(self, session: "PageSession", answer: ActorAction, step: TraceStep) -> None:
        self._change = describe_change(self._state_before, await read_page_state(session))

    def describe(self, answer: ActorAction, step: TraceStep) -> None:
        if not step.observation:
            changed = {True: f"DOM changed ({step.mutations} mutation records)", False: "no DOM change",
                       None: "DOM change unknown"}[step.dom_changed]
            # What changed, not only that something did (EvoGenUI-Bench §4.2 "actor observations").
            step.observation = ("ok; " if step.ok else f"failed: {step.error}; ") + changed + f"; {self._change}"

    def remember(self, answer: ActorAction, step: TraceStep) -> None:
        self.history.append(_history_line(step))
        if answer.action == "read_runtime_logs":
            self.pending = "Result of read_runtime_logs:\n" + step.observation

    def claim(self, answer: ActorAction) -> str | None:
        if answer.action != "finish":
            return None
        self.claimed = bool(answer.success)
        return f"success={str(self.claimed).lower()}: {answer.summary or ''}".strip()

    async def summary(self, session: "PageSession", trace: Trace, final_shot: str) -> dict[str, Any]:
        return {"dom_changing_steps": sum(bool(step.dom_changed) for step in trace.steps),
                "claimed_success": self.claimed}  # advisory only: never a verdict


def _history_line(step: TraceStep) -> str:
    action = {k: v for k, v in step.action.items() if k != "thought"}
    observation = step.observation if step.action.get("kind") != "read_runtime_logs" else "(runtime logs returned)"
    return f"{step.index + 1}. {json.dumps(action, ensure_ascii=False, default=str)} -> {clip(observation, 200)}"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__
