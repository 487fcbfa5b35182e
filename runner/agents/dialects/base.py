"""What an API dialect of the model proxy is: a translation between one agent API and OpenAI chat completions.

The proxy (runner/agents/proxy.py) asks the run's model in one API only, OpenAI chat completions, through the
run's model role; an agent may speak another (the Responses API, Anthropic Messages, Gemini's generateContent).
A dialect turns its API's request body into a chat-completions request (`chat_request`), and the chat-completions
answer back into its API's answer: whole (`response`) or as server-sent events (`stream`, fed chat-completion
chunks one by one). Each is pure: no I/O, no clock, no state beyond one stream's translator.

The proxy owns everything else: which model answers (the run's, whatever the request names), the output cap and
sampling settings (the run's config), the key, the budgets, the recording. It asks upstream for a whole answer
and, where the agent asked for a stream, feeds the dialect's translator the chunks of that answer
(`completion_chunks`): the same translator serves a streamed upstream answer unchanged.

A dialect is a module under runner/agents/dialects/ that defines `DIALECT` (an object of this protocol, usually a
`DialectBase` subclass); runner/agents/dialects/__init__.py finds them and routes a request by its path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "ChatRequest",
    "Dialect",
    "DialectBase",
    "DialectError",
    "ErrorKind",
    "RouteMatch",
    "SseEvent",
    "StreamTranslator",
    "completion_chunks",
    "match_route",
]

# Why the proxy answers an error, for the dialect to phrase in its API's error shape:
#   invalid_request   the body is not a request of this API (the dialect raised DialectError), HTTP 400
#   refused           the model's server refused the request (a prompt over its context...), HTTP 400
#   budget_exhausted  the slot's budget is spent (steps, tokens or wall clock), HTTP 400: never worth a retry
#   upstream_error    the model gave no answer after the run's retries, HTTP 502
#   not_found         no route of any dialect matches the path, HTTP 404
ErrorKind = str


class DialectError(ValueError):
    """A request the dialect cannot translate (a missing field, a content type it does not carry): the proxy
    answers 400 in the dialect's error shape with this message."""


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event: `data` is JSON text or a sentinel such as `[DONE]`; `event` names it where the API
    names its events (Anthropic Messages, the Responses API)."""

    data: str
    event: str | None = None

    def encode(self) -> bytes:
        lines = [f"event: {self.event}"] if self.event else []
        lines += [f"data: {line}" for line in self.data.split("\n")]
        return ("\n".join(lines) + "\n\n").encode("utf-8")

    @classmethod
    def of(cls, payload: Any, event: str | None = None) -> "SseEvent":
        """An event whose data is `payload` as compact JSON."""
        return cls(json.dumps(payload, ensure_ascii=False, separators=(",", ":")), event)


@dataclass(frozen=True)
class RouteMatch:
    """The request's path matched against a dialect's route: its `{name}` segments and its query."""

    route: str  # the route pattern that matched, e.g. "/v1beta/models/{model}:streamGenerateContent"
    path: str  # the path as requested (without its query)
    params: Mapping[str, str] = field(default_factory=dict)  # {"model": "gemini-2.5-pro"}
    query: Mapping[str, str] = field(default_factory=dict)  # {"alt": "sse"}


@dataclass(frozen=True)
class ChatRequest:
    """What a dialect makes of its API's request: an OpenAI chat-completions body (messages, tools, tool_choice,
    max_tokens, stop, ...) and whether the agent asked for its answer as a stream. `stream` and `stream_options`
    are not part of `body`: the proxy decides how it asks upstream."""

    body: dict[str, Any]
    stream: bool = False
    # What the translation left out or changed, one line each ("logprobs: not served through the proxy"): the
    # proxy records them with the call, so nothing is dropped unseen.
    notes: tuple[str, ...] = ()


class StreamTranslator(Protocol):
    """One streamed answer's translation: fed the chat-completion chunks in order, then finished."""

    def feed(self, chunk: dict[str, Any]) -> list[SseEvent]:
        """The events one `chat.completion.chunk` makes (possibly none)."""
        ...

    def finish(self) -> list[SseEvent]:
        """The events that close the stream, after the last chunk."""
        ...


class Dialect(Protocol):
    """An agent API the proxy speaks; `DialectBase` gives the optional members their defaults."""

    name: str  # e.g. "openai-chat", "openai-responses", "anthropic-messages", "gemini"
    # POST paths it answers; `{name}` matches one path segment up to the next "/" or ":"
    # (Gemini: "/v1beta/models/{model}:generateContent").
    routes: tuple[str, ...]

    @property
    def listing_routes(self) -> tuple[str, ...]:
        """GET paths that list the models (the one model the proxy serves); () for none."""
        ...

    def listing(self, model: str) -> dict[str, Any]:
        """The body of a model listing in this API's shape, for the single model `model`."""
        ...

    def chat_request(self, body: dict[str, Any], *, route: RouteMatch) -> ChatRequest:
        """The chat-completions request for this API's request `body`; DialectError when it is none."""
        ...

    def response(self, completion: dict[str, Any], *, request: dict[str, Any]) -> dict[str, Any]:
        """This API's whole answer for a `chat.completion` answering `request` (the API's own request body)."""
        ...

    def stream(self, *, request: dict[str, Any]) -> StreamTranslator:
        """A translator for one streamed answer to `request` (the API's own request body)."""
        ...

    def error(self, status: int, message: str, *, kind: ErrorKind) -> dict[str, Any]:
        """This API's error body for an HTTP `status` (see ErrorKind for the kinds the proxy sends)."""
        ...


class DialectBase:
    """The defaults of Dialect's optional members: no model listing, OpenAI's error shape."""

    name: str
    routes: tuple[str, ...] = ()

    @property
    def listing_routes(self) -> tuple[str, ...]:
        return ()

    def listing(self, model: str) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": model, "object": "model", "created": 0, "owned_by": "genui-runner"}]}

    def error(self, status: int, message: str, *, kind: ErrorKind) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


_SEGMENT = re.compile(r"\{(\w+)\}")


def match_route(pattern: str, path: str) -> dict[str, str] | None:
    """The `{name}` values when `path` matches `pattern` exactly, else None."""
    regex = ""
    end = 0
    for found in _SEGMENT.finditer(pattern):
        regex += re.escape(pattern[end:found.start()]) + f"(?P<{found.group(1)}>[^/:]+)"
        end = found.end()
    regex += re.escape(pattern[end:])
    matched = re.fullmatch(regex, path)
    return dict(matched.groupdict()) if matched else None


def listed_tools(body: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """The request's `tools` as (index, tool) pairs, each checked to be an object: the shape every dialect's tool
    list shares before its own fields are read."""
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise DialectError("'tools' must be a list of tools")
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise DialectError(f"tools[{index}] must be an object")
    return list(enumerate(tools))


def gather_tool_call_deltas(calls: dict[int, dict[str, str]], delta: dict[str, Any]) -> None:
    """Adds a chunk's tool-call deltas to `calls` (chunk index -> id, name, arguments so far): a streaming server
    sends a call's id and name once and its arguments in pieces."""
    for call in delta.get("tool_calls") or []:
        slot = calls.setdefault(int(call.get("index", len(calls))), {"id": "", "name": "", "arguments": ""})
        function = call.get("function") or {}
        slot["id"] = slot["id"] or str(call.get("id") or "")
        slot["name"] = slot["name"] or str(function.get("name") or "")
        slot["arguments"] += str(function.get("arguments") or "")


def completion_chunks(completion: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A whole `chat.completion` as the `chat.completion.chunk`s a streaming server sends for it: the role, the
    text, each tool call (its id, name and whole arguments in one delta), the finish reason, then a last chunk
    with no choices and the usage (what `stream_options.include_usage` asks for)."""
    base = {"id": completion.get("id") or "chatcmpl-proxy", "object": "chat.completion.chunk",
            "created": completion.get("created") or 0, "model": completion.get("model") or ""}
    choices = completion.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message") or {}
    yield {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        yield {**base, "choices": [{"index": 0, "delta": {"reasoning_content": reasoning}, "finish_reason": None}]}
    content = message.get("content")
    if isinstance(content, str) and content:
        yield {**base, "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        delta = {"tool_calls": [{"index": index, "id": call.get("id"), "type": call.get("type", "function"),
                                 "function": {"name": function.get("name"),
                                              "arguments": function.get("arguments") or ""}}]}
        yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason") or "stop"}]}
    yield {**base, "choices": [], "usage": completion.get("usage")}
