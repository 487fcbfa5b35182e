"""Generation strategies: how a slot turns its payload into the answer that is parsed.

The engine hands a strategy the turn's messages, a caller for the model under test (its concurrency
limit and timeout applied) and the slot's `GenerationTools` (build an answer in the run's sandbox and read
its log); the strategy makes one or more calls and returns every round, the last one's text being the
answer. `single_pass` is one call. Multi-round strategies (I-WebGenBench's self-repair rounds, C.3, and
block pipeline, C.4) live in their suite, which constructs its strategy (`Suite.generation_strategy()`);
each round, and each round's build, is written to the slot's evidence. An agent (runner/agents/strategy.py) is a
strategy whose answer is the files its workspace holds when it stops (`Generation.answer`), not a text to parse.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from runner.errors import ConfigError
from runner.kinds import KINDS, register
from runner.models.base import ChatAnswer, ModelResponse
from runner.models.parse import ParsedOutput
from runner.sandbox.base import BuildResult, ConfinedCommand
from runner.sandbox.isolation import RunOutcome
from runner.turns.evidence_folder import EvidenceFolder

Messages = list[dict[str, Any]]
ModelCaller = Callable[[Messages], Awaitable[ModelResponse]]  # raises ProviderError or TimeoutError


@dataclass
class BuildCheck:
    """An answer parsed by the output contract and built in the slot's sandbox workspace.

    `ok`: it parsed and built. `log`: the build log, or why it did not parse (then `parsed` and `build` are
    None and `files` is empty). The engine reuses the build of the final answer when it was checked last.
    """

    text: str
    ok: bool
    log: str
    files: dict[str, str]
    parsed: ParsedOutput | None = None
    build: BuildResult | None = None


@dataclass
class PagePreview:
    """A built answer's page as the browser showed it once (an agent's look at its work): what it rendered."""

    screenshot_png: bytes | None
    visible_text: str = ""
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    load_error: str = ""


class GenerationTools(Protocol):
    """What the engine lends a strategy for one slot besides the model caller."""

    task_id: str
    turn: int
    evidence: EvidenceFolder  # the slot's evidence folder
    previous_files: dict[str, str]  # the episode's sources before this turn (what an agent's workspace starts with)
    web_template: str | None  # the suite's template (None: the default); unused for static artifacts
    static: bool  # the artifact is a static page (no build, no template)

    async def build(self, text: str) -> BuildCheck:
        """Parse `text` by the output contract and build it in the run's sandbox, as the engine does."""
        ...

    async def build_files(self, files: dict[str, str]) -> BuildCheck:
        """Build these files in the run's sandbox, as the engine builds an answer's (an agent's tried build)."""
        ...

    async def chat(self, body: dict[str, Any]) -> ChatAnswer:
        """One chat-completions request of an agent to the model under test (its concurrency limit and call
        timeout applied; runner/agents/proxy.py is the only caller)."""
        ...

    async def preview(self, build: BuildResult) -> PagePreview:
        """The built page served (without the suite's tool bridge) and loaded once in one of the run's browsers."""
        ...

    async def run_confined(self, command: ConfinedCommand) -> RunOutcome:
        """A command in the run's sandbox, confined as a build is (runner/agents/command.py)."""
        ...


@dataclass
class GenerationRound:
    """One model call of a slot."""

    index: int  # 1-based
    purpose: str  # what the call was for ("answer"; a repair or a block in multi-round strategies)
    messages: Messages
    response: ModelResponse
    seconds: float
    check: BuildCheck | None = None  # the build of this round's answer, when the strategy built it


@dataclass
class Generation:
    """Every round of a slot, in order; the last one's text is the answer to parse, unless the strategy gives its
    answer as files (`answer`: an agent's workspace, whose empty file set is an invalid output)."""

    strategy: str
    rounds: list[GenerationRound]
    answer: ParsedOutput | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # kept in the TurnRecord's extra (an agent's: "agent")

    @property
    def final(self) -> ModelResponse:
        return self.rounds[-1].response

    @property
    def seconds(self) -> float:
        return sum(item.seconds for item in self.rounds)

    @property
    def builds(self) -> list[bool]:
        """Per round whose answer the strategy built: did it build (an unparsable answer did not)."""
        return [item.check.ok for item in self.rounds if item.check is not None]

    @property
    def usage(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for item in self.rounds:
            for key, value in item.response.usage.items():
                total[key] = total.get(key, 0) + int(value)
        return total


class GenerationStrategy(Protocol):
    name: str

    async def generate(self, messages: Messages, call: ModelCaller, tools: GenerationTools) -> Generation: ...


async def timed_round(index: int, purpose: str, messages: Messages, call: ModelCaller) -> GenerationRound:
    started = time.perf_counter()
    response = await call(messages)
    return GenerationRound(index, purpose, messages, response, time.perf_counter() - started)


class SinglePass:
    """One call: the payload in, the answer out."""

    name = "single_pass"

    async def generate(self, messages: Messages, call: ModelCaller, tools: GenerationTools) -> Generation:
        return Generation(self.name, [await timed_round(1, "answer", messages, call)])


# name -> constructor: single_pass, and what suite packages declare (GENERATION_STRATEGIES in their
# `__init__.py`, runner/kinds.py), imported when built.
register("generation", SinglePass.name, SinglePass)
STRATEGIES: Mapping[str, Callable[[], GenerationStrategy]] = KINDS.members("generation")


def build_strategy(name: str) -> GenerationStrategy:
    if name not in STRATEGIES:
        raise ConfigError(f"unknown generation strategy {name!r}; choose from {sorted(STRATEGIES)}")
    return STRATEGIES[name]()
