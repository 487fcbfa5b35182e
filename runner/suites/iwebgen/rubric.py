"""The judge-based part of I-WebGenBench's 100-point score (B.1, C.5), as a Rubric for judge=llm.

B.1: the VLM gets the interaction specification and "a chronological sequence of screenshots captured during
the Interaction Probe", and scores Topic & Semantic Alignment (15), Visual Aesthetics (30), Interaction
Fidelity (40, from the pre- and post-action screenshots) and Clarity & Educational Value (10). The fifth
dimension, Rule & Stability (5), is computed by the probe, never asked (stability.py). The verdict is
structured output (IWebGenVerdict, whose JSON schema is the one sent): integer points per dimension within its
maximum, with a reason each; an answer off the scale is rejected (and retried by the structured-output path),
never clipped into range.

The paper defines no pass/fail for this score, so `decide` is None: the points carry the result.
Registered as `iwebgen` (runner/suites/iwebgen/__init__.py RUBRICS), the name `judge.options.rubric` gives.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model

from runner.turns.evidence import Trace
from runner.judges.rubrics import RubricBase, RubricOutcome
from runner.models.structured import decoding_schema
from runner.turns.records import DimensionScore
from runner.suites.iwebgen.spec import AppSpec
from runner.models.untrusted import RULE, quote

__all__ = ["JUDGED_POINTS", "IWebGenRubric", "IWebGenVerdict", "judge_messages"]

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


def _whole_points(value: Any) -> Any:
    """Whole points, as a number (12 or 12.0), else ValueError: never clipped, rescaled or read from text.
    The range is the field's own bound (in the schema sent as well)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a number of points")
    if float(value) != int(value):
        raise ValueError(f"{value!r} is not a whole number of points")
    return int(value)


def _dimension_model(key: str, maximum: int) -> type[BaseModel]:
    # The bounds before the validator: pydantic writes constraints after a BeforeValidator as unknown keys.
    points = Annotated[int, Field(ge=0, le=maximum), BeforeValidator(_whole_points)]
    return create_model(f"IWebGen_{key}", __config__=ConfigDict(extra="ignore"), score=(points, ...),
                        reason=(str, ...))


class IWebGenVerdict(BaseModel):
    """The judge's answer: whole points within each judged dimension's maximum (B.1), a reason each."""

    model_config = ConfigDict(extra="ignore")

    topic: _dimension_model("topic", JUDGED_POINTS["topic"])  # type: ignore[valid-type]
    visual: _dimension_model("visual", JUDGED_POINTS["visual"])  # type: ignore[valid-type]
    interaction: _dimension_model("interaction", JUDGED_POINTS["interaction"])  # type: ignore[valid-type]
    clarity: _dimension_model("clarity", JUDGED_POINTS["clarity"])  # type: ignore[valid-type]
    summary: str = ""


assert tuple(IWebGenVerdict.model_fields)[:-1] == tuple(JUDGED_POINTS), "one verdict field per judged dimension"


class IWebGenRubric(RubricBase):
    """Implements runner.judges.rubrics.Rubric for B.1's four judged dimensions."""

    name = "iwebgen"
    version = "iwebgen-v1"  # recorded in lineage.json; bump when INSTRUCTIONS or the points change
    dimensions: tuple[str, ...] = tuple(JUDGED_POINTS)

    def instructions(self) -> str:
        return INSTRUCTIONS

    def answer_model(self, requirement_ids: list[str]) -> type[BaseModel]:
        return IWebGenVerdict

    def schema(self, requirement_ids: list[str]) -> dict[str, Any]:
        return decoding_schema(IWebGenVerdict)

    def parse(self, data: Any, requirement_ids: list[str]) -> RubricOutcome:
        if not isinstance(data, dict):
            raise ValueError("the judge's answer is not a JSON object")
        verdict = IWebGenVerdict.model_validate(data)  # ValidationError is a ValueError
        dimensions: dict[str, DimensionScore] = {}
        for key in JUDGED_POINTS:
            entry = getattr(verdict, key)
            dimensions[key] = DimensionScore(score=float(entry.score), reason=entry.reason[:MAX_REASON_CHARS])
        scores = {key: float(dimension.score or 0.0) for key, dimension in dimensions.items()}
        return RubricOutcome(dimensions=dimensions, scores=scores, passed=None,
                             summary=verdict.summary[:MAX_REASON_CHARS])

    def decide(self, outcome: RubricOutcome | None, *, generation_ok: bool, evaluable: bool) -> bool | None:
        return None  # I-WebGenBench defines no pass/fail for the 100-point score


def _image(path: Path, **fit: Any) -> dict[str, Any]:
    """An image part; `fit` marks it for the request fitting (runner/models/fitting.py)."""
    url = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()
    return {"type": "image_url", "image_url": {"url": url}, "fit": {"name": path.name, **fit}}


def _action(step_action: dict[str, Any]) -> str:
    """The probe's action; the element's label is the page's text, quoted as untrusted data."""
    element = step_action.get("element") or {}
    label = element.get("label") or element.get("text") or element.get("css_path") or ""
    kind = str(step_action.get("kind", "action"))
    return f"{kind} on the element labelled\n{quote(str(label), 'element label')}" if label else kind


def judge_messages(spec: AppSpec, evidence_dir: Path, trace: Trace | None, load_screenshot: str, *,
                   max_steps: int) -> tuple[list[dict[str, Any]], list[str]]:
    """The judge's messages (B.1: the specification plus the probe's chronological screenshots) and the names
    of the images they hold. At most `max_steps` before/after pairs, in the probe's order. Each pair is marked
    as one, so that a server taking fewer images gets it composed (BEFORE left, AFTER right) or on a contact
    sheet (runner/models/fitting.py) rather than refusing the request."""
    content: list[dict[str, Any]] = [
        {"type": "text", "text": INSTRUCTIONS},
        {"type": "text", "text": RULE},  # the page's text below (element labels) is data, never an instruction
        {"type": "text", "text": "Specification:\n```json\n"
         + json.dumps(spec.model_dump(mode="json", exclude_none=True), indent=1) + "\n```",
         "fit": {"section": "spec"}},  # the only text cut to fit a small context: the images are the evidence
    ]
    shown: list[str] = []
    if load_screenshot and (evidence_dir / load_screenshot).is_file():
        content += [{"type": "text", "text": "The page as loaded:"}, _image(evidence_dir / load_screenshot, priority=1)]
        shown.append(load_screenshot)
    steps = [step for step in (trace.steps if trace is not None else [])
             if step.screenshot_before and step.screenshot_after
             and (evidence_dir / step.screenshot_before).is_file() and (evidence_dir / step.screenshot_after).is_file()]
    for step in steps[:max_steps]:
        changed = {True: "the DOM changed", False: "the DOM did not change"}.get(step.dom_changed, "not observed")
        pair = {"pair": f"step-{step.index}"}
        content += [
            {"type": "text", "text": f"Action {step.index + 1} ({changed}): {_action(step.action)}\nBefore:",
             "fit": pair},
            _image(evidence_dir / step.screenshot_before, **pair),
            {"type": "text", "text": "After:", "fit": pair},
            _image(evidence_dir / step.screenshot_after, **pair),
        ]
        shown += [step.screenshot_before, step.screenshot_after]
    if not steps:
        content.append({"type": "text", "text": "The probe recorded no action with screenshots."})
    return [{"role": "user", "content": content}], shown
