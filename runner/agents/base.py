"""The Agent protocol: what works one slot's workspace, given its door to the model and the engine's tools.

An agent kind (runner/agents/kinds.py) builds one Agent for the run; runner/agents/strategy.py runs it once per
slot (`work`), inside the slot's budget, and reads the workspace it leaves as the answer. The project's own loop
(runner/agents/builtin.py) works runner-side and reaches the model through the proxy's socket; a command agent
(runner/agents/command.py: the official CLIs) runs in the sandbox and reaches it through the same socket, bound
into the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from runner.agents.proxy import ProxySession
    from runner.agents.workspace import AgentWorkspace
    from runner.turns.generation import GenerationTools

__all__ = ["Agent", "AgentFailed", "AgentOutcome", "AgentTurn"]


class AgentFailed(RuntimeError):
    """The agent itself could not go on (its command crashed, its loop met what it cannot handle): the slot
    records `stopped_by: agent_error` and the workspace is judged as the agent left it."""


@dataclass
class AgentTurn:
    """One slot, as an agent sees it."""

    task_id: str
    turn: int
    messages: list[dict[str, Any]]  # the suite's payload (public material only), with the agent's preamble
    prompt: str  # the same as one text, for an agent that takes its task as a prompt (a CLI)
    workspace: AgentWorkspace
    session: ProxySession  # the model proxy's session of this slot (its socket, budget and records)
    tools: GenerationTools  # the engine's: build files in the sandbox, look at a built page, the evidence folder
    vision: bool  # the model takes images (a screenshot may be shown to it)
    first_turn: bool  # no earlier turn of this episode reached the agent (a CLI starts a new session)


@dataclass
class AgentOutcome:
    """How the agent's work ended, in its own terms (the budget and the model's failures are the proxy's)."""

    stopped_by: str = "done"  # done | agent_error
    message: str = ""  # its last words to the user: the answer's assistant text
    exit_code: int | None = None  # a command agent's exit status
    notes: list[str] = field(default_factory=list)  # what it reported about itself (errors, its log's tail)
    steps_written: bool = False  # it wrote its transcript itself (else it is made from the proxy's records)


class Agent(Protocol):
    name: str

    async def work(self, turn: AgentTurn) -> AgentOutcome:
        """Work in `turn.workspace` until done (AgentFailed: it could not go on). Cancelled when its budget or
        the model ends it: it then stops everything it started."""
        ...

    async def aclose(self) -> None: ...
