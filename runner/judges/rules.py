"""The rules judge: deterministic generic checks plus each requirement's executable check.

Generic checks (build succeeded, page loaded and not blank, no uncaught page errors) become dimensions
with score 1.0 / 0.0. Each requirement with a `check` is run on the live page (check_runner.py): in the
execution phase (`run_live_checks`, its outcomes frozen into the evidence packet) or, when the judge is
given a live session, during scoring. One without a check, or without a live page and a frozen outcome,
is UNASSESSED. The official decision:

    passed = False  if any generic check or any requirement failed
           = None   if nothing failed but some requirement (or generic check) could not be assessed
           = True   only when everything was checked and passed

so an unchecked requirement can never turn into a pass.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field

from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.base import JudgeBase, JudgeError, JudgeInput
from runner.judges.check_runner import CheckOutcome, StateReader, ToolLogReader, run_check
from runner.judges.checks import Check
from runner.turns.records import DimensionScore, RequirementResult, RequirementStatus, Verdict
from runner.turns.tasks import Requirement

_CHECK_CRASHED = "crashed"  # a frozen check outcome whose run raised: the verdict becomes judge_error


class RulesJudgeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    require_no_page_errors: bool = True
    require_not_blank: bool = True
    check_timeout_s: float = Field(20, gt=0)
    step_timeout_s: float = Field(2.0, gt=0)
    assert_timeout_s: float = Field(2.0, ge=0)
    # Assertions wait assert_timeout_s past the page's last tool-bridge activity, at most this long in all.
    max_assert_wait_s: float = Field(10.0, gt=0)
    # The execution phase's checks start on the page as loaded, not a reload, while nothing but reads ran on it
    # and a reload would give the same page (check_runner.run_check's page_as_loaded); false: always reload.
    reuse_loaded_page: bool = True


@dataclass
class Readers:
    """Where assertions read the tool log and runtime state; None means not available (unassessed)."""

    tool_log: ToolLogReader | None = None
    state: StateReader | None = None


def default_readers(judge_input: JudgeInput) -> Readers:
    """Readers over the evidence dir, falling back to what the packet put in JudgeInput.

    The tool log is re-read from the evidence folder's tool log on every call because checks make new calls;
    it is available when that file exists or the input carries a log. The suite's tool bridge creates the
    (possibly empty) file whenever the artifact has one, so that "never called" fails instead of being
    unassessed. Runtime state comes from the bridge's `state.json`, else `judge_input.runtime_state`.
    """
    folder = EvidenceFolder(judge_input.out_dir)
    readers = Readers()
    if folder.tool_log.exists() or judge_input.tool_log:

        def read_tool_log() -> list[dict[str, Any]]:
            log = folder.read_tool_log()
            return log if log is not None else list(judge_input.tool_log or [])

        readers.tool_log = read_tool_log
    if folder.state.exists() or judge_input.runtime_state is not None:

        def read_state() -> Any:
            if folder.state.exists():
                try:
                    return json.loads(folder.state.read_text())
                except ValueError:  # a writer mid-replace; fall back to what the packet gave
                    pass
            return judge_input.runtime_state

        readers.state = read_state
    return readers


_BLANK_JS = """() => {
  const body = document.body;
  if (!body) return true;
  if ((body.innerText || '').trim().length > 0) return false;
  return !document.querySelector('img, svg, canvas, video, input, button, select, textarea, iframe');
}"""


def _pass(reason: str) -> DimensionScore:
    return DimensionScore(score=1.0, reason=reason)


def _fail(reason: str) -> DimensionScore:
    return DimensionScore(score=0.0, reason=reason)


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


class RulesJudge(JudgeBase):
    """Deterministic judge: generic page checks and executable requirement checks, no model involved."""

    name = "rules"

    def __init__(
        self,
        settings: RulesJudgeSettings | None = None,
        *,
        readers: Callable[[JudgeInput], Readers] = default_readers,
    ) -> None:
        self.settings = settings or RulesJudgeSettings()
        self._readers = readers

    async def aclose(self) -> None:
        return None

    async def score(self, judge_input: JudgeInput) -> Verdict:
        try:
            verdict = await self._score(judge_input)
        except JudgeError:
            raise
        except Exception as error:  # a bug or a dead browser, not the artifact's fault
            raise JudgeError(f"rules judge failed: {type(error).__name__}: {error}") from error
        EvidenceFolder(judge_input.out_dir).write_verdict(verdict.model_dump(mode="json"))
        return verdict

    async def _score(self, judge_input: JudgeInput) -> Verdict:
        s = self.settings
        dimensions: dict[str, DimensionScore] = {}
        failure_types: list[str] = []

        # 1. The build.
        build = judge_input.build
        if build.ok:
            dimensions["build"] = _pass("build succeeded")
        else:
            tail = build.log.strip().splitlines()[-3:] if build.log else []
            dimensions["build"] = _fail(f"build {build.status}" + (": " + " | ".join(tail) if tail else ""))
            failure_types.append("build_failed")

        # 2. The page loaded and is not blank.
        load_problem = ""
        if build.ok:
            loaded = await self._loaded(judge_input)
            dimensions["loaded"] = loaded
            if loaded.score == 0.0:
                load_problem = loaded.reason
                failure_types.append("blank_page" if loaded.reason.startswith("page is blank") else "load_error")

        # 3. The requirements.
        readers = self._readers(judge_input)
        results: list[RequirementResult] = []
        details: dict[str, Any] = {}
        for requirement in judge_input.turn.requirements:
            result, detail = await self._judge_requirement(judge_input, requirement, readers, load_problem)
            results.append(result)
            if detail is not None:
                details[requirement.id] = detail
        if any(r.status is RequirementStatus.FAILED for r in results):
            failure_types.append("requirement_failed")

        # 4. Uncaught page errors, at load and during the checks.
        if build.ok:
            errors = list(judge_input.evidence.page_errors) if judge_input.evidence else []
            errors = _unique(errors + judge_input.later_page_errors())
            if errors:
                shown = " | ".join(e[:200] for e in errors[:3])
                dimensions["page_errors"] = _fail(f"{len(errors)} uncaught page error(s): {shown}")
                if s.require_no_page_errors:
                    failure_types.append("page_error")
            elif judge_input.evidence is None and judge_input.session is None:
                dimensions["page_errors"] = DimensionScore(score=None, reason="no page observed")
            else:
                dimensions["page_errors"] = _pass("no uncaught page errors")

        assessed = [r for r in results if r.status is not RequirementStatus.UNASSESSED]
        passed_count = sum(r.status is RequirementStatus.PASSED for r in results)
        dimensions["requirements"] = DimensionScore(
            score=passed_count / len(assessed) if assessed else None,
            reason=f"{passed_count}/{len(assessed)} assessed requirement(s) passed, "
            f"{len(results) - len(assessed)} unassessed",
        )

        passed = self._decide(dimensions, results)
        summary = self._summary(passed, dimensions, results)
        return Verdict(
            judge=self.name,
            passed=passed,
            dimensions=dimensions,
            requirements=results,
            failure_types=_unique(failure_types),
            summary=summary,
            raw={"checks": details} if details else None,
        )

    def _decide(self, dimensions: dict[str, DimensionScore], results: list[RequirementResult]) -> bool | None:
        s = self.settings
        gating = ["build", "loaded"] + (["page_errors"] if s.require_no_page_errors else [])
        generic = [dimensions[name] for name in gating if name in dimensions]
        if any(d.score == 0.0 for d in generic) or any(r.status is RequirementStatus.FAILED for r in results):
            return False
        if any(d.score is None for d in generic) or "loaded" not in dimensions:
            return None
        if any(r.status is RequirementStatus.UNASSESSED for r in results):
            return None
        return True

    @staticmethod
    def _summary(passed: bool | None, dimensions: dict[str, DimensionScore], results: list[RequirementResult]) -> str:
        counts = {status: sum(r.status is status for r in results) for status in RequirementStatus}
        parts = [
            f"requirements: {counts[RequirementStatus.PASSED]} passed, {counts[RequirementStatus.FAILED]} failed, "
            f"{counts[RequirementStatus.UNASSESSED]} unassessed"
        ]
        parts += [f"{name}: {d.reason}" for name, d in dimensions.items() if name != "requirements" and d.score != 1.0]
        verdict = {True: "PASSED", False: "FAILED", None: "UNDECIDED"}[passed]
        return f"{verdict}; " + "; ".join(parts)

    async def _loaded(self, judge_input: JudgeInput) -> DimensionScore:
        evidence = judge_input.evidence
        require_not_blank = self.settings.require_not_blank
        if evidence is not None:
            if evidence.load_error:
                return _fail(f"page did not load: {evidence.load_error}")
            if evidence.blank and require_not_blank:
                return _fail("page is blank after load")
            return _pass("page loaded" + (" (blank)" if evidence.blank else ""))
        session = judge_input.session
        if session is None:
            return DimensionScore(score=None, reason="no evidence and no live page")
        # No probe evidence: look at the live page ourselves.
        limit = self.settings.check_timeout_s
        try:
            await asyncio.wait_for(session.goto(), timeout=limit)
            blank = bool(await asyncio.wait_for(session.observe(_BLANK_JS), timeout=limit))
        except Exception as error:  # includes a page too busy to answer within the check timeout
            return _fail(f"page did not load: {str(error).splitlines()[0] if str(error) else type(error).__name__}")
        if blank and require_not_blank:
            return _fail("page is blank after load")
        return _pass("page loaded" + (" (blank)" if blank else ""))

    async def _judge_requirement(
        self, judge_input: JudgeInput, requirement: Requirement, readers: Readers, load_problem: str
    ) -> tuple[RequirementResult, dict[str, Any] | None]:
        """One requirement's result, plus the check's details when it ran."""

        def result(status: RequirementStatus, reason: str) -> RequirementResult:
            return RequirementResult(id=requirement.id, status=status, reason=reason)

        if not judge_input.build.ok:
            return result(RequirementStatus.FAILED, "artifact did not build"), None
        if requirement.check is None:
            return result(RequirementStatus.UNASSESSED, "no executable check"), None
        if load_problem:
            return result(RequirementStatus.FAILED, load_problem), None
        if judge_input.session is None:
            frozen = (judge_input.check_outcomes or {}).get(requirement.id)
            if frozen is None:
                return result(RequirementStatus.UNASSESSED, "no live page to run the check on"), None
            if frozen.get("status") == _CHECK_CRASHED:
                raise JudgeError(f"rules judge failed: {frozen.get('reason', '')}")
            return result(RequirementStatus(frozen["status"]), str(frozen.get("reason", ""))), frozen
        detail = await self.run_live_check(judge_input, requirement.check, readers)
        return result(RequirementStatus(detail["status"]), str(detail.get("reason", ""))), detail

    wants_live_checks = True  # the execution phase runs the contract's checks on the live page for this judge
    reads_page_files = False  # no screenshot or DOM file: the evidence's load error, text and blankness decide

    async def run_live_checks(self, judge_input: JudgeInput) -> dict[str, dict[str, Any]]:
        """Run every executable check of the turn on the live page (execution phase), as packet entries.

        The verdict is made later from these outcomes (judging phase), so it needs no live page."""
        outcomes: dict[str, dict[str, Any]] = {}
        if not judge_input.build.ok or (await self._loaded(judge_input)).score == 0.0:
            return outcomes  # the verdict fails every requirement from the load problem; nothing to run
        readers = self._readers(judge_input)
        # Until a check acts on the page (its steps), the page is as its load left it (when it was so given).
        as_loaded = judge_input.page_as_loaded and self.settings.reuse_loaded_page
        for requirement in judge_input.turn.requirements:
            if requirement.check is None:
                continue
            if judge_input.session is not None and judge_input.session.unresponsive:
                # The visit is the page's runtime failure already (capture.note_visit_failure): no more waiting.
                outcomes[requirement.id] = {"status": "failed", "reason": "not run: the page stopped answering ("
                                            + judge_input.session.unresponsive[0] + ")"}
                continue
            try:
                outcomes[requirement.id] = await self.run_live_check(judge_input, requirement.check, readers,
                                                                     page_as_loaded=as_loaded)
            except Exception as error:  # a bug or a dead browser: the judge failed, not the artifact
                outcomes[requirement.id] = {"status": _CHECK_CRASHED, "reason": f"{type(error).__name__}: {error}"}
                as_loaded = False
            as_loaded = as_loaded and not requirement.check.steps
        return outcomes

    async def run_live_check(self, judge_input: JudgeInput, check: Check, readers: Readers, *,
                             page_as_loaded: bool = False) -> dict[str, Any]:
        outcome = await self._run_one(judge_input, check, readers, page_as_loaded=page_as_loaded)
        if isinstance(outcome, str):
            return {"status": "failed", "reason": outcome}
        return outcome.to_json()

    async def _run_one(self, judge_input: JudgeInput, check: Check, readers: Readers, *,
                       page_as_loaded: bool = False) -> CheckOutcome | str:
        s = self.settings
        assert judge_input.session is not None
        try:
            return await asyncio.wait_for(
                run_check(
                    judge_input.session,
                    check,
                    tool_log_reader=readers.tool_log,
                    state_reader=readers.state,
                    step_timeout_s=s.step_timeout_s,
                    assert_timeout_s=s.assert_timeout_s,
                    max_assert_wait_s=s.max_assert_wait_s,
                    page_as_loaded=page_as_loaded,
                ),
                timeout=s.check_timeout_s,
            )
        except asyncio.TimeoutError:  # the page's doing: the check's own waits are bounded well within this
            judge_input.session.note_unresponsive(f"a live check did not finish within {s.check_timeout_s:g} s")
            return f"check timed out after {s.check_timeout_s:g} s"
