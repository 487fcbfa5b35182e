"""OpenAI chat completions, the proxy's own API: requests pass through, answers come back as the server gave them.

The body keeps what the model needs to answer (messages, tools, tool_choice, parallel_tool_calls, stop,
response_format and the output cap); sampling settings and the model are the run's (the proxy sets them), and
a request for more than one answer is refused; any other field is left out, and the call's record says which.
Reference: https://platform.openai.com/docs/api-reference/chat/create (request, response, streaming chunks).
"""

from __future__ import annotations

from typing import Any

from runner.agents.dialects.base import ChatRequest, DialectBase, DialectError, RouteMatch, SseEvent

__all__ = ["DIALECT", "ChatCompletions"]

# Passed on to the model as the agent sent them.
KEPT = ("messages", "tools", "tool_choice", "parallel_tool_calls", "stop", "response_format", "max_tokens",
        "max_completion_tokens", "reasoning_effort")
# The run decides these (the proxy's own settings): accepted and replaced.
RUN_OWNED = ("model", "temperature", "top_p", "seed", "stream", "stream_options", "user", "metadata", "store",
             "presence_penalty", "frequency_penalty", "service_tier", "prompt_cache_key", "safety_identifier")


class _ChunkStream:
    """Each chunk as one `data:` event, the usage chunk only where `stream_options.include_usage` asked for it,
    then `data: [DONE]`."""

    def __init__(self, *, include_usage: bool, model: str | None) -> None:
        self.include_usage = include_usage
        self.model = model

    def feed(self, chunk: dict[str, Any]) -> list[SseEvent]:
        if not chunk.get("choices") and "usage" in chunk and not self.include_usage:
            return []
        if self.model:
            chunk = {**chunk, "model": self.model}
        return [SseEvent.of(chunk)]

    def finish(self) -> list[SseEvent]:
        return [SseEvent("[DONE]")]


class ChatCompletions(DialectBase):
    name = "openai-chat"
    routes = ("/v1/chat/completions", "/chat/completions")

    @property
    def listing_routes(self) -> tuple[str, ...]:
        return ("/v1/models", "/models")

    def chat_request(self, body: dict[str, Any], *, route: RouteMatch) -> ChatRequest:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise DialectError("'messages' must be a non-empty list of chat messages")
        if body.get("n") not in (None, 1):
            raise DialectError(f"n = {body.get('n')!r}: the proxy answers one choice per request")
        left_out = sorted(set(body) - set(KEPT) - set(RUN_OWNED) - {"n"})
        notes = tuple(f"{key}: not passed to the model" for key in left_out)
        return ChatRequest(body={key: body[key] for key in KEPT if key in body}, stream=bool(body.get("stream")),
                           notes=notes)

    def response(self, completion: dict[str, Any], *, request: dict[str, Any]) -> dict[str, Any]:
        model = request.get("model")
        return {**completion, "model": model} if isinstance(model, str) and model else completion

    def stream(self, *, request: dict[str, Any]) -> _ChunkStream:
        options = request.get("stream_options") or {}
        model = request.get("model")
        return _ChunkStream(include_usage=bool(isinstance(options, dict) and options.get("include_usage")),
                            model=model if isinstance(model, str) and model else None)


DIALECT = ChatCompletions()
