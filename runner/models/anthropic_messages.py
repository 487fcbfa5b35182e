"""A structured request to Anthropic's own Messages API: the JSON schema as a tool the model is made to call.

Anthropic's OpenAI-compatibility layer ignores `response_format`
(https://platform.claude.com/docs/en/api/openai-sdk), so a judge on Claude would get no schema at all there. The
Messages API forces one: a tool whose `input_schema` is the schema, chosen with `tool_choice: {"type": "tool",
"name": ...}`; the model's answer is the `tool_use` block's `input`
(https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use). This module turns an
OpenAI-format chat request into that request and the answer back into text (the JSON of the tool's input), so
callers validate it like any other structured answer. The HTTP call itself is the endpoint model's
(runner/models/openai_provider.py), with its retries and error handling.

Request and response shapes: https://platform.claude.com/docs/en/api/messages.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["ANTHROPIC_VERSION", "MESSAGES_PATH", "completion_from_message", "input_schema", "messages_request",
           "tool_name"]

ANTHROPIC_VERSION = "2023-06-01"  # the `anthropic-version` header the Messages API requires
MESSAGES_PATH = "/messages"  # under the base URL https://api.anthropic.com/v1/
_DATA_URL = re.compile(r"^data:(?P<media>[\w/+.-]+);base64,(?P<data>.*)$", re.DOTALL)
_TOOL_NAME = re.compile(r"[^a-zA-Z0-9_-]")
WRAPPED = "answer"  # the one field of a tool input that wraps a schema which is no object


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content or [] if part.get("type") == "text")


def _block(part: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI content part as an Anthropic content block (text, or an image by data URL or URL)."""
    if part.get("type") == "text":
        return {"type": "text", "text": str(part.get("text", ""))}
    if part.get("type") == "image_url":
        url = str((part.get("image_url") or {}).get("url", ""))
        match = _DATA_URL.match(url)
        if match:
            return {"type": "image", "source": {"type": "base64", "media_type": match["media"], "data": match["data"]}}
        return {"type": "image", "source": {"type": "url", "url": url}}
    raise ValueError(f"a message part of type {part.get('type')!r} has no Messages API equivalent here")


def _content(content: Any) -> str | list[dict[str, Any]]:
    return content if isinstance(content, str) else [_block(part) for part in content or []]


def tool_name(response_format: dict[str, Any]) -> str:
    """The tool's name: the schema's name, in the characters tool names may hold (at most 64)."""
    name = str((response_format.get("json_schema") or {}).get("name") or "output")
    return _TOOL_NAME.sub("_", name)[:64] or "output"


def messages_request(*, model: str, messages: list[dict[str, Any]], response_format: dict[str, Any],
                     parameters: dict[str, Any]) -> dict[str, Any]:
    """The Messages API body for a chat request whose answer must match `response_format`'s JSON schema.

    System (and developer) messages become the top-level `system`; `parameters` are the dialect's sampling
    parameters (`max_tokens`, and `temperature` and `top_p` where sent)."""
    schema = (response_format.get("json_schema") or {}).get("schema")
    if not isinstance(schema, dict):
        raise ValueError("a forced tool call needs the JSON schema of its input (response_format.json_schema.schema)")
    system = [_text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer")]
    turns = [{"role": m["role"], "content": _content(m.get("content"))}
             for m in messages if m.get("role") in ("user", "assistant")]
    name = tool_name(response_format)
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": int(parameters["max_tokens"]),
        "messages": turns,
        "tools": [{"name": name, "description": "Record your answer: its input is the answer, as the schema says.",
                   "input_schema": input_schema(schema)}],
        "tool_choice": {"type": "tool", "name": name},
    }
    if system:
        body["system"] = "\n\n".join(text for text in system if text)
    for key in ("temperature", "top_p"):
        if key in parameters:
            body[key] = parameters[key]
    return body


def input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input is an object: a schema of another type (a union of actions) is wrapped as its one field."""
    if schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {WRAPPED: schema}, "required": [WRAPPED], "additionalProperties": False}


def completion_from_message(message: Any, *, tool: str, wrapped: bool = False
                            ) -> tuple[str, dict[str, int], str | None, str | None]:
    """(text, usage, finish_reason, id) of a Messages API answer: the forced tool's input as JSON text (its one
    field's value where `wrapped`, see `input_schema`).

    `finish_reason` in OpenAI's words: `length` when the output cap cut the answer (stop_reason max_tokens),
    else `stop`. A body that is no message raises ValueError (the caller's malformed-response path)."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise ValueError(f"malformed response (no content list): {str(message)[:200]!r}")
    usage = message.get("usage") or {}
    calls = [block for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_use"]
    chosen = next((block for block in calls if block.get("name") == tool), calls[0] if calls else None)
    if chosen is not None:
        value = chosen.get("input")
        if wrapped and isinstance(value, dict) and WRAPPED in value:
            value = value[WRAPPED]
        text = json.dumps(value, ensure_ascii=False)
    else:  # no tool call: the text the model wrote instead, parsed (and refused) like any other answer
        text = "".join(str(block.get("text", "")) for block in message["content"] if isinstance(block, dict))
    finish = "length" if message.get("stop_reason") == "max_tokens" else "stop"
    return (text,
            {"prompt_tokens": int(usage.get("input_tokens") or 0),
             "completion_tokens": int(usage.get("output_tokens") or 0)},
            finish, message.get("id"))
