"""An agent as the slot's generation strategy: it works the slot's workspace through the model proxy, inside its
budget, and the files it leaves are the answer the engine builds, serves, acts on and judges like any other.

Per slot: the workspace is seeded (the template and the episode's files: a multi-turn episode's agent continues
where the last turn left its sources), a proxy session opens on a socket of its own with the slot's budget, the
agent works, and it is ended when the budget refuses it a call (after a short grace to stop by itself), when the
model fails for good, or at its wall clock. Then the slot's evidence gets agent.json (kind, what stopped it, what it
spent, what of the workspace was not taken), the proxy's agent_calls.jsonl and the transcript agent_steps.jsonl.

What stopped it (`stopped_by`): the model's failure (`model_error`; the slot is `provider_error`, like a single
call that got no answer), else the budget part that refused it a call or whose wall clock ran out, else what the
agent says (`done`, `agent_error`). The workspace is judged in every case but the model's failure; one that holds
no answer is `invalid_output`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from runner.agents.base import Agent, AgentFailed, AgentOutcome, AgentTurn
from runner.agents.budget import BudgetMeter
from runner.agents.prompt import agent_messages, prompt_text
from runner.agents.proxy import ModelProxy
from runner.agents.settings import AgentSettings
from runner.agents.transcript import steps_from_calls
from runner.agents.workspace import AgentWorkspace
from runner.config import RunnerConfig
from runner.models.base import ModelResponse, ProviderError
from runner.models.parse import ParsedOutput, render_json_output
from runner.turns.generation import Generation, GenerationRound, GenerationTools, ModelCaller

__all__ = ["AgentGeneration", "STOP_GRACE_S", "agent_generation"]

STOP_GRACE_S = 3.0  # an agent refused a call for its budget may end by itself this long before it is stopped
DEFAULT_MESSAGE = "The workspace holds the changes."  # the answer's assistant text when the agent said nothing


class AgentGeneration:
    """Implements GenerationStrategy for one agent kind."""

    def __init__(self, agent: Agent, settings: AgentSettings, *, kind: str, model_name: str, vision: bool) -> None:
        self.agent = agent
        self.settings = settings
        self.kind = kind
        self.name = f"agent:{kind}"
        self.model_name = model_name
        self.vision = vision
        self._proxy: ModelProxy | None = None

    async def generate(self, messages: list[dict[str, Any]], call: ModelCaller, tools: GenerationTools) -> Generation:
        if self._proxy is None:
            self._proxy = ModelProxy()
        started = time.perf_counter()
        workspace = AgentWorkspace(tools.evidence.agent_workspace, template=tools.web_template, static=tools.static)
        await asyncio.to_thread(workspace.seed, tools.previous_files)
        told = agent_messages(messages, static=tools.static)
        meter = BudgetMeter(self.settings.budget)
        snapshots: dict[int, dict[str, str]] = {}  # the workspace as each call arrived: the transcript's file changes

        def arrived(index: int) -> None:
            snapshots[index] = workspace.snapshot()

        async with self._proxy.session(upstream=tools.chat, meter=meter, model_name=self.model_name,
                                       recorder=tools.evidence, on_request=arrived) as session:
            turn = AgentTurn(task_id=tools.task_id, turn=tools.turn, messages=told, prompt=prompt_text(told),
                             workspace=workspace, session=session, tools=tools, vision=self.vision,
                             first_turn=not tools.previous_files or tools.turn == 1)
            outcome, cut = await self._work(turn)
        answer = await asyncio.to_thread(workspace.answer)
        final = await asyncio.to_thread(workspace.snapshot)
        if not outcome.steps_written:
            for step in steps_from_calls(tools.evidence.read_agent_calls(), snapshots, final):
                tools.evidence.append_agent_step(step)
        stopped_by = ("model_error" if session.failure is not None else meter.exhausted_by or cut
                      or outcome.stopped_by)
        usage = {"prompt_tokens": meter.prompt_tokens, "completion_tokens": meter.completion_tokens}
        summary = {"kind": self.kind, "stopped_by": stopped_by, "budget": self.settings.budget.model_dump(),
                   "spent": meter.summary(), "calls": session.calls, "model_seconds": round(session.model_seconds, 3),
                   "seconds": round(time.perf_counter() - started, 3), "exit_code": outcome.exit_code,
                   "files": sorted(answer.files), "notes": [*outcome.notes, *answer.notes]}
        if session.unrouted:
            summary["unrouted_requests"] = session.unrouted
        if session.failure is not None:
            summary["error"] = session.failure
        tools.evidence.write_agent(summary)
        record = {key: summary[key] for key in ("kind", "stopped_by", "calls", "model_seconds", "seconds",
                                                "exit_code")}
        record.update(steps=meter.steps, tokens=meter.tokens)
        if session.failure is not None:
            raise ProviderError(f"the agent's model failed: {session.failure}", extra={"agent": record})
        message = outcome.message.strip() or DEFAULT_MESSAGE
        text = render_json_output(message, answer.files) if answer.files else ""
        response = ModelResponse(text=text, usage=usage, latency_s=session.model_seconds)
        rounds = [GenerationRound(1, "agent", told, response, time.perf_counter() - started)]
        return Generation(self.name, rounds, answer=ParsedOutput(message, answer.files), extra={"agent": record})

    async def _work(self, turn: AgentTurn) -> tuple[AgentOutcome, str | None]:
        """The agent's work, ended by its budget, the model's failure or its wall clock; (outcome, the wall clock
        when it cut the work)."""
        work = asyncio.ensure_future(self.agent.work(turn))
        stopped = asyncio.ensure_future(turn.session.stopped.wait())
        cut: str | None = None
        try:
            done, _ = await asyncio.wait({work, stopped}, timeout=self.settings.budget.wall_clock_s,
                                         return_when=asyncio.FIRST_COMPLETED)
            if work not in done and stopped in done:  # refused a call, or the model failed: a moment to end itself
                done, _ = await asyncio.wait({work}, timeout=STOP_GRACE_S)
            if work not in done:
                cut = "wall_clock" if not turn.session.stopped.is_set() else None
                work.cancel()
                with contextlib.suppress(asyncio.CancelledError, AgentFailed):
                    await work
                return AgentOutcome(stopped_by="wall_clock" if cut else "done",
                                    notes=["the agent was stopped"]), cut
            try:
                return work.result(), None
            except AgentFailed as error:
                return AgentOutcome(stopped_by="agent_error", notes=[str(error)]), None
        finally:
            for task in (work, stopped):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task

    async def aclose(self) -> None:
        await self.agent.aclose()
        if self._proxy is not None:
            await self._proxy.aclose()


def agent_generation(agent: Agent, settings: AgentSettings, *, kind: str, config: RunnerConfig) -> AgentGeneration:
    """The run's generation strategy for `agent`: the proxy answers as the run's model (`model.name`), and a
    screenshot reaches the model only where its config says it takes images (`model.vision`)."""
    vision = config.model_roles["generator"].capabilities.vision
    return AgentGeneration(agent, settings, kind=kind, model_name=config.model.name, vision=vision)
