"""Every model call of a run (generator, judge, actor) as a `ModelCall`, observed by wrapping the Model.

`TracedModel` forwards to the model it wraps and hands each finished call (the messages, the answer, token
usage, latency, the role and the task/turn it served) to a sink: the run's tracker, which files it as an
MLflow trace (runner/tracking/tracker.py). A sink that fails never fails the call. The run wraps each role's model
when it builds it (runner/run/roles.py); replay providers (oracle, null, identity) are never wrapped: their
"calls" cost nothing and say nothing about a model.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from runner.models.base import ChatAnswer, GenerationRequest, Model, ModelResponse

log = logging.getLogger(__name__)

__all__ = ["CallSink", "ModelCall", "TracedModel"]


@dataclass(frozen=True)
class ModelCall:
    """One request to a model and what came back (or the error that came instead)."""

    role: str  # generator, judge, actor, ...
    model: str  # the model config's name
    task_id: str  # "" when the caller did not say (a suite's own rubric call)
    turn: int
    messages: list[dict[str, Any]]
    response_format: dict[str, Any] | None
    text: str
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    started_ns: int = 0  # wall clock, ns since the epoch
    cached: bool = False  # answered from the response cache: no tokens spent now
    error: str | None = None


CallSink = Callable[[ModelCall], None]


def chat_text(completion: dict[str, Any]) -> str:
    """A chat completion's message as text: its content, then each tool call on a line of its own."""
    choices = completion.get("choices") or [{}]
    message = (choices[0] or {}).get("message") or {}
    lines = [message["content"]] if isinstance(message.get("content"), str) and message["content"] else []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        lines.append(f"[tool call] {function.get('name')}({function.get('arguments') or ''})")
    return "\n".join(lines)


class TracedModel:
    """Implements Model: the wrapped model's answers, unchanged, with each call reported to `sink`."""

    def __init__(self, inner: Model, *, role: str, sink: CallSink) -> None:
        self.inner = inner
        self.role = role
        self._sink = sink

    @property
    def name(self) -> str:
        return self.inner.name

    def __getattr__(self, attribute: str) -> Any:  # start(), log_path, server, settings of the wrapped model
        return getattr(self.inner, attribute)

    @property
    def answers_tool_calls(self) -> bool:
        return self.inner.answers_tool_calls

    async def chat(self, body: dict[str, Any], *, task_id: str, turn: int) -> ChatAnswer:
        """An agent's call (runner/agents/proxy.py), reported like any other: its messages, and its answer's text
        with each tool call as a line `[tool call] name(arguments)`."""
        started_ns, started = time.time_ns(), time.perf_counter()
        request = GenerationRequest(task_id=task_id, turn=turn, messages=list(body.get("messages") or []))
        try:
            answer = await self.inner.chat(body, task_id=task_id, turn=turn)
        except Exception as error:
            await self._report(request, started_ns, time.perf_counter() - started, error=f"{type(error).__name__}: {error}")
            raise
        await self._report(request, started_ns, answer.latency_s or time.perf_counter() - started,
                           response=ModelResponse(text=chat_text(answer.completion), usage=answer.usage))
        return answer

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        started_ns, started = time.time_ns(), time.perf_counter()
        try:
            response = await self.inner.generate(request)
        except Exception as error:
            await self._report(request, started_ns, time.perf_counter() - started, error=f"{type(error).__name__}: {error}")
            raise
        await self._report(request, started_ns, response.latency_s or time.perf_counter() - started, response=response)
        return response

    async def _report(self, request: GenerationRequest, started_ns: int, latency_s: float, *,
                      response: ModelResponse | None = None, error: str | None = None) -> None:
        call = ModelCall(
            role=self.role, model=self.inner.name, task_id=request.task_id, turn=request.turn,
            messages=request.messages, response_format=request.response_format,
            text=response.text if response is not None else "",
            usage={k: int(v) for k, v in (response.usage if response is not None else {}).items()},
            latency_s=latency_s, started_ns=started_ns, cached=bool(response and response.cached), error=error,
        )
        try:
            await asyncio.to_thread(self._sink, call)
        except Exception:  # the trace is a view; the call's answer is what the run needs
            log.exception("recording a %s call of %s failed", self.role, self.inner.name)

    async def aclose(self) -> None:
        await self.inner.aclose()
