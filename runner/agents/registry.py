"""Agent registry: the config's `agent` section -> the run's generation strategy (None for agent=none), by the kind
registered under its name (runner/kinds.py, runner/agents/kinds.py)."""

from __future__ import annotations

from runner.agents.strategy import AgentGeneration
from runner.config import RunnerConfig
from runner.kinds import KINDS

__all__ = ["build_agent"]


def build_agent(config: RunnerConfig) -> AgentGeneration | None:
    kind = KINDS.get("agent", config.agent.kind, key="agent.kind")
    return kind.factory(config.agent.settings, config=config)
