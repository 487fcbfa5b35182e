"""Generation strategies: how a slot turns its payload into the answer that is parsed.

The engine hands a strategy the turn's messages and a caller for the model under test (its concurrency
limit and timeout applied); the strategy makes one or more calls and returns every round, the last one's
text being the answer. `single_pass` is one call. Multi-round strategies (I-WebGenBench's self-repair
rounds, C.3, and block pipeline, C.4) plug in here; each round is written to the slot's evidence.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from runner.models.base import ModelResponse
from runner.plugins import declared, load

Messages = list[dict[str, Any]]
ModelCaller = Callable[[Messages], Awaitable[ModelResponse]]  # raises ProviderError or TimeoutError


@dataclass
class GenerationRound:
    """One model call of a slot."""

    index: int  # 1-based
    purpose: str  # what the call was for ("answer"; a repair or a block in multi-round strategies)
    messages: Messages
    response: ModelResponse
    seconds: float


@dataclass
class Generation:
    """Every round of a slot, in order; the last one's text is the answer to parse."""

    strategy: str
    rounds: list[GenerationRound]

    @property
    def final(self) -> ModelResponse:
        return self.rounds[-1].response

    @property
    def seconds(self) -> float:
        return sum(item.seconds for item in self.rounds)

    @property
    def usage(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for item in self.rounds:
            for key, value in item.response.usage.items():
                total[key] = total.get(key, 0) + int(value)
        return total


class GenerationStrategy(Protocol):
    name: str

    async def generate(self, messages: Messages, call: ModelCaller) -> Generation: ...


async def timed_round(index: int, purpose: str, messages: Messages, call: ModelCaller) -> GenerationRound:
    started = time.perf_counter()
    response = await call(messages)
    return GenerationRound(index, purpose, messages, response, time.perf_counter() - started)


class SinglePass:
    """One call: the payload in, the answer out."""

    name = "single_pass"

    async def generate(self, messages: Messages, call: ModelCaller) -> Generation:
        return Generation(self.name, [await timed_round(1, "answer", messages, call)])


# name -> constructor: single_pass, and what suite packages declare (GENERATION_STRATEGIES in their
# `__init__.py`, runner/plugins.py), imported when built.
STRATEGIES: dict[str, Callable[[], GenerationStrategy] | str] = {
    SinglePass.name: SinglePass,
    **declared("GENERATION_STRATEGIES"),
}


def build_strategy(name: str) -> GenerationStrategy:
    if name not in STRATEGIES:
        raise ValueError(f"unknown generation strategy {name!r}; choose from {sorted(STRATEGIES)}")
    constructor = STRATEGIES[name]
    return (load(constructor) if isinstance(constructor, str) else constructor)()
