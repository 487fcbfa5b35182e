"""The Judge protocol: score one turn from the full evidence and the private contract."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from runner.evidence import Evidence, Trace
from runner.records import Verdict
from runner.sandbox.base import BuildResult
from runner.tasks import Task, TurnSpec

if TYPE_CHECKING:
    from runner.browser.session import PageSession


@dataclass
class JudgeInput:
    task: Task
    turn: TurnSpec
    build: BuildResult
    evidence: Evidence | None
    trace: Trace | None
    files: dict[str, str]
    assistant_text: str
    out_dir: Path
    session: "PageSession | None" = None  # live page, for judges that execute checks
    # Nothing but reads ran on the live page since its load (the evidence capture; no actor): a judge's checks
    # may start on it where a reload would give the same page (RulesJudge.run_live_checks).
    page_as_loaded: bool = False
    # The tool bridge's call log (EvidenceFolder.TOOL_LOG; None: no bridge served the artifact) and the tool
    # runtime's state (EvoGenUI-Bench §4.2 "tool and runtime logs", "runtime state"; None: none recorded).
    tool_log: list[dict[str, Any]] | None = None
    runtime_state: Any = None
    previous_turns: list[dict[str, Any]] = field(default_factory=list)  # compact context
    # Frozen from the live page at the end of execution (runner/packets.py), used when `session` is None:
    page_errors: list[str] = field(default_factory=list)  # uncaught errors after load (actor, checks)
    check_outcomes: dict[str, dict[str, Any]] | None = None  # requirement id -> its live check's outcome
    suite_context: dict[str, Any] = field(default_factory=dict)  # what the suite's prepare_judging froze

    def later_page_errors(self) -> list[str]:
        """Page errors raised after the load-time evidence: the live session's, else the frozen ones."""
        return list(self.session.page_errors) if self.session is not None else list(self.page_errors)


class JudgeError(RuntimeError):
    """The judge could not produce a valid verdict (bucket `judge_error`)."""


class Judge(Protocol):
    name: str

    async def score(self, judge_input: JudgeInput) -> Verdict: ...

    async def aclose(self) -> None: ...
