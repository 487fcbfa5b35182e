"""OpenAI chat completions through the proxy: what passes, what the run owns, what is refused; the stream."""

from __future__ import annotations

import json

import pytest

from runner.agents.dialects.base import DialectError, RouteMatch, completion_chunks
from runner.agents.dialects.chat import DIALECT

ROUTE = RouteMatch(route="/v1/chat/completions", path="/v1/chat/completions")


def test_the_request_keeps_what_the_model_answers_and_notes_what_it_leaves_out() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    body = {"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}], "tools": tools, "tool_choice": "auto",
            "temperature": 1.3, "stream": True, "stream_options": {"include_usage": True}, "max_tokens": 99,
            "logprobs": True, "frobnicate": 1}
    request = DIALECT.chat_request(body, route=ROUTE)
    assert request.stream is True
    assert request.body == {"messages": body["messages"], "tools": tools, "tool_choice": "auto", "max_tokens": 99}
    assert request.notes == ("frobnicate: not passed to the model", "logprobs: not passed to the model")


@pytest.mark.parametrize("body, message", [({}, "'messages'"), ({"messages": []}, "'messages'"),
                                           ({"messages": [{"role": "user", "content": "x"}], "n": 2}, "n = 2")])
def test_a_request_it_cannot_answer_is_refused_naming_the_field(body: dict, message: str) -> None:
    with pytest.raises(DialectError, match=message):
        DIALECT.chat_request(body, route=ROUTE)


def test_the_answer_names_the_model_the_agent_asked_for() -> None:
    completion = {"id": "c", "model": "served-name", "choices": [], "usage": {}}
    assert DIALECT.response(completion, request={"model": "qwen3-coder"})["model"] == "qwen3-coder"
    assert DIALECT.response(completion, request={})["model"] == "served-name"


def _events(include_usage: bool) -> list[str]:
    completion = {"id": "c", "model": "m", "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
                  "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    request = {"model": "agent-model", "stream": True, "stream_options": {"include_usage": include_usage}}
    translator = DIALECT.stream(request=request)
    events = [event for chunk in completion_chunks(completion) for event in translator.feed(chunk)]
    return [event.data for event in [*events, *translator.finish()]]


def test_the_stream_ends_with_done_and_carries_usage_only_when_asked() -> None:
    with_usage, without = _events(True), _events(False)
    assert with_usage[-1] == "[DONE]" and without[-1] == "[DONE]"
    assert json.loads(with_usage[-2])["usage"]["total_tokens"] == 2
    assert all("usage" not in json.loads(data) or json.loads(data)["choices"] for data in without[:-1])
    assert {json.loads(data)["model"] for data in with_usage[:-1]} == {"agent-model"}
