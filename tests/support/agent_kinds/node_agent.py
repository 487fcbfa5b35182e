"""A command agent kind for the seam's tests: node_agent.mjs (a minimal CLI-shaped agent, Node's standard library
only) run in the sandbox by runner/agents/command.py, with the build's Node, as an official CLI would be run."""

from __future__ import annotations

from pathlib import Path

from runner.agents.base import AgentTurn
from runner.agents.command import AgentCommand, CommandAgentSettings, ProxyAddress, command_agent
from runner.agents.kinds import agent_calls
from runner.config import RunnerConfig
from runner.kinds import register_kind
from runner.sandbox.base import NODE
from runner.sandbox.isolation import Mount

SCRIPT = Path(__file__).resolve().parent / "node_agent.mjs"
INSIDE = "/opt/test-agent/agent.mjs"


class NodeAgentSettings(CommandAgentSettings):
    probe: bool = False  # try the ways out first, printing what each gave
    probe_host: str = "127.0.0.1"
    probe_port: int = 9
    probe_file: str = ""  # a host file it tries to read too


class NodeAgentSpec:
    name = "node-agent"

    def __init__(self, settings: NodeAgentSettings) -> None:
        self.settings = settings

    def command(self, turn: AgentTurn, address: ProxyAddress) -> AgentCommand:
        env = {"OPENAI_BASE_URL": address.openai_base_url, "OPENAI_API_KEY": address.api_key,
               "GENUI_MODEL": address.model}
        if self.settings.probe:
            env.update(GENUI_PROBE="1", GENUI_PROBE_HOST=self.settings.probe_host,
                       GENUI_PROBE_PORT=str(self.settings.probe_port), GENUI_PROBE_FILE=self.settings.probe_file)
        return AgentCommand(argv=[NODE, INSIDE], env=env, mounts=[Mount(SCRIPT, INSIDE)], stdin=turn.prompt)


@register_kind("agent", "node-agent", settings=NodeAgentSettings, calls_per_use=agent_calls)
def node_agent(settings: NodeAgentSettings, *, config: RunnerConfig):
    return command_agent(NodeAgentSpec(settings), settings, config=config)
