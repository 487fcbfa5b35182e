"""Judge registry: judge config -> Judge."""

from __future__ import annotations

from runner.config import ConfigError, JudgeConfig
from runner.judges.base import Judge


def build_judge(config: JudgeConfig) -> Judge:
    if config.kind == "rules":
        from runner.judges.rules import RulesJudge

        return RulesJudge(config.rules)
    if config.kind == "llm":
        from runner.judges.llm import LLMJudge, LLMJudgeSettings

        return LLMJudge(LLMJudgeSettings.from_options(config.options, prefix="judge.options"), name=config.name)
    raise ConfigError(f"judge.kind = {config.kind!r}: not available in this version; choose rules or llm")
