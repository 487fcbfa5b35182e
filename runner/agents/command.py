"""An agent that is a command run in the sandbox: the seam the official coding CLIs plug into.

A command agent kind gives a `CommandSpec`: for each turn, the command to run in the workspace, its environment,
the files its configuration needs in its home folder, the image it runs in (sandbox=docker) or the mounts that
bring its install (sandbox=local). `CommandAgent` runs it confined as a build is (no network, the sandbox's
isolation), with the agent's own limits and its wall clock, in the slot's workspace (/app) with the template's
node_modules (so it can build), and gives it one way out: the model proxy's socket, bound into the sandbox at
SOCKET_INSIDE, behind a relay (launch.mjs) that listens on the sandbox's own 127.0.0.1:`port`. The command is
told that address (`ProxyAddress`); the key it sends is a placeholder, the run's key stays in the runner.

The transcript is made from the proxy's records (runner/agents/transcript.py); the command's output is kept as
agent_files/process.log. Its exit status is recorded; a command that fails is the agent's failure (`agent_error`), and
the workspace it left is judged all the same.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import Field

from runner.agents.base import AgentOutcome, AgentTurn
from runner.agents.settings import AgentSettings
from runner.agents.strategy import AgentGeneration, agent_generation
from runner.config import RunnerConfig
from runner.sandbox.base import NODE, ConfinedCommand
from runner.sandbox.isolation import Mount
from runner.sandbox.limits import ResourceLimits
from runner.sandbox.scratch import scratch_dir
from runner.turns.evidence_folder import EvidenceFolder

__all__ = ["AGENT_DIR_INSIDE", "AgentCommand", "CommandAgent", "CommandAgentSettings", "CommandSpec", "HOME_INSIDE",
           "PROXY_KEY", "ProxyAddress", "SOCKET_INSIDE", "command_agent"]

LAUNCHER = Path(__file__).resolve().parent / "launch.mjs"
AGENT_DIR_INSIDE = "/opt/genui-agent"  # the relay and the proxy's socket, read-only
SOCKET_INSIDE = f"{AGENT_DIR_INSIDE}/model.sock"
LAUNCHER_INSIDE = f"{AGENT_DIR_INSIDE}/launch.mjs"
HOME_INSIDE = "/home/agent"  # the agent's home: its configuration files, writable, empty at each turn
STDIN_NAME = ".genui-stdin"  # in its home: what the relay feeds the command's standard input
PROXY_KEY = "genui-proxy"  # the key an agent's client sends; the proxy needs none and never sees the run's
LOG_NAME = "process.log"
EXIT_SLACK_S = 5.0  # past its wall clock the strategy ends it; the sandbox's own limit is this much later


def _agent_limits() -> ResourceLimits:
    # A CLI is a long-lived Node process with a build or two under it: more CPU time, memory and processes than a
    # build; its wall clock is the budget's.
    return ResourceLimits(cpu_seconds=3600, memory_mb=4096, max_processes=512, max_output_mb=256,
                          wall_clock_s=3600, nofile=4096)


class CommandAgentSettings(AgentSettings):
    limits: ResourceLimits = Field(default_factory=_agent_limits)
    port: int = Field(8080, ge=1024, le=65535)  # where the relay listens, on the sandbox's own loopback


@dataclass(frozen=True)
class ProxyAddress:
    """Where the agent in the sandbox reaches the model: `base_url` (no path), the model name to ask for, and a
    placeholder key (an agent's client insists on one)."""

    base_url: str
    model: str
    api_key: str = PROXY_KEY

    @property
    def openai_base_url(self) -> str:
        """OpenAI-style clients' base URL (chat completions and the Responses API live under /v1)."""
        return f"{self.base_url}/v1"


@dataclass
class AgentCommand:
    """What a command agent runs for one turn (its working folder is the workspace, /app)."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    home_files: dict[str, str] = field(default_factory=dict)  # path under its home -> text (its configuration)
    mounts: list[Mount] = field(default_factory=list)  # read-only: its install on the host (sandbox=local)
    image: str | None = None  # sandbox=docker: the image it runs in (None: the build image)
    stdin: str | None = None  # fed to its standard input (a prompt too long for one argument: 128 KiB at most)


class CommandSpec(Protocol):
    """A command agent kind's own part (an official CLI's image, command line, configuration)."""

    name: str

    def command(self, turn: AgentTurn, address: ProxyAddress) -> AgentCommand:
        """The command for this turn: its prompt is `turn.prompt`; `turn.first_turn` says whether an earlier turn
        of the episode ran (a CLI may continue its session)."""
        ...


class CommandAgent:
    """Implements Agent: one CommandSpec run in the sandbox per turn."""

    def __init__(self, spec: CommandSpec, settings: CommandAgentSettings) -> None:
        self.spec = spec
        self.settings = settings
        self.name = spec.name

    async def work(self, turn: AgentTurn) -> AgentOutcome:
        address = ProxyAddress(f"http://127.0.0.1:{self.settings.port}", model=turn.session.model_name)
        command = self.spec.command(turn, address)
        home = scratch_dir("agent-home")
        try:
            for relative, text in command.home_files.items():
                target = (home / relative).resolve()
                if home.resolve() not in target.parents:
                    raise ValueError(f"{self.name}: home file {relative!r} leaves the home folder")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            mounts = [Mount(turn.session.socket_path, SOCKET_INSIDE), Mount(LAUNCHER, LAUNCHER_INSIDE),
                      Mount(home, HOME_INSIDE, writable=True), *command.mounts]
            env = {"HOME": HOME_INSIDE, "NO_COLOR": "1", "CI": "1", **command.env}
            stdin: list[str] = []
            if command.stdin is not None:
                (home / STDIN_NAME).write_text(command.stdin, encoding="utf-8")
                stdin = ["--stdin", f"{HOME_INSIDE}/{STDIN_NAME}"]
            confined = ConfinedCommand(
                argv=[NODE, LAUNCHER_INSIDE, SOCKET_INSIDE, str(self.settings.port), *stdin, "--", *command.argv],
                workspace=turn.workspace.root, timeout_s=turn.session.meter.seconds_left + EXIT_SLACK_S,
                mounts=mounts, env=env, image=command.image, limits=self.settings.limits,
                template=None if turn.tools.static else turn.tools.web_template)
            outcome = await turn.tools.run_confined(confined)
        finally:
            await asyncio.to_thread(shutil.rmtree, home, True)
        log = outcome.output + ("\n" + "\n".join(outcome.notes) if outcome.notes else "")
        turn.tools.evidence.write_agent_file(LOG_NAME, log)
        if outcome.setup_error is not None:  # the sandbox could not start it: the harness's failure
            raise RuntimeError(f"{self.name}: the sandbox could not start the agent: {outcome.setup_error}")
        notes = [f"{self.name} exited with {outcome.exit_code}; its output: {EvidenceFolder.AGENT_FILES}/{LOG_NAME}"]
        if outcome.oom:
            notes.append(f"{self.name} was killed by its memory limit ({self.settings.limits.memory_mb} MB)")
        failed = outcome.timed_out or outcome.oom or outcome.exit_code != 0
        return AgentOutcome(stopped_by="agent_error" if failed else "done", message=_last_words(turn),
                            exit_code=outcome.exit_code, notes=notes)

    async def aclose(self) -> None:
        return None


def _last_words(turn: AgentTurn) -> str:
    """The model's last text answer, as the proxy recorded it: what the agent said to the user."""
    for call in reversed(turn.tools.evidence.read_agent_calls()):
        choices = (call.get("response") or {}).get("choices") or [{}]
        content = ((choices[0] or {}).get("message") or {}).get("content")
        if isinstance(content, str) and content.strip():
            return content.strip()
    return ""


def command_agent(spec: CommandSpec, settings: CommandAgentSettings, *, config: RunnerConfig) -> AgentGeneration:
    """A command agent kind's generation strategy (its factory returns this)."""
    return agent_generation(CommandAgent(spec, settings), settings, kind=spec.name, config=config)
