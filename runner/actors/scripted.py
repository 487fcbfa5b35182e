"""The scripted actor: replay each requirement's check steps (not its assertions) and record a trace.

A turn whose `extra[FLOW_STEPS_KEY]` holds a declarative flow (FlowEval's scripted reference flows) is
replayed as one flow instead, in the flow-trace convention (`_act_flow`).

It exercises the artifact exactly as the checks will, from a fresh page load per requirement, so the
trace shows what a user following the task's own scripts would have seen (one screenshot per step).
It decides nothing: whether the page then satisfies the requirement is the judge's call.

Every step waits on conditions, never on the clock: its target present, visible where a person must see it, and
enabled (runner/judges/check_runner.py), and after it the page settled (runner/actors/page_settle.py). So the
trace is the same on an idle and on a loaded machine; the time limits (`actor.scripted`, ScriptedActorSettings)
only bound how long a page that never gets there is waited for.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from runner.actors.base import ActorContext
from runner.actors.flow_text import EXCLUDE_REGIONS_KEY, EXCLUDED_TEXT_KEY, region_texts
from runner.actors.page_settle import wait_until_settled
from runner.browser.page_diff import describe_change, read_page_state
from runner.turns.evidence import Trace, TraceStep
from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.check_runner import StepFailed, perform_step, step_ready, step_summary
from runner.judges.checks import Step, WaitForTextStep, WaitStep

if TYPE_CHECKING:
    from runner.browser.session import PageSession


# TurnSpec.extra key of a declarative flow (a list of check steps) to replay as one flow trace.
FLOW_STEPS_KEY = "flow"
FINAL_SCREENSHOT = "final.png"
_FLOW_STEPS = TypeAdapter(list[Step])
# Steps that wait for the page rather than act on it (their state is captured once they are done).
WAITING_STEPS = (WaitStep, WaitForTextStep)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else type(error).__name__


def _action(step: object, requirement_id: str) -> dict[str, object]:
    """The trace's action record: the step's fields with `action` renamed to `kind`, plus its requirement."""
    fields = step_summary(step)
    return {"kind": fields.pop("action"), **fields, "requirement": requirement_id}


class ScriptedActorSettings(BaseModel):
    """`actor.scripted` (conf/actor/scripted.yaml). The limits bound waiting on a page that never meets a step's
    condition; they do not pace a page that does (docs/actors.md, "scripted")."""

    model_config = ConfigDict(extra="forbid")

    # How long one step waits for its target (present, visible, enabled), and its action's own limit.
    step_timeout_s: float = Field(5.0, gt=0)
    # After each action: the page is settled when no DOM change (text included) has happened for settle_quiet_ms
    # and for settle_quiet_frames rendered frames, with its requests answered; waited for settle_timeout_s at most.
    settle_quiet_ms: int = Field(150, ge=0)
    settle_quiet_frames: int = Field(3, ge=1)
    settle_timeout_s: float = Field(5.0, gt=0)
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
        # readiness wait + action (+ a drag's destination) + screenshot, each bounded by the step timeout, a wait's
        # own time, and the settle wait
        s = self.settings
        return 4 * s.step_timeout_s + getattr(step, "ms", 0) / 1000 + s.settle_timeout_s + 5.0

    async def _settle(self, session: "PageSession") -> bool:
        s = self.settings
        outcome = await wait_until_settled(session, quiet_ms=s.settle_quiet_ms, quiet_frames=s.settle_quiet_frames,
                                           timeout_s=s.settle_timeout_s)
        return outcome.settled

    async def _capture(self, session: "PageSession", path: Path, regions: list[str]) -> tuple[str, list[str]]:
        """A state of a flow: its screenshot (to `path`); its visible text and the text of the regions."""
        await session.screenshot(path)
        text = await session.visible_text()
        return text, (await region_texts(session, regions) if regions else [])

    async def _attempt(self, session: "PageSession", step: object, *, ready_only: bool = False,
                       ready: bool = False) -> tuple[bool, str, bool]:
        """(ok, why not, settled) of one step performed within its budget; `ready_only`: only wait until its
        target can be used; `ready`: that wait is done."""
        if ready_only:
            work = step_ready(session.page, step, timeout_s=self.settings.step_timeout_s)
        else:
            work = self._perform(session, step, ready=ready)
        try:
            settled = await asyncio.wait_for(work, timeout=self._step_budget_s(step))
        except StepFailed as failure:
            return False, str(failure), True
        except asyncio.TimeoutError:
            return False, f"page did not respond within {self._step_budget_s(step):g} s", True
        return True, "", settled is not False

    async def _perform(self, session: "PageSession", step: object, *, ready: bool = False) -> bool:
        """The step performed, then the page waited for until settled; whether it settled."""
        await perform_step(session.page, step, timeout_s=self.settings.step_timeout_s,
                           read_text=session.visible_text, ready=ready)
        return await self._settle(session)

    async def _step(
        self, session: "PageSession", context: ActorContext, trace: Trace, requirement_id: str, step: object
    ) -> bool:
        index = len(trace.steps)
        started = time.monotonic()
        await session.reset_mutations()
        state_before = await read_page_state(session)
        ok, error = True, ""
        try:
            await self._perform(session, step)
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
        one run gives every run's trace. A step that fails ends the flow (later steps depend on it).

        The summary also says how far the flow got: `flow_steps` (the flow's steps), `completed_steps` (those
        performed) and `stopped_at` (the step that failed: its index, action and reason; None for a flow
        performed to its end), and which steps' pages did not settle within the limit (`unsettled_steps`)."""
        steps = _FLOW_STEPS.validate_python(context.turn.extra[FLOW_STEPS_KEY])
        regions = [str(selector) for selector in context.extra.get(EXCLUDE_REGIONS_KEY) or []]
        excluded: list[list[str]] = []
        trace = Trace(actor=self.name)
        context.out_dir.mkdir(parents=True, exist_ok=True)
        unsettled: list[int] = []
        stopped_at: dict[str, object] | None = None
        try:  # the page as its load left it, settled like after any step
            await self._settle(session)
        except Exception:  # a page that cannot be read: the first step's capture says so
            pass
        for step in steps[: self.settings.max_steps]:
            index = len(trace.steps)
            started = time.monotonic()
            shot, observation, ok, error = f"step_{index:02d}.png", "", True, ""
            # The state is captured when the step can be taken: once its target can be used, or for a waiting
            # step once its condition holds. Captured earlier, it would show whichever side of the page's own
            # timers the machine's speed left it on.
            waiting = isinstance(step, WAITING_STEPS)
            try:
                ok, error, settled = await self._attempt(session, step, ready_only=not waiting)
                observation, regions_text = await self._capture(session, context.out_dir / shot, regions)
                if regions:
                    excluded.append(regions_text)
                if ok and not waiting:
                    ok, error, settled = await self._attempt(session, step, ready=True)
                if ok and not settled:
                    unsettled.append(index)
            except Exception as failure:  # a crashed or hung generated page: the flow ends here, the trace stands
                ok, error = False, f"page failed: {_first_line(failure)}"
            if not (context.out_dir / shot).is_file():
                shot = ""
            if regions and len(excluded) == index:  # the capture failed before the regions were read
                excluded.append([])
            fields = step_summary(step)
            action = {"kind": fields.pop("action"), **fields}
            trace.steps.append(TraceStep(index=index, action=action, ok=ok, error=error, observation=observation,
                                         screenshot_before=shot, duration_s=round(time.monotonic() - started, 3)))
            if not ok:
                stopped_at = {"index": index, "action": action, "error": error}
                break
        if stopped_at is None and len(trace.steps) < len(steps):
            stopped_at = {"index": len(trace.steps), "action": {"kind": steps[len(trace.steps)].action},
                          "error": f"not performed: the trace is bounded to {self.settings.max_steps} steps "
                                   "(actor.scripted.max_steps)"}
        final_screenshot, final_text = FINAL_SCREENSHOT, ""
        try:
            final_text, regions_text = await self._capture(session, context.out_dir / FINAL_SCREENSHOT, regions)
            if regions:
                excluded.append(regions_text)
        except Exception:  # a page that cannot be shot any more: the trace ends with its last step
            final_screenshot = ""
        completed = sum(step.ok for step in trace.steps)
        trace.summary = {
            "final_screenshot": final_screenshot,
            "final_text": final_text,
            "steps": len(trace.steps),
            "failed_steps": sum(not step.ok for step in trace.steps),
            "completed": stopped_at is None,
            "flow_steps": len(steps),
            "completed_steps": completed,
            "stopped_at": stopped_at,
            "unsettled_steps": unsettled,
        }
        if regions:
            trace.summary[EXCLUDE_REGIONS_KEY] = regions
            trace.summary[EXCLUDED_TEXT_KEY] = excluded
        trace.finished = stopped_at is None
        trace.save(context.out_dir / EvidenceFolder.TRACE)
        return trace
