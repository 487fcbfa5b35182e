"""The Actor protocol: exercise a served artifact in a live page and return a Trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from runner.turns.evidence import Evidence, Trace
from runner.turns.tasks import Task, TurnSpec

if TYPE_CHECKING:
    from runner.browser.session import PageSession


@dataclass
class ActorContext:
    task: Task
    turn: TurnSpec
    evidence: Evidence
    out_dir: Path  # evidence/<task>/<turn>/ ; screenshots go here
    tool_names: list[str] = field(default_factory=list)
    # The suite's instructions for the actor (a benchmark's own actor prompt), used in place of the
    # actor's own role text; None: the actor's own prompt.
    instructions: str | None = None
    # A user task to carry out as stated (FlowEval's flow goal, §3.2), for actors that take one instruction
    # (UI-TARS); None: the actor checks the turn's request and requirements.
    goal: str | None = None
    # The page is as its load left it: only the evidence capture (screenshots, DOM and text reads, none of
    # which changes the DOM) ran on it since, so its mutation counter has counted the page alone since then.
    # The probe takes that window as its idle window instead of waiting a new one.
    page_as_loaded: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class Actor(Protocol):
    name: str

    async def act(self, session: "PageSession", context: ActorContext) -> Trace:
        """Exercise the page; the trace is returned and written to `out_dir` (EvidenceFolder.TRACE) by the actor."""
        ...

    async def aclose(self) -> None: ...
