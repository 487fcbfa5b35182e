"""The built-in judge kinds. Each factory imports its judge when a run builds it, so validating a config
imports only the settings of the judge it names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runner.kinds import register_kind

if TYPE_CHECKING:
    from runner.judges.base import Judge
    from runner.judges.llm_settings import LLMJudgeSettings
    from runner.judges.rules import RulesJudgeSettings
    from runner.models.base import Model


@register_kind("judge", "rules", settings="runner.judges.rules:RulesJudgeSettings", section="rules")
def rules_judge(settings: RulesJudgeSettings, *, name: str, model: Model | None = None) -> Judge:
    from runner.judges.rules import RulesJudge

    return RulesJudge(settings)


def llm_judge_rubrics(judge: Any) -> list[str]:
    """The rubric an LLM judge scores by (lineage records its version)."""
    return [str((judge.options or {}).get("rubric", "evogenui"))]


def llm_judge_calls(settings: LLMJudgeSettings) -> int:
    """One verdict: the first answer and the retries of a malformed one."""
    return settings.max_attempts


@register_kind("judge", "llm", settings="runner.judges.llm_settings:LLMJudgeSettings", calls_model=True,
               rubrics=llm_judge_rubrics, calls_per_use=llm_judge_calls)
def llm_judge(settings: LLMJudgeSettings, *, name: str, model: Model | None = None) -> Judge:
    from runner.judges.llm import LLMJudge

    return LLMJudge(settings, name=name, model=model)
