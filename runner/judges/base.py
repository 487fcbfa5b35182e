"""The Judge protocol: score one turn from the full evidence and the private contract."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from runner.judges.rubrics import Rubric, RubricOutcome
from runner.models.structured import StructuredOutputError, TruncatedAnswer
from runner.turns.evidence import Evidence, Trace
from runner.turns.records import Verdict
from runner.sandbox.base import BuildResult
from runner.turns.tasks import Task, TurnSpec

if TYPE_CHECKING:
    from runner.browser.session import PageSession
    from runner.models.structured import StructuredResult


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
    # Frozen from the live page at the end of execution (runner/turns/packets.py), used when `session` is None:
    page_errors: list[str] = field(default_factory=list)  # uncaught errors after load (actor, checks)
    check_outcomes: dict[str, dict[str, Any]] | None = None  # requirement id -> its live check's outcome
    suite_context: dict[str, Any] = field(default_factory=dict)  # what the suite's prepare_judging froze

    def later_page_errors(self) -> list[str]:
        """Page errors raised after the load-time evidence: the live session's, else the frozen ones."""
        return list(self.session.page_errors) if self.session is not None else list(self.page_errors)


class JudgeError(RuntimeError):
    """The judge could not produce a valid verdict (bucket `judge_error`)."""


class JudgeTruncated(JudgeError):
    """The judge's answer was cut at its output cap, in the answer or inside its reasoning, and the one changed
    re-ask was cut too (bucket `truncated`). `cut`: the role, where it was cut, its tokens and the cap."""

    def __init__(self, message: str, *, cut: dict[str, Any]) -> None:
        super().__init__(message)
        self.cut = cut


def structured_judge_error(error: StructuredOutputError, *, judge: str, what: str = "verdict",
                           role: str = "judge") -> JudgeError:
    """The JudgeError of a judging call that ended without a valid answer: JudgeTruncated (bucket `truncated`,
    with the role, where it was cut, its tokens and the cap) when its last answer was cut, else malformed."""
    if isinstance(error, TruncatedAnswer) and error.cut is not None:
        return JudgeTruncated(f"{judge}: {what} truncated: {error}", cut={"role": role, "model": error.model,
                                                                          **error.cut})
    return JudgeError(f"{judge}: malformed {what}: {error}")


class Judge(Protocol):
    """What the engine, the judging phase and the suites call on a judge. `JudgeBase` gives every member but
    `score` a default; callers use these members and never test a judge's class."""

    name: str

    @property
    def wants_live_checks(self) -> bool:
        """True: the execution phase runs the contract's checks on the live page for this judge
        (`run_live_checks`), and its verdict is made later from their frozen outcomes."""

    async def run_live_checks(self, judge_input: JudgeInput) -> dict[str, dict[str, Any]]:
        """The turn's executable checks on the live page (`judge_input.session`): requirement id -> outcome,
        frozen into the evidence packet as `JudgeInput.check_outcomes`."""

    @property
    def rubric(self) -> Rubric | None:
        """The rubric the judge scores with; None: it scores without one (the rules judge)."""

    def use_rubric(self, rubric: Rubric) -> None:
        """Score with `rubric` from now on (a suite's own instructions over the configured rubric's)."""

    @property
    def answers_rubrics(self) -> bool:
        """True: `ask` puts a suite's own rubric to the judge's model (an LLM judge)."""

    @property
    def accepts_images(self) -> bool:
        """The judge's model reads images (an LLM judge's `judge.options.model.vision`)."""

    @property
    def reads_page_files(self) -> bool:
        """The judge may read a slot's load-time screenshots or DOM file; False lets the reward service leave
        them out (docs/reward.md, lean evidence)."""

    async def ask(self, rubric: Rubric, messages: list[dict[str, Any]], *, ids: list[str],
                  max_attempts: int | None = None, task_id: str = "", turn: int = 0,
                  out_dir: Path | None = None, request_record: dict[str, Any] | None = None,
                  trim_order: tuple[str, ...] = ()) -> StructuredResult[RubricOutcome]:
        """A suite's own rubric on `messages`, answered by the judge's model (only when `answers_rubrics`)."""

    async def score(self, judge_input: JudgeInput) -> Verdict: ...

    async def aclose(self) -> None: ...


class JudgeBase:
    """The defaults of every optional member of `Judge`: no live checks, no rubric, no model to ask."""

    name: str
    wants_live_checks: bool = False
    answers_rubrics: bool = False
    accepts_images: bool = False
    reads_page_files: bool = True
    rubric: Rubric | None = None

    async def run_live_checks(self, judge_input: JudgeInput) -> dict[str, dict[str, Any]]:
        return {}

    def use_rubric(self, rubric: Rubric) -> None:
        if self.rubric is None:
            raise JudgeError(f"judge {self.name!r} scores without a rubric; it cannot score with {rubric.name!r}")
        self.rubric = rubric

    async def ask(self, rubric: Rubric, messages: list[dict[str, Any]], *, ids: list[str],
                  max_attempts: int | None = None, task_id: str = "", turn: int = 0,
                  out_dir: Path | None = None, request_record: dict[str, Any] | None = None,
                  trim_order: tuple[str, ...] = ()) -> StructuredResult[RubricOutcome]:
        raise JudgeError(f"judge {self.name!r} has no model to ask rubric {rubric.name!r}")

    async def aclose(self) -> None:
        return None
