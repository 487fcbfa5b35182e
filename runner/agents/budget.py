"""A slot's agent budget, as the model proxy spends it: steps (model calls), tokens (prompt and completion, every
call counted) and wall clock. Whatever ends the agent is recorded as `stopped_by`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AgentBudget", "BudgetMeter", "StopReason", "STOP_REASONS"]

# Why an agent stopped: it said it was done (its process ended, or its loop gave its final answer), one of the
# budget's three parts ran out, the model gave no answer after the run's retries, or the agent itself failed
# (a crashed command, a loop that could not go on).
StopReason = Literal["done", "steps", "tokens", "wall_clock", "model_error", "agent_error"]
STOP_REASONS: tuple[str, ...] = ("done", "steps", "tokens", "wall_clock", "model_error", "agent_error")
BUDGET_PARTS: tuple[str, ...] = ("steps", "tokens", "wall_clock")


class AgentBudget(BaseModel):
    """What one turn of an agent may spend. The papers fix none (FlowEval §3.1 names the agents, not their
    limits): these defaults are the project's, and every run records them in its config."""

    model_config = ConfigDict(extra="forbid")

    steps: int = Field(50, ge=1)  # model calls
    tokens: int = Field(2_000_000, ge=1)  # prompt + completion tokens over all of the turn's calls
    wall_clock_s: float = Field(1800.0, gt=0)  # from the agent's start to the end of its last call


@dataclass
class BudgetMeter:
    """One slot's spending. The proxy asks `refusal()` before each call, caps its output at `tokens_left`, and
    `spend`s its usage; the first part found spent is `exhausted_by`."""

    budget: AgentBudget
    clock: Callable[[], float] = time.monotonic
    started: float = field(init=False)
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    exhausted_by: str | None = None

    def __post_init__(self) -> None:
        self.started = self.clock()

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def tokens_left(self) -> int:
        return max(0, self.budget.tokens - self.tokens)

    @property
    def seconds(self) -> float:
        return self.clock() - self.started

    @property
    def seconds_left(self) -> float:
        return max(0.0, self.budget.wall_clock_s - self.seconds)

    def refusal(self) -> str | None:
        """The budget part that refuses one more call (recorded as `exhausted_by`), or None."""
        if self.exhausted_by is None:
            if self.steps >= self.budget.steps:
                self.exhausted_by = "steps"
            elif self.tokens >= self.budget.tokens:
                self.exhausted_by = "tokens"
            elif self.seconds_left <= 0:
                self.exhausted_by = "wall_clock"
        return self.exhausted_by

    def spend(self, usage: dict[str, int]) -> None:
        """One answered call and its tokens."""
        self.steps += 1
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)

    def describe(self, part: str) -> str:
        """What was spent of `part`, in words: "steps: 20 of 20"."""
        if part == "steps":
            return f"steps: {self.steps} of {self.budget.steps}"
        if part == "tokens":
            return f"tokens: {self.tokens} of {self.budget.tokens}"
        return f"wall clock: {self.seconds:.1f} s of {self.budget.wall_clock_s:g} s"

    def summary(self) -> dict[str, float | int]:
        return {"steps": self.steps, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "tokens": self.tokens, "seconds": round(self.seconds, 3)}
