"""I-WebGenBench's block pipeline (C.4) as a generation strategy.

A splitter role decomposes the specification into UI blocks, the generator writes each block, and a merger
role combines the blocks into the complete application in the output contract. Each step is one round of
the slot's generation (purpose "split", "block:<name>", "merge"), so its request and answer are in the
evidence. Splitter and merger are the run's `roles.splitter` / `roles.merger` (runner/run/roles.py).
"""

from __future__ import annotations

import asyncio
import time

from pydantic import BaseModel, ConfigDict, Field, field_validator

from runner.turns.generation import Generation, GenerationRound, GenerationTools, Messages, ModelCaller, timed_round
from runner.models.base import GenerationRequest, Model, ModelResponse, ProviderError
from runner.models.parse import InvalidOutput, parse_model_output
from runner.models.structured import StructuredMode, StructuredOutputError, ask_structured

__all__ = ["MAX_BLOCKS", "SPLIT_ATTEMPTS", "Block", "BlockPipeline", "BlockPlan", "ROLES"]

ROLES = ("splitter", "merger")
# A specification holds 3-10 core interaction elements (I-WebGenBench §3.1): at most one block each.
MAX_BLOCKS = 10
SPLIT_ATTEMPTS = 3  # the splitter's block list: a malformed one is asked again, then the slot has no answer

SPLITTER_PROMPT = """\
You plan the implementation of an interactive scientific web application. Decompose the specification \
the user gives into self-contained UI blocks: each block is one visible part of the interface (a control \
panel, a chart, a simulation view, an explanation panel, ...) that one developer can build on its own. \
Cover every interactive module, parameter and expected response of the specification, each in exactly one \
block.

Answer with a JSON object only: {"blocks": [{"name": "PascalCaseComponentName", "description": "what the \
block shows, which controls it has, how it reacts, which state it shares with other blocks"}]}"""

BLOCK_PROMPT = """\
Do not write the whole application now. Write only this UI block of it, as one React component named \
`{name}` (default export) in its own file under src/blocks/, with any state it shares taken as props:

{description}

Answer in the output format above with that one file."""

MERGER_PROMPT = """\
The application has been written block by block; the blocks follow. Combine them into the complete \
application the specification asks for: one root component that lays the blocks out, holds the state they \
share and wires their props, with every block's functionality kept. Answer in the output format above with \
every file of the finished application in full.

{blocks}"""


class Block(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # The length bound inside the pattern: vLLM's xgrammar backend refuses a pattern beside maxLength.
    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    description: str = Field(min_length=1)


class BlockPlan(BaseModel):
    """The splitter's answer."""

    model_config = ConfigDict(extra="forbid")

    blocks: list[Block] = Field(min_length=1, max_length=MAX_BLOCKS)

    @field_validator("blocks")
    @classmethod
    def _distinct_names(cls, blocks: list[Block]) -> list[Block]:
        names = [block.name for block in blocks]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"block names must be distinct; repeated: {repeated}")
        return blocks


def specification_text(messages: Messages) -> str:
    """The text of the payload's user messages (the specification), for the splitter."""
    parts: list[str] = []
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"]
    return "\n\n".join(part for part in parts if part.strip())


def _block_source(block: Block, answer: str) -> str:
    """One block's files as fenced sections for the merger (the raw answer when it holds no files)."""
    try:
        files = parse_model_output(answer).files
    except InvalidOutput:
        return f"### Block {block.name} (its answer held no parsable files)\n{answer.strip()}"
    sections = [f"```{path}\n{content.rstrip()}\n```" for path, content in sorted(files.items())]
    return f"### Block {block.name}\n" + "\n\n".join(sections)


STRUCTURED_MODE: StructuredMode = "json_schema"  # how the splitter is asked for its block list


class BlockPipeline:
    """Split (splitter role), generate each block (the generator), merge (merger role)."""

    name = "blocks"

    def __init__(self, splitter: Model, merger: Model, *, structured_mode: StructuredMode = STRUCTURED_MODE) -> None:
        self.splitter = splitter
        self.merger = merger
        self.structured_mode = structured_mode

    async def generate(self, messages: Messages, call: ModelCaller, tools: GenerationTools) -> Generation:
        split, plan = await self._split(messages, tools)
        block_requests = [
            [*messages, {"role": "user", "content": BLOCK_PROMPT.format(name=block.name, description=block.description)}]
            for block in plan.blocks
        ]
        blocks = await asyncio.gather(*(
            timed_round(index, f"block:{block.name}", request, call)
            for index, (block, request) in enumerate(zip(plan.blocks, block_requests), start=2)
        ))
        sources = "\n\n".join(_block_source(block, item.response.text or "") for block, item in zip(plan.blocks, blocks))
        merge_request = [*messages, {"role": "user", "content": MERGER_PROMPT.format(blocks=sources)}]
        merge = await self._role_round(len(blocks) + 2, "merge", self.merger, merge_request, tools)
        return Generation(self.name, [split, *blocks, merge])

    async def _split(self, messages: Messages, tools: GenerationTools) -> tuple[GenerationRound, BlockPlan]:
        request = [{"role": "system", "content": SPLITTER_PROMPT},
                   {"role": "user", "content": specification_text(messages)}]
        started = time.perf_counter()
        try:
            result = await ask_structured(
                self.splitter, messages=request, answer=BlockPlan,
                name="block_plan", mode=self.structured_mode, task_id=tools.task_id, turn=tools.turn,
                max_attempts=SPLIT_ATTEMPTS,
            )
        except StructuredOutputError as error:
            # Not the generator's failure: it was never asked. The slot has no answer (provider_error).
            raise ProviderError(f"block pipeline: the splitter gave no usable block list ({'; '.join(error.errors)})") from error
        response = ModelResponse(text=result.text, usage=result.usage)
        return GenerationRound(1, "split", request, response, time.perf_counter() - started), result.value

    @staticmethod
    async def _role_round(index: int, purpose: str, model: Model, request: Messages,
                          tools: GenerationTools) -> GenerationRound:
        started = time.perf_counter()
        response = await model.generate(GenerationRequest(task_id=tools.task_id, turn=tools.turn, messages=request))
        return GenerationRound(index, purpose, request, response, time.perf_counter() - started)
