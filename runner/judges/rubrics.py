"""Rubrics an LLM judge can apply: instructions, the JSON schema of a verdict, parsing and the pass rule.

One rubric today, `evogenui` (EvoGenUI-Bench §4.2, Appendix C.1; pass rule §4.3; mechanisms §6.1). The
Rubric protocol is what another rubric implements to be hosted by the same judge, e.g. I-WebGenBench's
100-point VLM score (I-WebGenBench appendix: alignment 15 + interaction 40 + visual + clarity 10 + ...) or
MT-Web2Code's five-band macro rubric (MT-Web2Code §3.5 eq. 8, runner/suites/web2code/rubric.py): each needs
only its own dimensions, schema, parser and decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from runner.suites.evogenui.passing import DIMENSIONS, PASS_THRESHOLD, turn_passes
from runner.suites.evogenui.taxonomy import Mechanism
from runner.records import DimensionScore, RequirementResult, RequirementStatus

__all__ = [
    "EVOGENUI_DIMENSIONS",
    "EvoGenUIRubric",
    "FAILURE_TYPES",
    "HARNESS_FAILURE_TYPES",
    "MECHANISMS",
    "RUBRICS",
    "Rubric",
    "RubricOutcome",
    "evogenui_turn_passes",
    "get_rubric",
]

# ---- the six diagnostic mechanisms (EvoGenUI-Bench §6.1): the taxonomy's enum, with the judge's wording ----------
_MECHANISM_TEXT = {
    "information_architecture": "poorly organized or unreadable content (no clear hierarchy, overlap, clipping)",
    "domain_representation": "incorrect task-specific abstractions (the domain object is modelled wrongly)",
    "requirement_decomposition": "omitted constraints or workflow steps",
    "affordance_binding": "visible but unwired controls",
    "derived_state_propagation": "dependent views that remain stale after local state changes",
    "external_state_grounding": "contradictions between the interface and tool or runtime state",
}


MECHANISMS: tuple[str, ...] = tuple(mechanism.value for mechanism in Mechanism)
assert set(MECHANISMS) == set(_MECHANISM_TEXT), "every mechanism needs the judge's wording"

# ---- failure types ---------------------------------------------------------------------------------------
# The paper names no enumerated list of failure types; these are the failures Appendix C.1 spells out for
# each dimension, one identifier per phrase of the rubric, so that verdicts can be counted.
FAILURE_TYPES: dict[str, str] = {
    # Presentation (C.1: "rather than a sparse scaffold, wireframe, or visibly broken page"; "readable, unclipped")
    "sparse_scaffold": "presentation: a sparse scaffold or wireframe, not a coherent domain-appropriate interface",
    "broken_page": "presentation: a visibly broken page",
    "unreadable_or_clipped": "presentation: labels or content unreadable, overlapping or clipped",
    "weak_hierarchy": "presentation: poor layout, hierarchy, styling or discoverability",
    # Execution (C.1: surfaces, wiring, state updates, tool calls, derived outputs, readback, prior requirements)
    "missing_surface": "execution: a required surface, view or output is missing",
    "unwired_control": "execution: a control is present but not wired to the requested behavior",
    "stale_state": "execution: a state update or derived output does not propagate; a dependent surface is stale",
    "missing_tool_call": "execution: a required tool/resource call is missing or wrong",
    "missing_readback": "execution: committed state is not read back from the authoritative source",
    "unsupported_confirmation": "execution: an optimistic confirmation or raw response without the requested result",
    "prior_regression": "execution: a relevant, still-valid prior requirement no longer holds",
    # Alignment (C.1: unsupported claims, stale descriptions, unavailable capabilities, unevidenced state, mismatch)
    "unsupported_claim": "alignment: the assistant claims behavior the artifact does not have",
    "stale_description": "alignment: the assistant describes an earlier version of the artifact",
    "unavailable_capability_claimed": "alignment: the assistant claims a capability that is not available",
    "unevidenced_state_claim": "alignment: claimed saved/submitted/filtered/computed state without evidence",
    "ui_text_mismatch": "alignment: the UI state and the assistant's explanation disagree",
}

# Set by the judge itself (no model call), never asked of the model.
HARNESS_FAILURE_TYPES = ("generation_failed", "build_failed", "not_evaluable")

EVOGENUI_DIMENSIONS = DIMENSIONS  # EvoGenUI-Bench §4.2 / Appendix C.1 (the suite's one definition)


def evogenui_turn_passes(*, generation_ok: bool, evaluable: bool, presentation: int | None,
                         execution: int | None, alignment: int | None) -> bool:
    """The official turn decision (EvoGenUI-Bench §4.3), by the suite's pass rule."""
    scores = {"presentation": presentation, "execution": execution, "alignment": alignment}
    return turn_passes(generation_succeeded=generation_ok, artifact_evaluable=evaluable,
                       scores={name: value for name, value in scores.items() if value is not None})


# ---- the protocol ------------------------------------------------------------------------------------------


@dataclass
class RubricOutcome:
    """A parsed, validated verdict of one rubric, before the harness's evaluability gate."""

    dimensions: dict[str, DimensionScore]
    scores: dict[str, float]
    passed: bool | None  # the rubric's own decision, assuming an evaluable artifact; None: it defines none
    requirements: dict[str, RequirementResult] = field(default_factory=dict)  # by requirement id
    failure_types: list[str] = field(default_factory=list)
    mechanism: str | None = None
    summary: str = ""
    notes: list[str] = field(default_factory=list)  # e.g. assessments of unknown requirement ids, dropped


class Rubric(Protocol):
    name: str
    version: str  # recorded in lineage.json (runner.lineage.rubric_versions)
    dimensions: tuple[str, ...]

    def instructions(self) -> str:
        """The judge's system prompt."""

    def schema(self, requirement_ids: list[str]) -> dict[str, Any]:
        """The JSON schema of a verdict (sent as response_format)."""

    def parse(self, data: Any, requirement_ids: list[str]) -> RubricOutcome:
        """Validate decoded JSON; raise ValueError when it is not a valid verdict."""

    def decide(self, outcome: RubricOutcome | None, *, generation_ok: bool, evaluable: bool) -> bool | None:
        """The official pass decision (None: the benchmark defines no pass/fail, as MT-Web2Code)."""


# ---- EvoGenUI-Bench ------------------------------------------------------------------------------------------


def _identifier(value: Any) -> Any:
    return value.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(value, str) else value


class _Dimension(BaseModel):
    model_config = ConfigDict(extra="ignore")

    score: int = Field(ge=1, le=5)
    reason: str = Field(min_length=1)


class _RequirementJudgement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    status: Literal["passed", "failed", "unassessed"]
    reason: str = ""

    @field_validator("status", mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        return _identifier(value)


class _EvoGenUIJudgement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    presentation: _Dimension
    execution: _Dimension
    alignment: _Dimension
    requirements: list[_RequirementJudgement] = Field(default_factory=list)
    failure_types: list[str] = Field(default_factory=list)
    mechanism: str | None = None
    summary: str = ""

    @field_validator("failure_types", mode="before")
    @classmethod
    def _types(cls, value: Any) -> Any:
        if value is None:
            return []
        if not isinstance(value, list):
            raise ValueError("failure_types must be a list")
        normalised = [_identifier(item) for item in value]
        unknown = [item for item in normalised if item not in FAILURE_TYPES]
        if unknown:
            raise ValueError(f"unknown failure type(s) {unknown}; allowed: {sorted(FAILURE_TYPES)}")
        return list(dict.fromkeys(normalised))

    @field_validator("mechanism", mode="before")
    @classmethod
    def _mechanism(cls, value: Any) -> Any:
        value = _identifier(value)
        if value in (None, "", "none", "null"):
            return None
        if value not in MECHANISMS:
            raise ValueError(f"unknown mechanism {value!r}; allowed: {list(MECHANISMS)} or null")
        return value


_EVOGENUI_INSTRUCTIONS = """You are the evaluator of EvoGenUI-Bench. A model was asked to build or revise a \
React web interface for the current user request of a multi-turn episode. You receive the evidence the \
harness collected for this turn and the PRIVATE validation contract, which the model never saw. Judge only \
from the evidence; do not assume behaviour the evidence does not show.

Score three dimensions on a 1-5 scale (5 = excellent, 4 = good enough to pass, 3 = noticeable defect, \
2 = largely failing, 1 = absent or broken). A dimension passes at 4 or 5.

Presentation: the rendered UI quality: layout, hierarchy, readability, styling, discoverability, and whether \
the screenshot shows a coherent, domain-appropriate interface rather than a sparse scaffold, wireframe, or \
visibly broken page. DOM labels and source code can show that objects exist, but they cannot prove that \
labels are readable, unclipped, or visually coherent.

Execution: whether the current turn's requested requirements are implemented as working UI behaviour or \
visible, evidence-backed state: required surfaces, interaction wiring, state updates, tool/resource calls, \
derived outputs, committed readback, confirmations, and relevant still-valid prior requirements. A button, \
form, raw tool response, or optimistic confirmation does not pass if the requested result or dependent \
surface is missing, stale, disconnected, or unsupported by runtime evidence.

Alignment: whether the assistant text, generated source, visible UI, interaction observations, and runtime \
logs describe the same concrete behaviour. Penalise unsupported claims, stale descriptions, claims of \
unavailable capabilities, claimed saved/submitted/filtered/computed state without evidence, and mismatches \
between the UI state and the assistant's explanation.

The interaction actor's own success claim is advisory: rely on what its trace and the logs show.

Also report:
- requirements: for each requirement of the private contract, its id, "passed", "failed" or "unassessed" \
(the evidence cannot tell), and a short reason.
- failure_types: every type from this fixed list that applies (empty when none does):
{failure_types}
- mechanism: when the turn does not pass (any score below 4), the ONE primary failure mechanism:
{mechanisms}
  Use null when every score is 4 or 5.
- summary: one or two sentences.

Answer with one JSON object only, matching the JSON schema you are given: {{"presentation": {{"score": 1-5, \
"reason": "..."}}, "execution": {{...}}, "alignment": {{...}}, "requirements": [{{"id": "...", "status": "...", \
"reason": "..."}}], "failure_types": [...], "mechanism": "..." or null, "summary": "..."}}."""


class EvoGenUIRubric:
    """Presentation, Execution and Alignment, 1-5 each, with reasons (EvoGenUI-Bench §4.2, Appendix C.1)."""

    name = "evogenui"
    version = "evogenui-pea-v1"  # recorded in lineage.json; bump when the instructions or schema change
    default_screenshot = "full"  # EvoGenUI-Bench §5.2: "refreshed full-page screenshots"
    dimensions = EVOGENUI_DIMENSIONS

    def instructions(self) -> str:
        failure_types = "\n".join(f"  {key}: {text}" for key, text in FAILURE_TYPES.items())
        mechanisms = "\n".join(f"  {key}: {_MECHANISM_TEXT.get(key, key)}" for key in MECHANISMS)
        return _EVOGENUI_INSTRUCTIONS.format(failure_types=failure_types, mechanisms=mechanisms)

    def schema(self, requirement_ids: list[str]) -> dict[str, Any]:
        # Written out (no $ref, no anyOf) so that grammar-based decoders (vLLM xgrammar/outlines) accept it.
        dimension = {
            "type": "object",
            "properties": {"score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}, "reason": {"type": "string"}},
            "required": ["score", "reason"],
            "additionalProperties": False,
        }
        requirement_id: dict[str, Any] = {"type": "string"}
        if requirement_ids:
            requirement_id["enum"] = list(requirement_ids)
        return {
            "type": "object",
            "properties": {
                "presentation": dimension,
                "execution": dimension,
                "alignment": dimension,
                "requirements": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": requirement_id,
                            "status": {"type": "string", "enum": ["passed", "failed", "unassessed"]},
                            "reason": {"type": "string"},
                        },
                        "required": ["id", "status", "reason"],
                        "additionalProperties": False,
                    },
                },
                "failure_types": {"type": "array", "items": {"type": "string", "enum": list(FAILURE_TYPES)}},
                "mechanism": {"type": ["string", "null"], "enum": [*MECHANISMS, None]},
                "summary": {"type": "string"},
            },
            "required": ["presentation", "execution", "alignment", "requirements", "failure_types", "mechanism",
                         "summary"],
            "additionalProperties": False,
        }

    def parse(self, data: Any, requirement_ids: list[str]) -> RubricOutcome:
        judgement = _EvoGenUIJudgement.model_validate(data)  # ValidationError is a ValueError
        dimensions = {
            name: DimensionScore(score=float(getattr(judgement, name).score), reason=getattr(judgement, name).reason)
            for name in self.dimensions
        }
        scores = {name: float(getattr(judgement, name).score) for name in self.dimensions}
        known = set(requirement_ids)
        requirements: dict[str, RequirementResult] = {}
        notes: list[str] = []
        for item in judgement.requirements:
            if item.id not in known:
                notes.append(f"assessment of unknown requirement {item.id!r} dropped")
                continue
            requirements[item.id] = RequirementResult(
                id=item.id, status=RequirementStatus(item.status), reason=item.reason or "(no reason given)"
            )
        passed = all(getattr(judgement, name).score >= PASS_THRESHOLD for name in self.dimensions)
        return RubricOutcome(
            dimensions=dimensions,
            scores=scores,
            passed=passed,
            requirements=requirements,
            failure_types=judgement.failure_types,
            mechanism=None if passed else judgement.mechanism,  # diagnostic for non-passing turns only (§6.1)
            summary=judgement.summary,
            notes=notes,
        )

    def decide(self, outcome: RubricOutcome | None, *, generation_ok: bool, evaluable: bool) -> bool:
        def score(name: str) -> int | None:
            if outcome is None or name not in outcome.scores:
                return None
            return int(outcome.scores[name])

        return evogenui_turn_passes(
            generation_ok=generation_ok,
            evaluable=evaluable,
            presentation=score("presentation"),
            execution=score("execution"),
            alignment=score("alignment"),
        )


RUBRICS: dict[str, type] = {"evogenui": EvoGenUIRubric}


def get_rubric(name: str) -> Rubric:
    try:
        return RUBRICS[name]()
    except KeyError:
        raise ValueError(f"unknown rubric {name!r}; choose one of {sorted(RUBRICS)}") from None
