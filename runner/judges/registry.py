"""Judge registry: judge config -> Judge."""

from __future__ import annotations

from runner.errors import ConfigError, section_settings
from runner.config import JudgeConfig
from runner.judges.base import Judge
from runner.models.base import Model


def build_judge(config: JudgeConfig, *, model: Model | None = None) -> Judge:
    """`model`: the judge's endpoint model when the run built it (so the run knows its served models by role)."""
    if config.kind == "rules":
        from runner.judges.rules import RulesJudge, RulesJudgeSettings

        return RulesJudge(section_settings(RulesJudgeSettings, config.rules, "judge.rules"))
    if config.kind == "llm":
        from runner.judges.llm import LLMJudge
        from runner.judges.llm_settings import LLMJudgeSettings

        return LLMJudge(LLMJudgeSettings.from_options(config.options, prefix="judge.options"), name=config.name,
                        model=model)
    raise ConfigError(f"judge.kind = {config.kind!r}: not available in this version; choose rules or llm")
