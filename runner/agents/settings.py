"""What every agent kind's settings hold (conf/agent/<name>.yaml, under `options`): its budget per turn. A kind
adds its own keys in a subclass (the built-in agent's tool choice, a command agent's limits). And whether a run
uses the agent a paper used for its model (`agent.paper`, a preset's)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runner.agents.budget import AgentBudget

__all__ = ["AgentSettings", "paper_agent_deviation"]


class AgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    budget: AgentBudget = Field(default_factory=AgentBudget)


def paper_agent_deviation(config: Any) -> str | None:
    """What differs from the paper's setting where the config names the agent a paper generated this model with
    (`agent.paper`, set by a preset): None when the run uses that agent or the model is not listed."""
    expected = config.agent.paper.get(config.model.name)
    if expected is None or expected == config.agent.name:
        return None
    return (f"the paper generated {config.model.name} with its agent {expected}; this run used agent="
            f"{config.agent.name} (add agent={expected} for the paper's setting)")
