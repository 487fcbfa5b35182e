"""Structured output from any Model: ask for JSON that matches a schema, validate it, retry malformed answers.

Judges and actors request the schema as `response_format` where the server supports it (OpenAI
`json_schema`, vLLM guided decoding), so even a small model returns parsable JSON. Servers that do not
can be asked for `json_object` or nothing at all; the answer is then dug out of prose or a code fence.
Either way the answer is validated here, and a malformed one is retried with the validation error fed
back to the model (which also changes the request, so a response cache cannot replay the bad answer).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Literal, TypeVar

from runner.models.base import GenerationRequest, Model
from runner.models.parse import strip_thinking

__all__ = [
    "StructuredMode",
    "StructuredOutputError",
    "StructuredResult",
    "ask_structured",
    "extract_json_object",
    "response_format_for",
]

T = TypeVar("T")
StructuredMode = Literal["json_schema", "json_object", "none"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
_MAX_ECHO_CHARS = 4000  # how much of a malformed answer is echoed back in the correction turn


class StructuredOutputError(ValueError):
    """Every attempt returned an answer that did not parse or validate."""

    def __init__(self, message: str, *, errors: list[str], last_text: str) -> None:
        super().__init__(message)
        self.errors = errors
        self.last_text = last_text


@dataclass
class StructuredResult(Generic[T]):
    value: T
    data: Any  # the decoded JSON
    text: str  # the raw answer that validated
    attempts: int
    errors: list[str] = field(default_factory=list)  # one per rejected attempt
    usage: dict[str, int] = field(default_factory=dict)  # summed over attempts


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
    schema: dict[str, Any],
    validate: Callable[[Any], T],
    name: str = "output",
    mode: StructuredMode = "json_schema",
    strict: bool = False,
    max_attempts: int = 3,
    task_id: str = "",
    turn: int = 0,
) -> StructuredResult[T]:
    """Ask until `validate(json)` accepts an answer, at most `max_attempts` times.

    `validate` raises ValueError (pydantic's ValidationError is one) for an unacceptable answer.
    ProviderError (no answer at all) propagates: that is the provider's failure, not a malformed answer.
    """
    response_format = response_format_for(schema, name=name, mode=mode, strict=strict)
    conversation = list(messages)
    errors: list[str] = []
    usage: dict[str, int] = {}
    text = ""
    for attempt in range(1, max(1, max_attempts) + 1):
        request = GenerationRequest(task_id=task_id, turn=turn, messages=conversation, response_format=response_format)
        response = await model.generate(request)
        _add_usage(usage, response.usage)
        text = response.text or ""
        try:
            data = extract_json_object(text)
            value = validate(data)
        except ValueError as error:
            reason = _short(error)
            errors.append(f"attempt {attempt}: {reason}")
            conversation = [
                *conversation,
                {"role": "assistant", "content": text[:_MAX_ECHO_CHARS] or "(empty)"},
                {
                    "role": "user",
                    "content": f"That answer was rejected: {reason}\nAnswer again with exactly one JSON object "
                    f"that matches this JSON schema, and nothing else:\n{json.dumps(schema)}",
                },
            ]
            continue
        return StructuredResult(value=value, data=data, text=text, attempts=attempt, errors=errors, usage=usage)
    raise StructuredOutputError(
        f"no valid {name} after {max(1, max_attempts)} attempt(s): " + "; ".join(errors),
        errors=errors,
        last_text=text,
    )


def _short(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    lines = [line for line in text.splitlines() if line.strip()]
    # pydantic lists one problem per two lines; keep the first few, bounded
    return " | ".join(lines[:6])[:800]
