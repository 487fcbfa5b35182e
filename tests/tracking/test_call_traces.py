"""An agent's call reported like any other: its messages, its answer's text with each tool call, its usage;
a failed call reported with its error and raised unchanged."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from runner.models.base import ChatAnswer, ModelBase, ProviderError
from runner.tracking.call_traces import ModelCall, TracedModel, chat_text


class ToolModel(ModelBase):
    name = "tool-model"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    @property
    def answers_tool_calls(self) -> bool:
        return True

    async def generate(self, request: Any) -> Any:
        raise AssertionError("not used")

    async def chat(self, body: dict[str, Any], *, task_id: str, turn: int) -> ChatAnswer:
        if self.fail:
            raise ProviderError("no answer")
        message = {"role": "assistant", "content": "Writing.",
                   "tool_calls": [{"id": "t", "function": {"name": "write_file", "arguments": '{"path": "a"}'}}]}
        return ChatAnswer(request=body, completion={"choices": [{"message": message}]}, latency_s=0.5,
                          usage={"prompt_tokens": 3, "completion_tokens": 2})


def test_an_agents_call_becomes_a_model_call_with_its_tool_calls_as_text() -> None:
    calls: list[ModelCall] = []
    traced = TracedModel(ToolModel(), role="generator", sink=calls.append)
    assert traced.answers_tool_calls
    body = {"messages": [{"role": "user", "content": "go"}], "tools": []}
    answer = asyncio.run(traced.chat(body, task_id="t1", turn=2))
    assert answer.usage == {"prompt_tokens": 3, "completion_tokens": 2}
    (call,) = calls
    assert (call.role, call.task_id, call.turn, call.latency_s) == ("generator", "t1", 2, 0.5)
    assert call.messages == body["messages"] and call.usage == {"prompt_tokens": 3, "completion_tokens": 2}
    assert call.text == 'Writing.\n[tool call] write_file({"path": "a"})'
    with pytest.raises(ProviderError):
        asyncio.run(TracedModel(ToolModel(fail=True), role="generator", sink=calls.append).chat(body, task_id="t",
                                                                                               turn=1))
    assert calls[-1].error == "ProviderError: no answer"
    assert chat_text({"choices": [{"message": {"content": None}}]}) == ""
