"""The EvoGenUI-Bench evaluator rubric (EvoGenUI-Bench §4.2, Appendix C.1), hosted by the LLM judge.

Presentation, Execution and Alignment on 1-5, with reasons, per-requirement results, failure types and the
primary failure mechanism of a non-passing turn. The dimensions and the pass rule are the suite's
(passing.py, §4.3), the mechanisms and their wording the taxonomy's (taxonomy.py, §6.1); this module adds the
judge's instructions, the verdict's JSON schema and its parser. Registered as `evogenui` in
runner.judges.rubrics, the name `judge.options.rubric` gives.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from runner.judges.rubrics import RubricBase, RubricOutcome
from runner.models.structured import decoding_schema
from runner.turns.records import DimensionScore, RequirementResult, RequirementStatus
from runner.suites.evogenui.passing import DIMENSIONS, turn_passes
from runner.suites.evogenui.taxonomy import Mechanism, judge_wording

__all__ = ["FAILURE_TYPES", "MECHANISMS", "EvoGenUIRubric", "requirements_model", "verdict_model"]

MECHANISMS: tuple[str, ...] = tuple(mechanism.value for mechanism in Mechanism)  # §6.1, the taxonomy's enum

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


def _identifier(value: Any) -> Any:
    return value.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(value, str) else value


class _Dimension(BaseModel):
    model_config = ConfigDict(extra="ignore")

    score: int = Field(ge=1, le=5)
    reason: str = Field(min_length=1)


class _RequirementJudgement(BaseModel):
    """One requirement's assessment; its id is the key it is written under (`requirements_model`)."""

    model_config = ConfigDict(extra="ignore")

    status: Literal["passed", "failed", "unassessed"]
    reason: str = ""

    @field_validator("status", mode="before")
    @classmethod
    def _normalise(cls, value: Any) -> Any:
        return _identifier(value)


@lru_cache(maxsize=256)
def requirements_model(requirement_ids: tuple[str, ...]) -> type[BaseModel]:
    """Every requirement of the contract assessed exactly once, as a schema can say it: an object keyed by
    requirement id, every id required, no other key. Field names are positional (ids need not be Python
    names); the ids are the aliases, which validation and the JSON schema use."""
    fields: dict[str, Any] = {
        f"requirement_{index}": (_RequirementJudgement, Field(alias=requirement_id))
        for index, requirement_id in enumerate(dict.fromkeys(requirement_ids))
    }
    return create_model("EvoGenUIRequirements", __config__=ConfigDict(extra="forbid"), **fields)


class _JudgementRules(BaseModel):
    """The verdict's normalisation (lenient spelling, clear errors); the fields come from `verdict_model`."""

    model_config = ConfigDict(extra="ignore")

    @field_validator("failure_types", mode="before", check_fields=False)
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

    @field_validator("mechanism", mode="before", check_fields=False)
    @classmethod
    def _mechanism(cls, value: Any) -> Any:
        value = _identifier(value)
        if value in (None, "", "none", "null"):
            return None
        if value not in MECHANISMS:
            raise ValueError(f"unknown mechanism {value!r}; allowed: {list(MECHANISMS)} or null")
        return value


@lru_cache(maxsize=256)
def verdict_model(requirement_ids: tuple[str, ...]) -> type[BaseModel]:
    """The verdict for a turn with these requirement ids: one required field per dimension of the suite's
    pass rule (presentation, execution, alignment), the requirements keyed by id, failure types from the
    fixed list, the mechanism of §6.1 or null, and a summary."""
    return create_model(
        "EvoGenUIVerdict",
        __base__=_JudgementRules,
        **{name: (_Dimension, ...) for name in DIMENSIONS},
        requirements=(requirements_model(requirement_ids), ...),
        failure_types=(list[Literal[tuple(FAILURE_TYPES)]], Field(default_factory=list)),  # type: ignore[valid-type]
        mechanism=(Literal[MECHANISMS] | None, None),  # type: ignore[valid-type]
        summary=(str, ""),
    )


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
- requirements: an object keyed by requirement id, one entry for every requirement of the private contract \
and no other: its status, "passed", "failed" or "unassessed" (the evidence cannot tell), and a short reason.
- failure_types: every type from this fixed list that applies (empty when none does):
{failure_types}
- mechanism: when the turn does not pass (any score below 4), the ONE primary failure mechanism:
{mechanisms}
  Use null when every score is 4 or 5.
- summary: one or two sentences.

Answer with one JSON object only, matching the JSON schema you are given: {{"presentation": {{"score": 1-5, \
"reason": "..."}}, "execution": {{...}}, "alignment": {{...}}, "requirements": {{"<requirement id>": \
{{"status": "...", "reason": "..."}}, ...}}, "failure_types": [...], "mechanism": "..." or null, "summary": "..."}}."""


class EvoGenUIRubric(RubricBase):
    """Presentation, Execution and Alignment, 1-5 each, with reasons (EvoGenUI-Bench §4.2, Appendix C.1)."""

    name = "evogenui"
    version = "evogenui-pea-v2"  # recorded in lineage.json; bump when the instructions or schema change
    default_screenshot = "full"  # EvoGenUI-Bench §5.2: "refreshed full-page screenshots"
    dimensions = DIMENSIONS

    def instructions(self) -> str:
        failure_types = "\n".join(f"  {key}: {text}" for key, text in FAILURE_TYPES.items())
        mechanisms = "\n".join(f"  {mechanism.value}: {judge_wording(mechanism)}" for mechanism in Mechanism)
        return _EVOGENUI_INSTRUCTIONS.format(failure_types=failure_types, mechanisms=mechanisms)

    def answer_model(self, requirement_ids: list[str]) -> type[BaseModel]:
        return verdict_model(tuple(requirement_ids))

    def schema(self, requirement_ids: list[str]) -> dict[str, Any]:
        return decoding_schema(self.answer_model(requirement_ids))

    def parse(self, data: Any, requirement_ids: list[str]) -> RubricOutcome:
        judgement = self.answer_model(requirement_ids).model_validate(data)  # ValidationError is a ValueError
        dimensions = {
            name: DimensionScore(score=float(getattr(judgement, name).score), reason=getattr(judgement, name).reason)
            for name in self.dimensions
        }
        scores = {name: float(getattr(judgement, name).score) for name in self.dimensions}
        assessed = judgement.requirements
        requirements: dict[str, RequirementResult] = {}
        for field_name, field in type(assessed).model_fields.items():
            item = getattr(assessed, field_name)
            requirements[field.alias] = RequirementResult(
                id=field.alias, status=RequirementStatus(item.status), reason=item.reason or "(no reason given)"
            )
        passed = turn_passes(generation_succeeded=True, artifact_evaluable=True, scores=scores)
        return RubricOutcome(
            dimensions=dimensions,
            scores=scores,
            passed=passed,
            requirements=requirements,
            failure_types=judgement.failure_types,
            mechanism=None if passed else judgement.mechanism,  # diagnostic for non-passing turns only (§6.1)
            summary=judgement.summary,
        )

    def decide(self, outcome: RubricOutcome | None, *, generation_ok: bool, evaluable: bool) -> bool:
        """The official turn decision (EvoGenUI-Bench §4.3), by the suite's pass rule."""
        return turn_passes(generation_succeeded=generation_ok, artifact_evaluable=evaluable,
                           scores=outcome.scores if outcome is not None else {})
