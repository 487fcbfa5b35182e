"""Judge registry: judge config -> Judge, by the kind registered under its name (runner/kinds.py)."""

from __future__ import annotations

from runner.config import JudgeConfig
from runner.judges.base import Judge
from runner.kinds import KINDS
from runner.models.base import Model


def build_judge(config: JudgeConfig, *, model: Model | None = None) -> Judge:
    """`model`: the judge's endpoint model when the run built it (so the run knows its served models by role)."""
    kind = KINDS.get("judge", config.kind, key="judge.kind")
    return kind.factory(KINDS.resolve("judge", config).settings, name=config.name, model=model)
