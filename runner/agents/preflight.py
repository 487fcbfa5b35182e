"""What an agent needs of the run, checked before any work: a generator that answers tool calls."""

from __future__ import annotations

from typing import Any

from runner.kinds import KINDS
from runner.problems import Problem

__all__ = ["check_agent_model"]


def check_agent_model(config: Any, suite: Any) -> list[Problem]:
    """The generator is a model that answers chat requests with tools: a hosted or attached endpoint, or a vLLM
    server that parses tool calls out of the model's text (`enable_auto_tool_choice` with its `tool_call_parser`;
    a built-in agent with `tool_choice: required` needs no parser: vLLM decodes the call under its schema)."""
    model = config.model.model_dump()
    provider = KINDS.find("model", str(model.get("provider")))
    agent = config.agent.name
    if provider is None or not provider.traced:
        return [Problem("model", f"agent={agent} needs a model that answers tool calls; model={model.get('name')} "
                                 f"(provider {model.get('provider')}) only replays answers",
                        "choose a served or hosted model (e.g. model=qwen3-coder), or agent=none")]
    server = model.get("server") or {}
    required = (config.agent.options or {}).get("tool_choice") == "required"
    if provider.vllm_served and server.get("mode") != "attach" \
            and not server.get("enable_auto_tool_choice") and not required:
        return [Problem("model.server.enable_auto_tool_choice",
                        f"agent={agent}: the vLLM server of {model.get('name')} is started without a tool-call "
                        "parser, so the model's tool calls would come back as plain text",
                        "set model.server.enable_auto_tool_choice=true and model.server.tool_call_parser=<the "
                        "model's parser> (docs/agents.md), or agent.options.tool_choice=required")]
    return []
