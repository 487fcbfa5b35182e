"""The built-in agent kinds (conf/agent/). A factory takes the kind's settings and the run's config and returns
the run's generation strategy, or None for `none` (the suite's own: one model call per turn, or its rounds).
Each imports its implementation when a run builds it, so validating a config imports only its settings.

A command agent (an official CLI run in the sandbox, runner/agents/command.py) registers here too, its factory
returning `command_agent(spec, settings, config=config)` with its own CommandSpec and settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runner.kinds import register_kind

if TYPE_CHECKING:
    from runner.agents.builtin import BuiltinAgentSettings
    from runner.agents.command import CommandAgentSettings
    from runner.agents.settings import AgentSettings
    from runner.config import RunnerConfig
    from runner.turns.generation import GenerationStrategy

def agent_calls(settings: AgentSettings) -> int:
    """The most model calls one turn of an agent makes: its step budget (run.plan=true bounds by it)."""
    return settings.budget.steps


@register_kind("agent", "none", inert=True)
def no_agent(settings: None, *, config: RunnerConfig) -> GenerationStrategy | None:
    return None


@register_kind("agent", "builtin", settings="runner.agents.builtin:BuiltinAgentSettings",
               preflight="runner.agents.preflight:check_agent_model", calls_per_use=agent_calls)
def builtin_agent(settings: BuiltinAgentSettings, *, config: RunnerConfig) -> GenerationStrategy:
    from runner.agents.builtin import BuiltinAgent
    from runner.agents.strategy import agent_generation

    return agent_generation(BuiltinAgent(settings), settings, kind="builtin", config=config)


# The official CLIs (runner/agents/clis/): each runs in the agent image, with the docker sandbox only.
_CLI = dict(settings="runner.agents.command:CommandAgentSettings", preflight="runner.agents.clis.image:check_cli_agent",
            calls_per_use=agent_calls, images="runner.agents.clis.image:agent_images")


@register_kind("agent", "qwen-code", **_CLI)
def qwen_code_agent(settings: CommandAgentSettings, *, config: RunnerConfig) -> GenerationStrategy:
    from runner.agents.clis.image import cli_agent
    from runner.agents.clis.qwen_code import QwenCode

    return cli_agent(QwenCode, settings, config=config)


@register_kind("agent", "codex", **_CLI)
def codex_agent(settings: CommandAgentSettings, *, config: RunnerConfig) -> GenerationStrategy:
    from runner.agents.clis.codex import Codex
    from runner.agents.clis.image import cli_agent

    return cli_agent(Codex, settings, config=config)


@register_kind("agent", "gemini-cli", **_CLI)
def gemini_cli_agent(settings: CommandAgentSettings, *, config: RunnerConfig) -> GenerationStrategy:
    from runner.agents.clis.gemini_cli import GeminiCli
    from runner.agents.clis.image import cli_agent

    return cli_agent(GeminiCli, settings, config=config)


@register_kind("agent", "claude-code", **_CLI)
def claude_code_agent(settings: CommandAgentSettings, *, config: RunnerConfig) -> GenerationStrategy:
    from runner.agents.clis.claude_code import ClaudeCode
    from runner.agents.clis.image import cli_agent

    return cli_agent(ClaudeCode, settings, config=config)
