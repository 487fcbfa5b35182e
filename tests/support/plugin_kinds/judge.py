"""A judge that passes every turn with a configured score: the smallest judge there is."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from runner.judges.base import JudgeInput
from runner.kinds import register_kind
from runner.models.base import Model
from runner.turns.records import Verdict


class ConstantJudgeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    score: float = Field(default=1.0, ge=0.0, le=1.0)


class ConstantJudge:
    def __init__(self, settings: ConstantJudgeSettings, *, name: str) -> None:
        self.settings = settings
        self.name = name

    async def score(self, judge_input: JudgeInput) -> Verdict:
        return Verdict(judge=self.name, passed=True, scores={"constant": self.settings.score})

    async def aclose(self) -> None:
        return None


@register_kind("judge", "constant", settings=ConstantJudgeSettings)
def constant_judge(settings: ConstantJudgeSettings, *, name: str, model: Model | None = None) -> ConstantJudge:
    return ConstantJudge(settings, name=name)
