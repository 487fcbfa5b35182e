"""The agent image a CLI agent runs in, and what a run checks and records of it.

The CLIs run only with sandbox=docker: their image pins everything they touch (Node 24, a shell, git, ripgrep, the
CLIs' own native binaries), runs them as an unprivileged user and shows them no host file at all. Bubblewrap
(sandbox=local) would run them on the host's own /usr as root, so what a CLI can use would depend on the machine,
it would see the host's programs, and Claude Code refuses to skip its permission prompts as root.

The image is the content-tagged one of images/agent (runner/sandbox/images.py), or `sandbox.options.images.agent`;
a missing one is built when the sandbox may build images (`sandbox.options.build_missing_images`), as the build and
browser images are. Lineage records its tag, Id and the versions its labels carry (each CLI's, Node's, git's...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from runner.errors import ConfigError
from runner.kinds import KINDS, Kind
from runner.problems import Problem
from runner.sandbox.images import ImageInfo

if TYPE_CHECKING:
    from runner.agents.command import CommandAgentSettings, CommandSpec
    from runner.agents.strategy import AgentGeneration

__all__ = ["AGENT_IMAGE", "agent_image", "agent_images", "check_cli_agent", "cli_agent", "require_docker"]

AGENT_IMAGE = "agent"  # its name among the sandbox images


def require_docker(config: Any) -> None:
    """A ConfigError unless the run's sandbox runs images of its own, as the docker sandbox does (module docstring:
    why not bubblewrap)."""
    if not _sandbox(config).runs_images:
        raise ConfigError(f"agent={config.agent.name} runs its CLI in the agent image: it needs sandbox=docker, and "
                          f"the run has sandbox={config.sandbox.kind} (docs/agents.md)")


def _sandbox(config: Any) -> Kind:
    return KINDS.chosen("sandbox", config.sandbox)


def agent_image(config: Any) -> ImageInfo:
    """The run's agent image, built first where it is missing and the sandbox may build (blocking: minutes)."""
    require_docker(config)
    return _sandbox(config).image(config, AGENT_IMAGE, build_missing=True)


def agent_images(config: Any) -> dict[str, dict[str, Any]]:
    """The agent image as lineage records it (none is built): {"agent": {tag, digest, versions}}."""
    info = _sandbox(config).image(config, AGENT_IMAGE, build_missing=False)
    return {AGENT_IMAGE: {"tag": info.tag, "digest": info.image_id, "versions": dict(info.versions)}}


def check_cli_agent(config: Any, suite: Any) -> list[Problem]:
    """A CLI agent's needs before any work: a model that answers tool calls, the docker sandbox, and its image
    present or buildable (the sandbox's own check)."""
    from runner.agents.preflight import check_agent_model

    problems = check_agent_model(config, suite)
    try:
        require_docker(config)
    except ConfigError as error:
        return [*problems, Problem("sandbox", str(error), "run it with sandbox=docker")]
    return problems + _sandbox(config).image_problems(config, AGENT_IMAGE, who=f"agent={config.agent.name}")


def cli_agent(spec: Callable[[str], CommandSpec], settings: CommandAgentSettings, *, config: Any) -> AgentGeneration:
    """A CLI kind's generation strategy: its CommandSpec made for the run's agent image (built first if missing)."""
    from runner.agents.command import command_agent

    info = agent_image(config)
    return command_agent(spec(info.tag), settings, config=config)
