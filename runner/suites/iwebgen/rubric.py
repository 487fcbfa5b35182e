"""The judge-based part of I-WebGenBench's 100-point score (B.1, C.5), as a Rubric for judge=llm.

B.1: the VLM gets the interaction specification and "a chronological sequence of screenshots captured during
the Interaction Probe", and scores Topic & Semantic Alignment (15), Visual Aesthetics (30), Interaction
Fidelity (40, from the pre- and post-action screenshots) and Clarity & Educational Value (10). The fifth
dimension, Rule & Stability (5), is computed by the probe, never asked (stability.py). The verdict is
structured output: integer points per dimension within its maximum, with a reason each; an answer off the
scale is rejected (and retried by the structured-output path), never clipped into range.

The paper defines no pass/fail for this score, so `decide` is None: the points carry the result.
Registered as `iwebgen` (runner/suites/iwebgen/__init__.py RUBRICS), the name `judge.options.rubric` gives.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from runner.evidence import Trace
from runner.judges.rubrics import RubricOutcome
from runner.records import DimensionScore
from runner.suites.iwebgen.spec import AppSpec

__all__ = ["JUDGED_POINTS", "IWebGenRubric", "judge_messages"]

# B.1's judged dimensions and their maxima (Rule & Stability, 5, is deterministic: stability.py).
JUDGED_POINTS: dict[str, int] = {"topic": 15, "visual": 30, "interaction": 40, "clarity": 10}
MAX_REASON_CHARS = 600

INSTRUCTIONS = """You act as a Senior Principal Frontend Engineer and an Academic Peer Reviewer. You audit an
interactive scientific web application that a model generated from a specification derived from a research
paper. You are given the specification and a chronological sequence of screenshots taken by an automated
interaction probe: the page as loaded, then, for each probe action, the view BEFORE and AFTER the action
(the action is named above each pair). Score the application on four dimensions, in whole points:

- topic (0-15), Topic & Semantic Alignment: fidelity to the specification. Penalize hallucinated concepts,
  missing interactive modules and omitted adjustable parameters.
- visual (0-30), Visual Aesthetics: typography, colour harmony and layout maturity; an unstyled HTML prototype
  scores low, a production-ready scientific dashboard high.
- interaction (0-40), Interaction Fidelity: compare each before/after pair. Does the manipulation (e.g.
  adjusting a parameter) produce a scientifically meaningful, logically sound update of charts, simulations
  or models? A change that happened but is meaningless, or no visible change, scores low.
- clarity (0-10), Clarity & Educational Value: clear axis labels, self-explanatory controls, guided
  interaction; is the scientific concept accessible?

Judge only what the screenshots and the specification show. Answer with one JSON object only:
{"topic": {"score": n, "reason": "..."}, "visual": {...}, "interaction": {...}, "clarity": {...},
 "summary": "one sentence"}"""


def _points(key: str, value: Any) -> float:
    """Whole points within the dimension's maximum, else ValueError (never clipped or rescaled)."""
    maximum = JUDGED_POINTS[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key}.score={value!r} is not a number of points (0-{maximum})")
    if float(value) != int(value) or not 0 <= value <= maximum:
        raise ValueError(f"{key}.score={value!r} is not a whole number of points in 0-{maximum}")
    return float(value)


class IWebGenRubric:
    """Implements runner.judges.rubrics.Rubric for B.1's four judged dimensions."""

    name = "iwebgen"
    version = "iwebgen-v1"  # recorded in lineage.json; bump when INSTRUCTIONS or the points change
    dimensions: tuple[str, ...] = tuple(JUDGED_POINTS)

    def instructions(self) -> str:
        return INSTRUCTIONS

    def schema(self, requirement_ids: list[str]) -> dict[str, Any]:
        def dimension(maximum: int) -> dict[str, Any]:
            return {"type": "object", "additionalProperties": False, "required": ["score", "reason"],
                    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": maximum},
                                   "reason": {"type": "string"}}}

        properties: dict[str, Any] = {key: dimension(maximum) for key, maximum in JUDGED_POINTS.items()}
        properties["summary"] = {"type": "string"}
        return {"type": "object", "properties": properties, "required": list(JUDGED_POINTS),
                "additionalProperties": False}

    def parse(self, data: Any, requirement_ids: list[str]) -> RubricOutcome:
        if not isinstance(data, dict):
            raise ValueError("the judge's answer is not a JSON object")
        dimensions: dict[str, DimensionScore] = {}
        for key in JUDGED_POINTS:
            entry = data.get(key)
            if not isinstance(entry, dict) or "score" not in entry:
                raise ValueError(f"the judge's answer lacks {key}.score")
            dimensions[key] = DimensionScore(score=_points(key, entry["score"]),
                                             reason=str(entry.get("reason", ""))[:MAX_REASON_CHARS])
        scores = {key: float(dimension.score or 0.0) for key, dimension in dimensions.items()}
        return RubricOutcome(dimensions=dimensions, scores=scores, passed=None,
                             summary=str(data.get("summary", ""))[:MAX_REASON_CHARS])

    def decide(self, outcome: RubricOutcome | None, *, generation_ok: bool, evaluable: bool) -> bool | None:
        return None  # I-WebGenBench defines no pass/fail for the 100-point score


def _image(path: Path) -> dict[str, Any]:
    url = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()
    return {"type": "image_url", "image_url": {"url": url}}


def _action(step_action: dict[str, Any]) -> str:
    element = step_action.get("element") or {}
    label = element.get("label") or element.get("text") or element.get("css_path") or ""
    return f"{step_action.get('kind', 'action')} on {label!r}" if label else str(step_action.get("kind", "action"))


def judge_messages(spec: AppSpec, evidence_dir: Path, trace: Trace | None, load_screenshot: str, *,
                   max_steps: int) -> tuple[list[dict[str, Any]], list[str]]:
    """The judge's messages (B.1: the specification plus the probe's chronological screenshots) and the names
    of the images they hold. At most `max_steps` before/after pairs, in the probe's order."""
    content: list[dict[str, Any]] = [
        {"type": "text", "text": INSTRUCTIONS},
        {"type": "text", "text": "Specification:\n```json\n"
         + json.dumps(spec.model_dump(mode="json", exclude_none=True), indent=1) + "\n```"},
    ]
    shown: list[str] = []
    if load_screenshot and (evidence_dir / load_screenshot).is_file():
        content += [{"type": "text", "text": "The page as loaded:"}, _image(evidence_dir / load_screenshot)]
        shown.append(load_screenshot)
    steps = [step for step in (trace.steps if trace is not None else [])
             if step.screenshot_before and step.screenshot_after
             and (evidence_dir / step.screenshot_before).is_file() and (evidence_dir / step.screenshot_after).is_file()]
    for step in steps[:max_steps]:
        changed = {True: "the DOM changed", False: "the DOM did not change"}.get(step.dom_changed, "not observed")
        content += [
            {"type": "text", "text": f"Action {step.index + 1}: {_action(step.action)} ({changed}). Before:"},
            _image(evidence_dir / step.screenshot_before),
            {"type": "text", "text": "After:"},
            _image(evidence_dir / step.screenshot_after),
        ]
        shown += [step.screenshot_before, step.screenshot_after]
    if not steps:
        content.append({"type": "text", "text": "The probe recorded no action with screenshots."})
    return [{"role": "user", "content": content}], shown
