"""Anthropic's Messages API: what Claude Code speaks (`ANTHROPIC_BASE_URL` points it at the proxy).

A request's `system` (a string or text blocks) and any message of role `system` become system messages (those
before the model's first answer joined into one system prompt, runner/agents/system_prompt.py); `user`
messages keep their text and images (base64 or URL) and each `tool_result` block becomes a tool message, ahead of
the user's own text as the API orders them (an image inside a tool result follows as a user message, since chat
tool messages carry text only); `assistant` messages keep their text and each `tool_use` block becomes a tool
call. Thinking blocks are not passed back (a chat model takes no reasoning as input). Client tools (a name and an
`input_schema`) are offered as functions; server tools (`web_search_...`, `code_execution_...`, `web_fetch_...`)
and tools marked `defer_loading` (loaded only through the API's own tool search) are not, and the call's record
names each. `tool_choice` maps to chat's (`any` is `required`; `disable_parallel_tool_use` turns parallel calls
off); `stop_sequences` is `stop`.

Answers: a `message` whose content holds a `text` block and one `tool_use` block per tool call (its `input` the
parsed arguments), `stop_reason` `end_turn`, `tool_use` or `max_tokens`, and the usage. Streamed: `message_start`,
then per block `content_block_start`, its deltas (`text_delta`; `input_json_delta` with the whole arguments) and
`content_block_stop`, then `message_delta` (stop reason and usage) and `message_stop`, each with its event name.
Errors are `{"type": "error", "error": {"type": ..., "message": ...}}`.

References: https://docs.anthropic.com/en/api/messages (request and response),
https://docs.anthropic.com/en/docs/build-with-claude/streaming (events),
https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use (tool_use, tool_result,
tool_choice), https://docs.anthropic.com/en/api/errors (error shapes).
"""

from __future__ import annotations

import json
from typing import Any

from runner.agents.dialects.base import (
    ChatRequest, DialectBase, DialectError, ErrorKind, RouteMatch, SseEvent, gather_tool_call_deltas, listed_tools,
)
from runner.agents.system_prompt import leading_system_joined

__all__ = ["DIALECT", "AnthropicMessages"]

RUN_OWNED = ("model", "temperature", "top_p", "top_k", "stream", "metadata", "service_tier", "thinking",
             "context_management", "output_config", "container", "mcp_servers")
UNDERSTOOD = ("messages", "system", "tools", "tool_choice", "max_tokens", "stop_sequences")
_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens",
                 "content_filter": "refusal"}
_ERROR_TYPES = {"invalid_request": "invalid_request_error", "refused": "invalid_request_error",
                "budget_exhausted": "invalid_request_error", "upstream_error": "api_error",
                "not_found": "not_found_error"}


def _image_part(block: dict[str, Any], where: str) -> dict[str, Any]:
    source = block.get("source") or {}
    if source.get("type") == "base64":
        return {"type": "image_url",
                "image_url": {"url": f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"}}
    if source.get("type") == "url" and source.get("url"):
        return {"type": "image_url", "image_url": {"url": str(source["url"])}}
    raise DialectError(f"{where}: an image needs a base64 or url source (file ids need stored files, which the "
                       "proxy does not keep)")


def _system_text(system: Any, where: str) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n\n".join(str(block.get("text", "")) for block in system
                           if isinstance(block, dict) and block.get("type") == "text")
    raise DialectError(f"{where} must be a string or a list of text blocks")


def _chat_content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(part["type"] == "text" for part in parts):
        return "\n\n".join(part["text"] for part in parts)
    return parts


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise DialectError(f"{where}.content must be a string or a list of content blocks")
    for index, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise DialectError(f"{where}.content[{index}] must be a content block with a type")
    return content


def _tool_result(block: dict[str, Any], where: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A tool message for a tool_result block, and the images it held (for a user message after it)."""
    tool_use_id = block.get("tool_use_id")
    if not isinstance(tool_use_id, str) or not tool_use_id:
        raise DialectError(f"{where}.tool_use_id must be a non-empty string")
    content = block.get("content", "")
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for inner in _blocks(content, where) if content != "" else []:
        if inner["type"] == "text":
            texts.append(str(inner.get("text", "")))
        elif inner["type"] == "image":
            images.append(_image_part(inner, where))
    text = "\n".join(texts)
    if block.get("is_error") and not text:
        text = "error"
    return {"role": "tool", "tool_call_id": tool_use_id, "content": text}, images


def _user_messages(blocks: list[dict[str, Any]], where: str, notes: list[str]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        at = f"{where}.content[{index}]"
        if block["type"] == "tool_result":
            message, images = _tool_result(block, at)
            tools.append(message)
            parts += images
        elif block["type"] == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif block["type"] == "image":
            parts.append(_image_part(block, at))
        else:
            notes.append(f"{at}: a {block['type']!r} block is not passed to the model")
    return tools + ([{"role": "user", "content": _chat_content(parts)}] if parts else [])


def _assistant_message(blocks: list[dict[str, Any]], where: str, notes: list[str]) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        at = f"{where}.content[{index}]"
        if block["type"] == "text":
            texts.append(str(block.get("text", "")))
        elif block["type"] == "tool_use":
            call_id = block.get("id")
            if not isinstance(call_id, str) or not call_id:
                raise DialectError(f"{at}.id must be a non-empty string")
            calls.append({"id": call_id, "type": "function",
                          "function": {"name": str(block.get("name", "")),
                                       "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False)}})
        elif block["type"] in ("thinking", "redacted_thinking"):
            continue  # the model's own reasoning: a chat model takes none back
        else:
            notes.append(f"{at}: a {block['type']!r} block is not passed to the model")
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts or not calls else None}
    if calls:
        message["tool_calls"] = calls
    return message


def _messages(body: dict[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise DialectError("'messages' must be a non-empty list of messages")
    chat: list[dict[str, Any]] = []
    if body.get("system"):
        chat.append({"role": "system", "content": _system_text(body["system"], "system")})
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        role = message.get("role") if isinstance(message, dict) else None
        if role == "system":
            chat.append({"role": "system", "content": _system_text(message.get("content", ""), f"{where}.content")})
        elif role == "user":
            chat += _user_messages(_blocks(message.get("content", ""), where), where, notes)
        elif role == "assistant":
            chat.append(_assistant_message(_blocks(message.get("content", ""), where), where, notes))
        else:
            raise DialectError(f"{where}.role = {role!r}: expected user or assistant")
    return chat


def _tools(body: dict[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    chat: list[dict[str, Any]] = []
    for index, tool in listed_tools(body):
        kind = tool.get("type")
        name = tool.get("name")
        if kind not in (None, "custom"):
            notes.append(f"tools[{index}]: the server tool {kind!r} is not offered to the model (no network to run it)")
            continue
        if tool.get("defer_loading"):
            notes.append(f"tools[{index}]: {name!r} is loaded only through the API's tool search; not offered")
            continue
        if not isinstance(name, str) or not name:
            raise DialectError(f"tools[{index}].name must be a non-empty string")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            raise DialectError(f"tools[{index}] ({name}): input_schema must be a JSON schema object")
        function: dict[str, Any] = {"name": name, "parameters": schema}
        if isinstance(tool.get("description"), str):
            function["description"] = tool["description"]
        chat.append({"type": "function", "function": function})
    return chat


def _tool_choice(choice: Any, offered: set[str]) -> tuple[Any, bool | None]:
    """Chat's tool_choice and parallel_tool_calls for the API's tool_choice."""
    if not isinstance(choice, dict):
        return None, None
    parallel = False if choice.get("disable_parallel_tool_use") else None
    kind = choice.get("type")
    if kind == "auto":
        return "auto", parallel
    if kind == "any":
        return "required", parallel
    if kind == "none":
        return "none", None
    if kind == "tool":
        if choice.get("name") not in offered:
            raise DialectError(f"tool_choice names the tool {choice.get('name')!r}, which is not among the tools "
                               "offered")
        return {"type": "function", "function": {"name": choice["name"]}}, parallel
    raise DialectError(f"tool_choice.type = {kind!r}: expected auto, any, tool or none")


def _usage(usage: Any) -> dict[str, int]:
    usage = usage if isinstance(usage, dict) else {}
    cached = int(((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0)
    return {"input_tokens": int(usage.get("prompt_tokens") or 0) - cached,
            "output_tokens": int(usage.get("completion_tokens") or 0),
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": cached}


def _input(arguments: str) -> dict[str, Any]:
    """A tool call's arguments as the tool_use block's input. Arguments that are no JSON object become an empty
    input, which the agent's own validation refuses back to the model (the proxy's record keeps the text)."""
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _stop_reason(finish_reason: Any, has_calls: bool) -> str:
    if has_calls and finish_reason in (None, "stop", "tool_calls", "function_call"):
        return "tool_use"
    return _STOP_REASONS.get(str(finish_reason), "end_turn")


def _model(request: dict[str, Any], fallback: Any) -> str:
    model = request.get("model")
    return model if isinstance(model, str) and model else str(fallback or "")


class _MessageStream:
    """The Messages API's events for one answer: the text block as it comes, each tool_use block whole once the
    answer is complete."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.request = request
        self.started = False
        self.block = -1  # index of the last block started
        self.text_open = False
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason: Any = None
        self.usage: dict[str, Any] | None = None

    def _start(self, chunk: dict[str, Any]) -> list[SseEvent]:
        self.started = True
        message = {"id": f"msg_{chunk.get('id') or 'proxy'}", "type": "message", "role": "assistant",
                   "model": _model(self.request, chunk.get("model")), "content": [], "stop_reason": None,
                   "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0,
                                                    "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
        return [SseEvent.of({"type": "message_start", "message": message}, "message_start")]

    def feed(self, chunk: dict[str, Any]) -> list[SseEvent]:
        events = [] if self.started else self._start(chunk)
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                if not self.text_open:
                    self.text_open = True
                    self.block += 1
                    events.append(SseEvent.of({"type": "content_block_start", "index": self.block,
                                               "content_block": {"type": "text", "text": ""}}, "content_block_start"))
                events.append(SseEvent.of({"type": "content_block_delta", "index": self.block,
                                           "delta": {"type": "text_delta", "text": content}}, "content_block_delta"))
            gather_tool_call_deltas(self.calls, delta)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return events

    def finish(self) -> list[SseEvent]:
        events = [] if self.started else self._start({})
        if self.text_open:
            events.append(SseEvent.of({"type": "content_block_stop", "index": self.block}, "content_block_stop"))
        for position, index in enumerate(sorted(self.calls)):
            slot = self.calls[index]
            self.block += 1
            block = {"type": "tool_use", "id": slot["id"] or f"toolu_proxy_{position}", "name": slot["name"],
                     "input": {}}
            arguments = json.dumps(_input(slot["arguments"]), ensure_ascii=False)
            events += [
                SseEvent.of({"type": "content_block_start", "index": self.block, "content_block": block},
                            "content_block_start"),
                SseEvent.of({"type": "content_block_delta", "index": self.block,
                             "delta": {"type": "input_json_delta", "partial_json": arguments}}, "content_block_delta"),
                SseEvent.of({"type": "content_block_stop", "index": self.block}, "content_block_stop"),
            ]
        delta = {"stop_reason": _stop_reason(self.finish_reason, bool(self.calls)), "stop_sequence": None}
        events.append(SseEvent.of({"type": "message_delta", "delta": delta, "usage": _usage(self.usage)},
                                  "message_delta"))
        events.append(SseEvent.of({"type": "message_stop"}, "message_stop"))
        return events


class AnthropicMessages(DialectBase):
    name = "anthropic-messages"
    routes = ("/v1/messages", "/messages")

    def chat_request(self, body: dict[str, Any], *, route: RouteMatch) -> ChatRequest:
        notes: list[str] = []
        chat: dict[str, Any] = {"messages": leading_system_joined(_messages(body, notes))}
        tools = _tools(body, notes)
        if tools:
            chat["tools"] = tools
            choice, parallel = _tool_choice(body.get("tool_choice"), {t["function"]["name"] for t in tools})
            if choice is not None:
                chat["tool_choice"] = choice
            if parallel is not None:
                chat["parallel_tool_calls"] = parallel
        if isinstance(body.get("max_tokens"), int):
            chat["max_tokens"] = body["max_tokens"]
        stops = body.get("stop_sequences")
        if isinstance(stops, list) and stops:
            chat["stop"] = [str(stop) for stop in stops]
        left_out = sorted(set(body) - set(UNDERSTOOD) - set(RUN_OWNED))
        notes += [f"{key}: not passed to the model" for key in left_out]
        return ChatRequest(body=chat, stream=bool(body.get("stream")), notes=tuple(notes))

    def response(self, completion: dict[str, Any], *, request: dict[str, Any]) -> dict[str, Any]:
        choices = completion.get("choices") or [{}]
        choice = choices[0] if isinstance(choices[0], dict) else {}
        message = choice.get("message") or {}
        content: list[dict[str, Any]] = []
        if isinstance(message.get("content"), str) and message["content"]:
            content.append({"type": "text", "text": message["content"]})
        calls = message.get("tool_calls") or []
        for position, call in enumerate(calls):
            function = call.get("function") or {}
            content.append({"type": "tool_use", "id": str(call.get("id") or f"toolu_proxy_{position}"),
                            "name": str(function.get("name") or ""),
                            "input": _input(str(function.get("arguments") or ""))})
        return {"id": f"msg_{completion.get('id') or 'proxy'}", "type": "message", "role": "assistant",
                "model": _model(request, completion.get("model")), "content": content,
                "stop_reason": _stop_reason(choice.get("finish_reason"), bool(calls)), "stop_sequence": None,
                "usage": _usage(completion.get("usage"))}

    def stream(self, *, request: dict[str, Any]) -> _MessageStream:
        return _MessageStream(request)

    def error(self, status: int, message: str, *, kind: ErrorKind) -> dict[str, Any]:
        return {"type": "error", "error": {"type": _ERROR_TYPES.get(kind, "api_error"), "message": message}}


DIALECT = AnthropicMessages()
