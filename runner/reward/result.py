"""What one scored answer returns: the reward, its parts, the slot's bucket and where its evidence is."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runner.turns.records import DimensionScore, FailureBucket, RequirementResult, TurnRecord
from runner.reward.episodes import StatePayload

__all__ = ["Reward"]


class Reward(BaseModel):
    """`reward`: the suite's scalar in [0, 1] (Suite.turn_reward: MT-Web2Code's eq. 12 score; I-WebGenBench's
    B.1 total / 100, else IR; the share of requirements passed), None when the answer is not what failed (the
    harness, the judge, a blocked chain) or nothing was assessed. `status`: the run's failure bucket ("ok",
    "invalid_output", "build_failed", ...). `scores`, `dimensions`, `requirements`: the record's own numbers
    and the verdict's parts, the same a full run records for this answer."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    turn: int
    reward: float | None
    status: FailureBucket
    passed: bool | None
    built: bool
    scores: dict[str, float] = Field(default_factory=dict)
    dimensions: dict[str, DimensionScore] = Field(default_factory=dict)
    requirements: list[RequirementResult] = Field(default_factory=list)
    error: str = ""
    summary: str = ""
    timings: dict[str, float] = Field(default_factory=dict)
    evidence_dir: str | None = None  # absolute, when evidence was kept (keep_evidence)
    state: StatePayload | None = None  # the episode after this turn: pass it with the next turn's answer
    episode_id: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)  # the record's extra (build status, generation, probe mode)

    @classmethod
    def of(cls, record: TurnRecord, reward: float | None, **fields: Any) -> "Reward":
        verdict = record.verdict
        return cls(
            task_id=record.task_id, turn=record.turn, reward=reward, status=record.status, passed=record.passed,
            built=record.extra.get("build_status") == "ok", scores=dict(record.scores),
            dimensions=dict(verdict.dimensions) if verdict else {},
            requirements=list(verdict.requirements) if verdict else [], error=record.error,
            summary=verdict.summary if verdict else "", timings=dict(record.timings), extra=dict(record.extra),
            **fields,
        )
