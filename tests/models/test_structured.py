"""One schema: what a structured request sends is generated from the model its answer is validated with.

`decoding_schema` keeps pydantic's constraints and shapes them for grammar-based decoders; and, property-based
(hypothesis-jsonschema), every answer each rubric's or action's schema admits is accepted by its parser, for
several requirement-id sets of the reshaped, requirement-keyed verdicts. A drift (a bound the schema lacks, a
rule only Python code checks) shows up here as an admitted answer the parser refuses.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema
from pydantic import BaseModel, Field

from runner.actors.llm import ActionAnswer, ActorAction, validate_action
from runner.models.base import GenerationRequest, ModelResponse
from runner.models.structured import StructuredOutputError, ask_structured, decoding_schema
from runner.suites.evogenui.rubric import EvoGenUIRubric
from runner.suites.floweval.pairwise import CRITERIA, PairwiseRubric
from runner.suites.iwebgen.rubric import IWebGenRubric
from runner.suites.web2code.rubric import OutboxRubric, RegionRubric

EVOGENUI_ID_SETS = [[], ["r1"], ["r1", "r2", "a b"], ["initial-readout", "slider-bounds", "kelvin", "fahrenheit-default"]]
OUTBOX_BLOCK_SETS = [["above"], ["above", "below"], ["above", "below", "beside"]]


def _cases() -> list[tuple[str, dict[str, Any], Callable[[Any], Any]]]:
    """(name, the schema a request sends, the parser its answer goes through)."""
    cases: list[tuple[str, dict[str, Any], Callable[[Any], Any]]] = []
    for ids in EVOGENUI_ID_SETS:
        rubric = EvoGenUIRubric()
        cases.append((f"evogenui{ids}", rubric.schema(ids), lambda data, ids=ids, r=rubric: r.parse(data, ids)))
    cases.append(("iwebgen", IWebGenRubric().schema([]), lambda data: IWebGenRubric().parse(data, [])))
    cases.append(("web2code-region", RegionRubric().schema([]), lambda data: RegionRubric().parse(data, [])))
    for names in OUTBOX_BLOCK_SETS:
        cases.append((f"web2code-outbox{names}", OutboxRubric().schema(names),
                      lambda data, names=names: OutboxRubric().parse(data, names)))
    cases.append(("floweval-pairwise", PairwiseRubric().schema(), PairwiseRubric().parse))
    cases.append(("actor-action", decoding_schema(ActionAnswer), validate_action))
    return cases


CASES = _cases()


def _admitted_answers_parse(schema: dict, parse: Callable) -> None:
    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(from_schema(schema))
    def admitted(answer: Any) -> None:
        parse(json.loads(json.dumps(answer)))  # raises when the parser refuses what the schema admits

    admitted()


@pytest.mark.parametrize(("name", "schema", "parse"), CASES, ids=[case[0] for case in CASES])
def test_every_answer_the_schema_admits_is_accepted_by_the_parser(name: str, schema: dict, parse: Callable) -> None:
    _admitted_answers_parse(schema, parse)


def test_the_property_finds_the_drift_a_hand_written_schema_had() -> None:
    """The schema once sent for an EvoGenUI dimension: a reason of any length, which the parser refuses empty."""
    schema = EvoGenUIRubric().schema([])
    for name in ("presentation", "execution", "alignment"):
        schema["properties"][name]["properties"]["reason"] = {"type": "string"}
    with pytest.raises(ValueError, match="at least 1 character"):
        _admitted_answers_parse(schema, lambda data: EvoGenUIRubric().parse(data, []))


@pytest.mark.parametrize("ids", EVOGENUI_ID_SETS, ids=str)
def test_the_evogenui_verdict_assesses_every_requirement_exactly_once(ids: list[str]) -> None:
    rubric = EvoGenUIRubric()
    requirements = rubric.schema(ids)["properties"]["requirements"]
    assert requirements["required"] == ids and requirements["additionalProperties"] is False
    dimension = {"score": 4, "reason": "seen"}
    verdict = {"presentation": dimension, "execution": dimension, "alignment": dimension, "failure_types": [],
               "mechanism": None, "summary": "", "requirements": {rid: {"status": "passed", "reason": "ok"} for rid in ids}}
    outcome = rubric.parse(verdict, ids)
    assert list(outcome.requirements) == ids and all(r.status.value == "passed" for r in outcome.requirements.values())
    if ids:  # one left out, or one not asked: refused, never read as unassessed or dropped silently
        with pytest.raises(ValueError, match=ids[-1]):
            rubric.parse({**verdict, "requirements": {rid: {"status": "passed"} for rid in ids[:-1]}}, ids)
    with pytest.raises(ValueError, match="not-asked"):
        rubric.parse({**verdict, "requirements": {**verdict["requirements"], "not-asked": {"status": "passed"}}}, ids)


def test_the_empty_reason_the_served_judge_wrote_is_refused_by_the_schema_too() -> None:
    """The measured drift: the schema sent {"type": "string"} for a reason the parser requires non-empty."""
    schema = EvoGenUIRubric().schema([])
    assert schema["properties"]["presentation"]["properties"]["reason"] == {"type": "string", "pattern": "^[\\s\\S]{1,}$"}
    assert schema["properties"]["presentation"]["properties"]["score"] == {"type": "integer", "minimum": 1, "maximum": 5}


class _Inner(BaseModel):
    level: Literal["low", "high"] | None = None
    note: str = Field("", min_length=2)


class _Outer(BaseModel):
    count: int = Field(ge=0, le=9)
    items: list[_Inner] = Field(min_length=1, max_length=3)
    maybe: _Inner | None = None


def test_decoding_schema_inlines_refs_keeps_constraints_and_closes_objects() -> None:
    schema = decoding_schema(_Outer)
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text and "title" not in text and "default" not in text
    assert schema["properties"]["count"] == {"type": "integer", "minimum": 0, "maximum": 9}
    items = schema["properties"]["items"]
    assert (items["minItems"], items["maxItems"]) == (1, 3)
    inner = items["items"]
    assert inner["additionalProperties"] is False and inner["required"] == ["level", "note"]
    assert inner["properties"]["level"] == {"enum": ["low", "high", None]}  # Literal | None: one enum
    # xgrammar decodes a length-bounded string as raw characters (control characters too): a pattern instead
    assert inner["properties"]["note"] == {"type": "string", "pattern": "^[\\s\\S]{2,}$"}
    assert schema["required"] == ["count", "items", "maybe"] and schema["additionalProperties"] is False


def test_decoding_schema_refuses_bounds_a_decoder_would_not_enforce() -> None:
    class Capped(BaseModel):
        text: str = Field(max_length=600)

    class Both(BaseModel):
        name: str = Field(pattern="^[a-z]+$", min_length=2)

    with pytest.raises(ValueError, match="maxLength"):
        decoding_schema(Capped)
    with pytest.raises(ValueError, match="put the length in the pattern"):
        decoding_schema(Both)


def test_decoding_schema_refuses_a_recursive_model() -> None:
    class Node(BaseModel):
        children: list["Node"] = []

    Node.model_rebuild()
    with pytest.raises(ValueError, match="recursive schema"):
        decoding_schema(Node)


def test_the_action_schema_says_which_arguments_each_action_needs() -> None:
    variants = {v["properties"]["action"]["const"]: v for v in decoding_schema(ActionAnswer)["anyOf"]}
    assert set(variants) == {"click", "fill", "select", "press", "scroll", "wait", "read_runtime_logs", "finish"}
    assert variants["click"]["required"] == ["thought", "action", "index"]
    assert variants["finish"]["properties"]["success"] == {"type": "boolean"}
    with pytest.raises(ValueError, match="index"):
        validate_action({"action": "click"})  # the flat shape used to admit it; the parser never did
    action = validate_action({"action": "fill", "index": 2, "text": "x", "dy": None})
    assert isinstance(action, ActorAction) and (action.action, action.index, action.text) == ("fill", 2, "x")


class _OneAnswer:
    name = "one-answer"

    def __init__(self, *texts: str) -> None:
        self.texts, self.requests = list(texts), []

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text=self.texts.pop(0))

    async def aclose(self) -> None:
        return None


def test_ask_structured_sends_the_validators_schema_and_validates_with_it() -> None:
    model = _OneAnswer('{"count": 12, "items": [{}], "maybe": null}', '{"count": 3, "items": [{"level": "low"}]}')
    result = asyncio.run(ask_structured(model, messages=[{"role": "user", "content": "go"}], answer=_Outer))  # type: ignore[arg-type]
    assert isinstance(result.value, _Outer) and result.value.count == 3 and result.attempts == 2
    sent = model.requests[0].response_format
    assert sent is not None and sent["json_schema"]["schema"] == decoding_schema(_Outer)
    assert "count" in result.errors[0]
    with pytest.raises(StructuredOutputError):
        asyncio.run(ask_structured(_OneAnswer("{}"), messages=[], answer=_Outer, max_attempts=1))  # type: ignore[arg-type]


def test_pairwise_criteria_are_required_keys() -> None:
    schema = PairwiseRubric().schema()
    assert schema["required"] == list(CRITERIA) and schema["additionalProperties"] is False
