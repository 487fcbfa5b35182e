"""What every agent kind's settings hold (conf/agent/<name>.yaml, under `options`): its budget per turn. A kind
adds its own keys in a subclass (the built-in agent's tool choice, a command agent's limits)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from runner.agents.budget import AgentBudget

__all__ = ["AgentSettings"]


class AgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    budget: AgentBudget = Field(default_factory=AgentBudget)
