"""I-WebGenBench's iterative self-repair (C.3) as a generation strategy.

The first pass (a single call, or the block pipeline of C.4) gives an answer; the strategy builds it in the
slot's sandbox. While it does not build, the same model (the generator) gets the build-error log and the
current source and answers again, up to K rounds. Every round's request, answer and build log lands in the
slot's evidence; the engine reuses the last round's build. An app that still does not build scores 0 on every
dimension: the suite applies that from the record's build status.
"""

from __future__ import annotations

from runner.turns.generation import (
    BuildCheck,
    Generation,
    GenerationStrategy,
    GenerationTools,
    Messages,
    ModelCaller,
    SinglePass,
    timed_round,
)
from runner.models.parse import render_json_output

__all__ = ["LOG_CHARS", "REPAIR_ROUNDS", "SOURCE_CHARS", "SelfRepair", "repair_messages"]

REPAIR_ROUNDS = 5  # K: "Up to K=5 repair rounds are attempted" (I-WebGenBench C.3)
LOG_CHARS = 3_000  # "the full build-error log (truncated to 3 000 characters)" (I-WebGenBench C.3)
SOURCE_CHARS = 40_000  # "the current source file (up to 40 000 characters)" (I-WebGenBench C.3)

REPAIR_PROMPT = """\
The application you wrote does not build. The build-error log follows, then a request to fix it.

Build-error log{log_note}:
```
{log}
```

Fix every error in the log. Answer with the complete corrected application in the same output format as \
before (every file in full, not a diff), keeping all the functionality the specification asks for."""


def _cut(text: str, limit: int) -> tuple[str, str]:
    """`text` truncated to `limit` characters, and a note saying how much was cut (empty when nothing)."""
    if len(text) <= limit:
        return text, ""
    return text[:limit], f" (first {limit} of {len(text)} characters)"


def repair_messages(messages: Messages, check: BuildCheck, *, log_chars: int = LOG_CHARS,
                    source_chars: int = SOURCE_CHARS) -> Messages:
    """The repair request: the payload, the current source as the model's previous answer (at most
    `source_chars`), then the build-error log (at most `log_chars`) with the request to fix it (C.3)."""
    source = render_json_output("", check.files) if check.files else check.text
    source, _ = _cut(source, source_chars)
    log, log_note = _cut(check.log.strip() or "(the build printed nothing)", log_chars)
    return [
        *messages,
        {"role": "assistant", "content": source},
        {"role": "user", "content": REPAIR_PROMPT.format(log=log, log_note=log_note)},
    ]


class SelfRepair:
    """Build the first pass's answer; on failure ask the same model for a repaired one, at most `rounds` times."""

    name = "self_repair"

    def __init__(self, first_pass: GenerationStrategy | None = None, *, rounds: int = REPAIR_ROUNDS,
                 log_chars: int = LOG_CHARS, source_chars: int = SOURCE_CHARS) -> None:
        if rounds < 0:
            raise ValueError(f"self-repair rounds must be >= 0, got {rounds}")
        self.first_pass: GenerationStrategy = first_pass or SinglePass()
        self.rounds = rounds
        self.log_chars = log_chars
        self.source_chars = source_chars
        if self.first_pass.name != SinglePass.name:
            self.name = f"{self.first_pass.name}+self_repair"

    async def generate(self, messages: Messages, call: ModelCaller, tools: GenerationTools) -> Generation:
        first = await self.first_pass.generate(messages, call, tools)
        rounds = list(first.rounds)
        check = await tools.build(first.final.text or "")
        rounds[-1].check = check
        for _ in range(self.rounds):
            # A sandbox failure is the harness's, not the model's: nothing for the model to repair.
            if check.ok or (check.build is not None and check.build.status == "infra"):
                break
            request = repair_messages(messages, check, log_chars=self.log_chars, source_chars=self.source_chars)
            repaired = await timed_round(len(rounds) + 1, "repair", request, call)
            check = await tools.build(repaired.response.text or "")
            repaired.check = check
            rounds.append(repaired)
        return Generation(self.name, rounds)
