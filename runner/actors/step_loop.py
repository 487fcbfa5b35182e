"""The step loop of the model-driven actors (runner/actors/llm.py, runner/actors/uitars.py).

One loop owns what every step of such an actor shares: counting steps against `max_steps`, the wall-clock
budget `max_total_s` (checked before each step and bounding each model call), the screenshot a step starts
from (the previous step's `screenshot_after`), the request record of each model call (refusals included), what
a failed call leaves (a provider error, a refusal, a time-out, an answer no attempt made valid), the trace step
of each action, the settle after it and its DOM mutation count, the stop conditions and the trace's summary.

An actor supplies what differs through `StepHooks`, one object per visit (it may keep the visit's history):
how it observes the page, how it builds and fits its request, how it asks its model and parses the answer into
an action, how it records and executes the action, and what its finish claims.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from runner.judges.llm_bundle import clip
from runner.models.base import Model, ProviderError
from runner.models.fitting import FitResult, RequestRefused
from runner.turns.evidence import Trace, TraceStep
from runner.turns.evidence_folder import EvidenceFolder

if TYPE_CHECKING:
    from runner.browser.session import PageSession

__all__ = ["InvalidAnswer", "PageUnresponsive", "StepHooks", "StepLimits", "StepLoop", "screenshot"]

AnswerT = TypeVar("AnswerT")


@dataclass(frozen=True)
class StepLimits:
    """The bounds of one trace, from the actor's settings."""

    max_steps: int
    max_total_s: float  # the whole trace, model calls included
    step_timeout_s: float  # one page action; also bounds the mutation count after it
    settle_ms: int  # after an action on the page, before its mutations are counted


class PageUnresponsive(Exception):
    """The page cannot be observed: the trace stops with this message as its stop reason."""


class InvalidAnswer(Exception):
    """No attempt of the model's answer gave a valid action: the failed call and a failed step are recorded and
    the trace stops."""

    def __init__(self, *, action: dict[str, Any], error: str, stop_reason: str, failed_call: dict[str, Any],
                 observation: str = "") -> None:
        super().__init__(error)
        self.action = action  # the step's action record (kind invalid_action or truncated)
        self.error = error
        self.stop_reason = stop_reason
        self.failed_call = failed_call  # the line of the slot's failed_calls.jsonl
        self.observation = observation


class StepHooks(ABC, Generic[AnswerT]):
    """What one actor does differently at each step; one object per visit."""

    screenshot_prefix: str  # step screenshots are `<prefix>_<NN>.png`, the last one `<prefix>_final.png`
    always_final_screenshot: bool = False  # False: only when the last step has no screenshot after it

    async def prepare(self, session: "PageSession") -> None:
        """Before the first step (read what the whole visit needs)."""

    @abstractmethod
    async def observe(self, session: "PageSession", step_index: int, shot: str) -> None:
        """Read the page for this step (`shot`: its screenshot's name, "" when none could be taken); raise
        PageUnresponsive when it cannot be read."""

    def request_notes(self) -> dict[str, Any]:
        """What the step's request record says beside the fitting record."""
        return {}

    @abstractmethod
    def fit(self, step_index: int, shot: str) -> FitResult:
        """The step's request, fitted to the model (RequestRefused: it cannot be)."""

    @abstractmethod
    async def ask(self, messages: list[dict[str, Any]], step_index: int, usage: dict[str, int]) -> AnswerT:
        """The model's valid answer; adds its tokens to `usage`. InvalidAnswer when no attempt was valid,
        ProviderError when the model failed."""

    @abstractmethod
    def begin_step(self, answer: AnswerT, step_index: int, shot: str) -> TraceStep:
        """The step's trace record before its action runs."""

    @abstractmethod
    async def execute(self, session: "PageSession", answer: AnswerT, step: TraceStep) -> bool:
        """Run the action, recording ok/error on the step; True when it acted on the page (the loop settles)."""

    async def after_settle(self, session: "PageSession", answer: AnswerT, step: TraceStep) -> None:
        """After the settle that follows an action on the page, before its mutations are counted."""

    def describe(self, answer: AnswerT, step: TraceStep) -> None:
        """Complete the step's record once its mutations are counted."""

    def remember(self, answer: AnswerT, step: TraceStep) -> None:
        """Keep what the next steps' requests repeat."""

    @abstractmethod
    def claim(self, answer: AnswerT) -> str | None:
        """The trace's claim when the answer finishes the trace (advisory only); None: it goes on."""

    async def summary(self, session: "PageSession", trace: Trace, final_shot: str) -> dict[str, Any]:
        """The actor's own entries of the trace summary."""
        return {}


class StepLoop(Generic[AnswerT]):
    """Runs one actor's steps on a page and writes its trace (EvidenceFolder.TRACE)."""

    def __init__(self, *, actor: str, role: str, model: Model, limits: StepLimits) -> None:
        self.actor = actor  # the trace's and the request records' actor name
        self.role = role  # what the request records call it (the actor, WebGen-Bench's tester)
        self.model = model
        self.limits = limits

    async def run(self, session: "PageSession", hooks: StepHooks[AnswerT], out_dir: Path) -> Trace:
        limits = self.limits
        evidence = EvidenceFolder(out_dir)
        trace = Trace(actor=self.actor, finished=False)
        usage: dict[str, int] = {}
        stop_reason = f"step budget of {limits.max_steps} exhausted"
        await hooks.prepare(session)
        deadline = time.monotonic() + limits.max_total_s

        for step_index in range(limits.max_steps):
            if time.monotonic() > deadline:
                stop_reason = f"time budget of {limits.max_total_s:g} s exhausted"
                break
            started = time.monotonic()
            shot = await screenshot(session, out_dir, f"{hooks.screenshot_prefix}_{step_index:02d}.png")
            if trace.steps:
                trace.steps[-1].screenshot_after = shot
            try:
                await hooks.observe(session, step_index, shot)
            except PageUnresponsive as unresponsive:
                stop_reason = str(unresponsive)
                break
            request = {"role": self.role, "actor": self.actor, "step": step_index, "model": self.model.name,
                       **hooks.request_notes()}
            try:
                fitted = hooks.fit(step_index, shot)
            except RequestRefused as error:
                evidence.append_request_record({**request, "refused": str(error)}, judging=False)
                stop_reason = f"actor model failed: {clip(str(error), 400)}"
                break
            evidence.append_request_record({**request, **fitted.record}, judging=False)
            try:
                answer = await asyncio.wait_for(hooks.ask(fitted.messages, step_index, usage),
                                                timeout=max(1.0, deadline - time.monotonic()))
            except InvalidAnswer as invalid:  # what every attempt wrote is kept; the step says why it failed
                evidence.append_failed_call(invalid.failed_call, judging=False)
                trace.steps.append(TraceStep(index=step_index, action=invalid.action, ok=False,
                                             error=clip(invalid.error, 600), observation=invalid.observation,
                                             screenshot_before=shot,
                                             duration_s=round(time.monotonic() - started, 3)))
                stop_reason = invalid.stop_reason
                break
            except ProviderError as error:  # a refusal (RequestRefused) carries the server's own message
                if isinstance(error, RequestRefused):
                    evidence.append_request_record(
                        {**request, "refused": error.server_message or str(error)}, judging=False)
                stop_reason = f"actor model failed: {clip(str(error), 400)}"
                break
            except asyncio.TimeoutError:
                stop_reason = f"time budget of {limits.max_total_s:g} s exhausted"
                break
            step = hooks.begin_step(answer, step_index, shot)
            await self._perform(session, hooks, answer, step)
            step.duration_s = round(time.monotonic() - started, 3)
            trace.steps.append(step)
            hooks.remember(answer, step)
            claim = hooks.claim(answer)
            if claim is not None:
                trace.finished = True
                trace.claim = claim
                stop_reason = "finished by the actor"
                break

        final_shot = ""
        if hooks.always_final_screenshot or (trace.steps and not trace.steps[-1].screenshot_after):
            final_shot = await screenshot(session, out_dir, f"{hooks.screenshot_prefix}_final.png")
        if trace.steps and not trace.steps[-1].screenshot_after:
            trace.steps[-1].screenshot_after = final_shot
        trace.summary = {
            "steps": len(trace.steps),
            "failed_steps": sum(not step.ok for step in trace.steps),
            "stop_reason": stop_reason,
            **await hooks.summary(session, trace, final_shot),
            "model": self.model.name,
            "usage": usage,
        }
        trace.save(out_dir / EvidenceFolder.TRACE)
        return trace

    async def _perform(self, session: "PageSession", hooks: StepHooks[AnswerT], answer: AnswerT,
                       step: TraceStep) -> None:
        """The action between a mutation reset and its count: ok/error, dom_changed and mutations of its step."""
        try:
            await session.reset_mutations()
        except Exception:
            pass
        if await hooks.execute(session, answer, step):
            await session.settle(self.limits.settle_ms)
            await hooks.after_settle(session, answer, step)
        try:
            step.mutations = await asyncio.wait_for(session.mutation_count(character_data=True),
                                                    timeout=self.limits.step_timeout_s)
            step.dom_changed = step.mutations > 0
        except Exception:
            step.dom_changed = None  # the page no longer answers (navigated, hung): unknown, not "unchanged"
        hooks.describe(answer, step)


async def screenshot(session: "PageSession", out_dir: Path, name: str) -> str:
    """The viewport's screenshot into out_dir/name; its name, or "" when the page cannot be shot."""
    try:
        await asyncio.wait_for(session.screenshot(out_dir / name), timeout=15)
    except Exception:  # a crashed page cannot be shot; the trace still stands
        return ""
    return name
