"""The scripted actor: replay each requirement's check steps (not its assertions) and record a trace.

A turn whose `extra[FLOW_STEPS_KEY]` holds a declarative flow (FlowEval's scripted reference flows) is
replayed as one flow instead, in the flow-trace convention (`_act_flow`).

It exercises the artifact exactly as the checks will, from a fresh page load per requirement, so the
trace shows what a user following the task's own scripts would have seen (one screenshot per step).
It decides nothing: whether the page then satisfies the requirement is the judge's call.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from runner.actors.base import ActorContext
from runner.browser.page_diff import describe_change, read_page_state
from runner.turns.evidence import Trace, TraceStep
from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.check_runner import StepFailed, perform_step, step_summary
from runner.judges.checks import Step

if TYPE_CHECKING:
    from runner.browser.session import PageSession


# TurnSpec.extra key of a declarative flow (a list of check steps) to replay as one flow trace.
FLOW_STEPS_KEY = "flow"
FINAL_SCREENSHOT = "final.png"
_FLOW_STEPS = TypeAdapter(list[Step])


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__


def _action(step: object, requirement_id: str) -> dict[str, object]:
    """The trace's action record: the step's fields with `action` renamed to `kind`, plus its requirement."""
    fields = step_summary(step)
    return {"kind": fields.pop("action"), **fields, "requirement": requirement_id}


class ScriptedActorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step_timeout_s: float = Field(2.0, gt=0)
    max_steps: int = Field(200, gt=0)  # bound on the whole trace
    screenshots: bool = True


class ScriptedActor:
    name = "scripted"

    def __init__(self, settings: ScriptedActorSettings | None = None) -> None:
        self.settings = settings or ScriptedActorSettings()

    async def aclose(self) -> None:
        return None

    async def act(self, session: "PageSession", context: ActorContext) -> Trace:
        if FLOW_STEPS_KEY in context.turn.extra:
            return await self._act_flow(session, context)
        s = self.settings
        trace = Trace(actor=self.name)
        skipped: list[str] = []
        run: list[str] = []
        failed: list[str] = []
        truncated = False
        context.out_dir.mkdir(parents=True, exist_ok=True)

        for requirement in context.turn.requirements:
            if requirement.check is None:
                skipped.append(requirement.id)
                continue
            if len(trace.steps) >= s.max_steps:
                truncated = True
                break
            run.append(requirement.id)
            try:
                await session.goto()
            except Exception as error:
                failed.append(requirement.id)
                trace.steps.append(
                    TraceStep(
                        index=len(trace.steps),
                        action={"kind": "goto", "url": session.url, "requirement": requirement.id},
                        ok=False,
                        error=f"page did not load: {_first_line(error)}",
                    )
                )
                continue
            for step in requirement.check.steps:
                if len(trace.steps) >= s.max_steps:
                    truncated = True
                    break
                try:
                    # evaluate() has no timeout of its own: a page stuck in a loop must not hang the actor.
                    ok = await asyncio.wait_for(
                        self._step(session, context, trace, requirement.id, step), timeout=self._step_budget_s(step)
                    )
                except Exception as error:  # a hung or crashed page: the step failed, the trace goes on
                    ok = False
                    reason = (
                        f"page did not respond within {self._step_budget_s(step):g} s"
                        if isinstance(error, asyncio.TimeoutError)
                        else f"page failed: {_first_line(error)}"
                    )
                    trace.steps.append(
                        TraceStep(index=len(trace.steps), action=_action(step, requirement.id), ok=False, error=reason)
                    )
                if not ok:  # later steps of this script depend on this one
                    failed.append(requirement.id)
                    break

        trace.summary = {
            "requirements_run": run,
            "requirements_with_failed_steps": failed,
            "skipped": skipped,
            "steps": len(trace.steps),
            "failed_steps": sum(not step.ok for step in trace.steps),
            "truncated": truncated,
        }
        if skipped:
            trace.summary["note"] = f"skipped {len(skipped)} requirement(s) without an executable check: " + ", ".join(
                skipped
            )
        trace.finished = not truncated
        trace.save(context.out_dir / EvidenceFolder.TRACE)
        return trace

    def _step_budget_s(self, step: object) -> float:
        # presence wait + action + screenshot, each bounded by the step timeout, plus a wait's own time
        return 3 * self.settings.step_timeout_s + getattr(step, "ms", 0) / 1000 + 5.0

    async def _step(
        self, session: "PageSession", context: ActorContext, trace: Trace, requirement_id: str, step: object
    ) -> bool:
        index = len(trace.steps)
        started = time.monotonic()
        await session.reset_mutations()
        state_before = await read_page_state(session)
        ok, error = True, ""
        try:
            await perform_step(session.page, step, timeout_s=self.settings.step_timeout_s)
        except StepFailed as failure:
            ok, error = False, str(failure)
        change = describe_change(state_before, await read_page_state(session))
        mutations = await session.mutation_count(character_data=True)
        screenshot = ""
        if self.settings.screenshots:
            screenshot = f"step_{index:02d}.png"
            try:
                await session.screenshot(context.out_dir / screenshot)
            except Exception:  # a crashed page cannot be shot; the step record still stands
                screenshot = ""
        action = _action(step, requirement_id)
        trace.steps.append(
            TraceStep(
                index=index,
                action=action,
                ok=ok,
                error=error,
                dom_changed=mutations > 0,
                mutations=mutations,
                observation=change,  # what changed (EvoGenUI-Bench §4.2 "actor observations")
                screenshot_after=screenshot,
                duration_s=round(time.monotonic() - started, 3),
            )
        )
        return ok

    async def _act_flow(self, session: "PageSession", context: ActorContext) -> Trace:
        """One flow on the page as loaded, in the flow-trace convention (FlowEval §3.2): per step the
        screenshot at that step (`screenshot_before`), the visible text then (`observation`) and the action;
        after the last action `summary["final_screenshot"]` and `summary["final_text"]`. Deterministic:
        one run gives every run's trace. A step that fails ends the flow (later steps depend on it)."""
        steps = _FLOW_STEPS.validate_python(context.turn.extra[FLOW_STEPS_KEY])
        trace = Trace(actor=self.name)
        context.out_dir.mkdir(parents=True, exist_ok=True)
        for step in steps[: self.settings.max_steps]:
            index = len(trace.steps)
            started = time.monotonic()
            shot, observation, ok, error = f"step_{index:02d}.png", "", True, ""
            try:
                await session.screenshot(context.out_dir / shot)
                observation = await session.visible_text()
                await asyncio.wait_for(perform_step(session.page, step, timeout_s=self.settings.step_timeout_s),
                                       timeout=self._step_budget_s(step))
                await session.settle()
            except StepFailed as failure:
                ok, error = False, str(failure)
            except asyncio.TimeoutError:
                ok, error = False, f"page did not respond within {self._step_budget_s(step):g} s"
            except Exception as failure:  # a crashed or hung generated page: the flow ends here, the trace stands
                ok, error = False, f"page failed: {_first_line(failure)}"
            if not (context.out_dir / shot).is_file():
                shot = ""
            fields = step_summary(step)
            trace.steps.append(TraceStep(index=index, action={"kind": fields.pop("action"), **fields}, ok=ok,
                                         error=error, observation=observation, screenshot_before=shot,
                                         duration_s=round(time.monotonic() - started, 3)))
            if not ok:
                break
        final_screenshot, final_text = FINAL_SCREENSHOT, ""
        try:
            await session.screenshot(context.out_dir / FINAL_SCREENSHOT)
            final_text = await session.visible_text()
        except Exception:  # a page that cannot be shot any more: the trace ends with its last step
            final_screenshot = ""
        trace.summary = {
            "final_screenshot": final_screenshot,
            "final_text": final_text,
            "steps": len(trace.steps),
            "failed_steps": sum(not step.ok for step in trace.steps),
            "completed": len(trace.steps) == len(steps) and all(step.ok for step in trace.steps),
        }
        trace.finished = trace.summary["completed"]
        trace.save(context.out_dir / EvidenceFolder.TRACE)
        return trace
