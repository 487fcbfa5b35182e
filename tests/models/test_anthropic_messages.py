"""An OpenAI-format structured request as Anthropic's Messages API forced tool call, and its answer back as text
(https://platform.claude.com/docs/en/api/messages, .../agents-and-tools/tool-use/implement-tool-use)."""

from __future__ import annotations

import json

import pytest

from runner.models.anthropic_messages import completion_from_message, input_schema, messages_request, tool_name

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
FORMAT = {"type": "json_schema", "json_schema": {"name": "judge verdict!", "schema": SCHEMA}}


def test_system_messages_are_hoisted_and_images_become_base64_or_url_blocks() -> None:
    messages = [{"role": "system", "content": "Rule one."}, {"role": "developer", "content": "Rule two."},
                {"role": "user", "content": [{"type": "text", "text": "Look."},
                                             {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                                             {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}]},
                {"role": "assistant", "content": "not JSON"}, {"role": "user", "content": "Again."}]
    body = messages_request(model="claude-x", messages=messages, response_format=FORMAT,
                            parameters={"max_tokens": 99, "temperature": 0.0})
    assert body["system"] == "Rule one.\n\nRule two."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    _, data, url = body["messages"][0]["content"]
    assert data == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    assert url == {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}
    assert body["max_tokens"] == 99 and body["temperature"] == 0.0 and "top_p" not in body
    assert body["tools"][0]["name"] == tool_name(FORMAT) == "judge_verdict_"
    assert body["tool_choice"] == {"type": "tool", "name": "judge_verdict_"}


def test_without_a_temperature_none_is_sent() -> None:
    body = messages_request(model="claude-opus-4-7", messages=[{"role": "user", "content": "hi"}],
                            response_format=FORMAT, parameters={"max_tokens": 10})
    assert "temperature" not in body and "top_p" not in body


def test_an_unknown_part_is_refused_before_sending() -> None:
    with pytest.raises(ValueError, match="input_audio"):
        messages_request(model="m", messages=[{"role": "user", "content": [{"type": "input_audio"}]}],
                         response_format=FORMAT, parameters={"max_tokens": 10})


def test_a_non_object_schema_is_wrapped_and_its_answer_unwrapped() -> None:
    union = {"anyOf": [{"type": "object", "properties": {"kind": {"const": "click"}}}]}
    wrapped = input_schema(union)
    assert wrapped["type"] == "object" and wrapped["properties"]["answer"] == union
    message = {"id": "msg_1", "content": [{"type": "tool_use", "name": "act", "input": {"answer": {"kind": "click"}}}],
               "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 4}}
    text, usage, finish, message_id = completion_from_message(message, tool="act", wrapped=True)
    assert json.loads(text) == {"kind": "click"} and usage == {"prompt_tokens": 3, "completion_tokens": 4}
    assert (finish, message_id) == ("stop", "msg_1")


def test_a_cut_answer_says_length_and_text_without_a_tool_call_is_kept() -> None:
    message = {"content": [{"type": "text", "text": "I would rather talk."}], "stop_reason": "max_tokens", "usage": {}}
    text, _, finish, _ = completion_from_message(message, tool="verdict")
    assert (text, finish) == ("I would rather talk.", "length")
    with pytest.raises(ValueError, match="malformed"):
        completion_from_message({"error": "nope"}, tool="verdict")
