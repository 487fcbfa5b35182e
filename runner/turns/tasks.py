"""Task and turn specifications: the benchmark items a suite yields.

Everything marked private (requirements, reference files, backend material) is held here for the
actor and judge; only `public_view` material ever reaches the model under test.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runner.judges.checks import Check


class Requirement(BaseModel):
    """One private validation requirement; `check` makes it executable by the rules judge."""

    model_config = ConfigDict(extra="forbid")

    id: str
    description: str
    check: Check | None = None
    kind: str = "evidence"  # evidence | alignment | tool | state; informative for LLM judges


class TurnSpec(BaseModel):
    """One turn of a task. `index` is 1-based, as in the papers."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=1)
    prompt: str
    requirements: list[Requirement] = Field(default_factory=list)  # private
    reference_files: dict[str, str] | None = None  # private: the oracle's answer
    reference_text: str = ""  # private: the oracle's assistant text
    requires_previous_artifact: bool = True  # blocked when the previous turn left no artifact
    # Which independent generation of the same prompt this turn is (FlowEval §3.1: five per prompt, each its own
    # answer); it reaches the model request and its response-cache key. 0: the turn's prompt is asked once.
    sample: int = Field(default=0, ge=0)
    extra: dict[str, Any] = Field(default_factory=dict)  # private suite-specific material


class Task(BaseModel):
    """One benchmark item: public context plus a sequence of turns."""

    model_config = ConfigDict(extra="forbid")

    id: str
    suite: str
    sub_suite: str = ""
    title: str = ""
    domain: str = ""
    context: str = ""  # public task context shown to the generator
    public_contract: dict[str, Any] = Field(default_factory=dict)  # public tool/resource contracts
    turns: list[TurnSpec]
    source_path: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)  # private suite-specific material

    def turn(self, index: int) -> TurnSpec:
        return self.turns[index - 1]
