"""The diagnostic judge of EvoGenUI-Bench (§6.1 and Appendix D.2.2): the failure mechanism of a non-passing turn.

D.2.2: "A diagnostic protocol separate from the turn-level evaluator assigns every executed non-passing call to
one of the six mechanisms using current- and previous-turn context, screenshots, source/DOM evidence,
actor/tool traces, and build or output evidence where applicable. These labels are diagnostic and do not affect
official pass/fail metrics." So the diagnostic judge is its own model role (`roles.diagnostic`, runner/run/roles.py),
called after the evaluator with

- the current turn: the evaluator's evidence bundle (request, contract, assistant text, build, page, DOM, actor
  trace, tool and runtime logs, sources, screenshot) and the evaluator's verdict (what failed, and why);
- the previous turn: its request, assistant text and final UI text (the compact history), its verdict (which
  requirements it met: what a regression would have lost) and, for a vision model, its final screenshot.

Its answer is `DiagnosisAnswer` (one mechanism of the frozen codebook), asked as structured
output with the schema generated from that model (runner.models.structured.decoding_schema). A diagnostic judge that gives no valid answer leaves
the turn unclassified (never a silent fallback to another labeller), and the pass decision never changes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.base import JudgeInput
from runner.judges.llm_bundle import build_bundle, clip, image_data_url
from runner.judges.llm_settings import LLMJudgeSettings
from runner.models.base import Model
from runner.models.structured import (StructuredMode, StructuredOutputError, TruncatedAnswer, ask_structured,
                                      failed_call_record)
from runner.turns.records import Verdict
from runner.suites.evogenui.taxonomy import Mechanism, judge_wording

DIAGNOSIS_VERSION = "evogenui-diagnosis-v1"  # recorded with the suite's rubric versions (lineage.json)
# The bundle's sizes: the evaluator's defaults (the diagnostic judge reads the same evidence surfaces).
_BUNDLE = LLMJudgeSettings(model={})
_PREVIOUS_CHARS = 4000


class DiagnosisAnswer(BaseModel):
    """The diagnostic judge's answer; the request sends the schema generated from it (`decoding_schema`)."""

    model_config = ConfigDict(extra="forbid")

    # The label only (D.2.2 assigns "one of the six mechanisms"): a free-text field could not be bounded for
    # grammar-based decoders (maxLength is refused, runner.models.structured), and an unbounded one can run
    # to the token cap without closing.
    mechanism: Mechanism = Field(description="the ONE primary failure mechanism of this turn")


class DiagnosisError(RuntimeError):
    """The diagnostic judge gave no valid answer (the turn stays unclassified)."""


def instructions() -> str:
    """The diagnostic judge's system prompt: the frozen six-label codebook of §6.1."""
    codebook = "\n".join(f"- {mechanism.value}: {judge_wording(mechanism)}" for mechanism in Mechanism)
    return (
        "You diagnose why one turn of a multi-turn generative-UI episode failed. The user revises one web "
        "interface over several turns; each turn must implement the new request and keep every still-valid "
        "earlier requirement working. The turn evaluator has already decided that this turn did not pass; "
        "you do not re-decide that. Assign the ONE primary failure mechanism from this codebook:\n"
        f"{codebook}\n"
        "Use the current turn's evidence and the previous turn's context: a behaviour the previous turn had "
        "and this turn lost is diagnosed by what broke it (for example a control that is no longer wired is "
        "affordance binding, a view that no longer follows its state is derived-state propagation). Answer "
        "with one JSON object with the key `mechanism`, and nothing else."
    )


def _verdict_text(verdict: dict[str, Any] | Verdict | None) -> str:
    """A verdict as the judge reads it: decision, dimension scores with reasons, requirement results."""
    if verdict is None:
        return "(no verdict recorded)"
    data = verdict.model_dump(mode="json") if isinstance(verdict, Verdict) else verdict
    passed = data.get("passed")
    lines = [f"decision: {'PASSED' if passed is True else 'FAILED' if passed is False else 'UNDECIDED'}"]
    for name, score in (data.get("dimensions") or {}).items():
        lines.append(f"- {name}: {score.get('score')} ({clip(str(score.get('reason', '')), 400)})")
    for requirement in data.get("requirements") or []:
        lines.append(f"- requirement {requirement.get('id')}: {requirement.get('status')}"
                     + (f" ({clip(str(requirement.get('reason', '')), 300)})" if requirement.get("reason") else ""))
    if data.get("failure_types"):
        lines.append("failure types: " + ", ".join(map(str, data["failure_types"])))
    if data.get("summary"):
        lines.append("summary: " + clip(str(data["summary"]), 600))
    return "\n".join(lines)


def previous_slot(judge_input: JudgeInput) -> EvidenceFolder | None:
    """The previous turn's evidence folder of this episode (`evidence/<task>/<turn - 1>/`), if it exists."""
    if judge_input.turn.index <= 1:
        return None
    folder = EvidenceFolder(Path(judge_input.out_dir).parent / str(judge_input.turn.index - 1))
    return folder if folder.path.is_dir() else None


def _previous_verdict(folder: EvidenceFolder) -> dict[str, Any] | None:
    try:
        data = json.loads(folder.verdict.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _previous_screenshot(folder: EvidenceFolder) -> Path | None:
    for name in (folder.FINAL_SCREENSHOT_FULL, folder.FINAL_SCREENSHOT_VIEWPORT, folder.SCREENSHOT_FULL,
                 folder.SCREENSHOT_VIEWPORT):
        if (folder.path / name).is_file():
            return folder.path / name
    return None


def diagnosis_messages(judge_input: JudgeInput, verdict: Verdict, *, vision: bool) -> list[dict[str, Any]]:
    """The request: the codebook, then current-turn evidence, the evaluator's verdict and previous-turn context."""
    bundle = build_bundle(judge_input, _BUNDLE, vision=vision)
    turn = judge_input.turn
    parts: list[dict[str, Any]] = list(bundle.parts)
    text = [f"## Turn evaluator's verdict on this turn (turn {turn.index})\n{_verdict_text(verdict)}"]
    folder = previous_slot(judge_input)
    if turn.index > 1:
        previous_request = judge_input.task.turns[turn.index - 2].prompt if turn.index - 2 < len(judge_input.task.turns) else ""
        previous = _previous_verdict(folder) if folder is not None else None
        text.append(f"## Previous turn (turn {turn.index - 1})\nrequest: {clip(previous_request, _PREVIOUS_CHARS)}\n"
                    f"its verdict:\n{_verdict_text(previous)}")
    else:
        text.append("## Previous turn\n(this is the first turn: there is none)")
    parts.append({"type": "text", "text": "\n\n".join(text)})
    shot = _previous_screenshot(folder) if folder is not None and vision else None
    if shot is not None:
        parts.append({"type": "text", "text": f"Previous turn's final screenshot (turn {turn.index - 1}):"})
        parts.append({"type": "image_url", "image_url": {"url": image_data_url(shot, max_side=_BUNDLE.screenshot_max_side)}})
    has_images = any(part.get("type") == "image_url" for part in parts)
    content: Any = parts if has_images else "\n\n".join(part["text"] for part in parts)
    return [{"role": "system", "content": instructions()}, {"role": "user", "content": content}]


async def diagnose(model: Model, judge_input: JudgeInput, verdict: Verdict, *, vision: bool,
                   mode: StructuredMode = "json_schema", max_attempts: int = 3) -> DiagnosisAnswer:
    """The diagnostic judge's label of one non-passing turn; DiagnosisError when it gives none (a cut answer is
    named truncated). What its model wrote in a failed call is kept in the slot's judge_failed_calls.jsonl."""
    try:
        result = await ask_structured(
            model,
            role="diagnostic_judge",
            messages=diagnosis_messages(judge_input, verdict, vision=vision),
            answer=DiagnosisAnswer,
            name="evogenui_diagnosis",
            mode=mode,
            max_attempts=max_attempts,
            task_id=judge_input.task.id,
            turn=judge_input.turn.index,
        )
    except StructuredOutputError as error:  # answers, none valid: kept, and the turn stays unclassified
        _keep_failed_call(judge_input, failed_call_record(error, role="diagnostic_judge", model=model.name,
                                                          task_id=judge_input.task.id, turn=judge_input.turn.index))
        named = "truncated" if isinstance(error, TruncatedAnswer) else type(error).__name__
        raise DiagnosisError(f"{named}: {error}") from error
    except Exception as error:  # no answer: the turn stays unclassified
        raise DiagnosisError(f"{type(error).__name__}: {error}") from error
    if result.rejected:
        _keep_failed_call(judge_input, failed_call_record(result, role="diagnostic_judge", model=model.name,
                                                          task_id=judge_input.task.id, turn=judge_input.turn.index))
    return result.value


def _keep_failed_call(judge_input: JudgeInput, record: dict[str, Any]) -> None:
    if judge_input.out_dir is not None:
        EvidenceFolder(judge_input.out_dir).append_failed_call(record, judging=True)
