"""The Anthropic Messages dialect, on the API's documented shapes (https://docs.anthropic.com/en/api/messages, the
streaming events of /en/docs/build-with-claude/streaming, tool use) and on what Claude Code sends."""

from __future__ import annotations

import json

import pytest

from runner.agents.dialects import find_route
from runner.agents.dialects.anthropic import DIALECT
from runner.agents.dialects.base import DialectError, completion_chunks

ROUTE = find_route("/v1/messages?beta=true")[1]
SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
          "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}


def _completion(content=None, calls=None, finish="stop") -> dict:
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {"id": "chatcmpl-3", "object": "chat.completion", "created": 5, "model": "served",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59,
                      "prompt_tokens_details": {"cached_tokens": 20}}}


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_the_route_is_the_messages_path_with_or_without_its_query() -> None:
    assert find_route("/v1/messages")[0].name == "anthropic-messages"
    assert ROUTE.query == {"beta": "true"}


def test_system_messages_tool_uses_and_tool_results_become_chat_messages() -> None:
    body = {
        "model": "claude-x", "max_tokens": 32000, "stream": True, "stop_sequences": ["<stop>"],
        "system": [{"type": "text", "text": "You are Claude Code."},
                   {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "thinking": {"type": "adaptive"}, "metadata": {"user_id": "u"},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "<system-reminder>Tools ready.</system-reminder>"},
                                         {"type": "text", "text": "Build a counter."}]},
            {"role": "system", "content": "# Environment\nPrimary working directory: /app"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Let me look.", "signature": "sig"},
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/app/src/App.jsx"}},
                {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "export default ..."},
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
                 "content": [{"type": "text", "text": "ls: error"},
                             {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QQ=="}}]},
                {"type": "text", "text": "Go on."}]},
        ],
    }
    chat = DIALECT.chat_request(body, route=ROUTE)
    assert chat.stream is True and chat.body["max_tokens"] == 32000 and chat.body["stop"] == ["<stop>"]
    assert chat.body["messages"] == [
        {"role": "system", "content": "You are Claude Code.\n\nBe brief.\n\n# Environment\nPrimary working directory: /app"},
        {"role": "user", "content": "<system-reminder>Tools ready.</system-reminder>\n\nBuild a counter."},
        {"role": "assistant", "content": "Reading it.", "tool_calls": [
            {"id": "toolu_1", "type": "function", "function": {"name": "Read",
                                                               "arguments": '{"file_path": "/app/src/App.jsx"}'}},
            {"id": "toolu_2", "type": "function", "function": {"name": "Bash", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "export default ..."},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "ls: error"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,QQ=="}},
                                     {"type": "text", "text": "Go on."}]},
    ]
    assert chat.notes == ()  # thinking, metadata: the run's, not the agent's


def test_client_tools_are_offered_server_and_deferred_ones_are_noted() -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "Go"}],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
            "tools": [{"name": "Write", "description": "Write a file.", "input_schema": SCHEMA},
                      {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
                      {"name": "DeferredToolPlaceholder", "input_schema": {"type": "object"}, "defer_loading": True}]}
    chat = DIALECT.chat_request(body, route=ROUTE)
    assert chat.body["tools"] == [{"type": "function", "function": {"name": "Write", "parameters": SCHEMA,
                                                                     "description": "Write a file."}}]
    assert chat.body["tool_choice"] == "required" and chat.body["parallel_tool_calls"] is False
    assert len(chat.notes) == 2 and "web_search_20250305" in chat.notes[0] and "tool search" in chat.notes[1]


@pytest.mark.parametrize("choice, expected", [
    ({"type": "auto"}, "auto"), ({"type": "none"}, "none"),
    ({"type": "tool", "name": "Write"}, {"type": "function", "function": {"name": "Write"}})])
def test_tool_choice_maps_to_chats(choice: dict, expected) -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "Go"}], "tool_choice": choice,
            "tools": [{"name": "Write", "input_schema": SCHEMA}]}
    assert DIALECT.chat_request(body, route=ROUTE).body["tool_choice"] == expected


@pytest.mark.parametrize("body, needle", [
    ({"max_tokens": 1, "messages": []}, "'messages'"),
    ({"max_tokens": 1, "messages": [{"role": "tool", "content": "x"}]}, r"messages\[0\].role"),
    ({"max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]},
     "tool_use_id"),
    ({"max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "Write"}]},
     "input_schema"),
    ({"max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "tool", "name": "X"},
      "tools": [{"name": "Write", "input_schema": SCHEMA}]}, "'X'"),
])
def test_a_request_it_cannot_translate_is_refused_naming_the_field(body: dict, needle: str) -> None:
    with pytest.raises(DialectError, match=needle):
        DIALECT.chat_request(body, route=ROUTE)


def test_an_answer_is_a_message_with_text_and_tool_use_blocks() -> None:
    completion = _completion("Writing.", [_call("call_1", "Write", {"file_path": "/app/a", "content": "x"})],
                             finish="tool_calls")
    message = DIALECT.response(completion, request={"model": "claude-x"})
    assert message == {
        "id": "msg_chatcmpl-3", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "text", "text": "Writing."},
                    {"type": "tool_use", "id": "call_1", "name": "Write",
                     "input": {"file_path": "/app/a", "content": "x"}}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 30, "output_tokens": 9, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 20}}


@pytest.mark.parametrize("finish, reason", [("stop", "end_turn"), ("length", "max_tokens"),
                                            ("content_filter", "refusal")])
def test_the_stop_reason_follows_the_finish_reason(finish: str, reason: str) -> None:
    assert DIALECT.response(_completion("x", finish=finish), request={})["stop_reason"] == reason


def test_arguments_that_are_no_json_object_become_an_empty_input() -> None:
    completion = _completion(None, [{"id": "c", "type": "function", "function": {"name": "Bash", "arguments": "{oops"}}])
    assert DIALECT.response(completion, request={})["content"][0]["input"] == {}


def _stream(chunks) -> list[tuple[str, dict]]:
    stream = DIALECT.stream(request={"model": "claude-x"})
    events = [event for chunk in chunks for event in stream.feed(chunk)] + stream.finish()
    decoded = [(event.event, json.loads(event.data)) for event in events]
    assert all(name == payload["type"] for name, payload in decoded)
    return decoded


def test_a_stream_has_the_apis_events_and_reassembles_into_the_whole_message() -> None:
    completion = _completion("Writing the app.", [_call("call_1", "Write", {"file_path": "/app/a", "content": "x"}),
                                                  _call("call_2", "Bash", {"command": "ls"})], finish="tool_calls")
    events = _stream(completion_chunks(completion))
    assert [name for name, _ in events] == [
        "message_start", "content_block_start", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
    start = events[0][1]["message"]
    assert start["role"] == "assistant" and start["content"] == [] and start["model"] == "claude-x"
    # Reassembled as a client does it, the blocks are the whole answer's.
    blocks: dict[int, dict] = {}
    partial: dict[int, str] = {}
    for name, payload in events:
        if name == "content_block_start":
            blocks[payload["index"]] = dict(payload["content_block"])
        elif name == "content_block_delta" and payload["delta"]["type"] == "text_delta":
            blocks[payload["index"]]["text"] += payload["delta"]["text"]
        elif name == "content_block_delta":
            partial[payload["index"]] = partial.get(payload["index"], "") + payload["delta"]["partial_json"]
    for index, text in partial.items():
        blocks[index]["input"] = json.loads(text)
    whole = DIALECT.response(completion, request={"model": "claude-x"})
    assert [blocks[index] for index in sorted(blocks)] == whole["content"]
    delta = events[-2][1]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert delta["usage"] == whole["usage"]


def test_a_text_only_stream_ends_its_turn() -> None:
    events = _stream(completion_chunks(_completion("Done.")))
    assert [name for name, _ in events] == ["message_start", "content_block_start", "content_block_delta",
                                            "content_block_stop", "message_delta", "message_stop"]
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"


def test_errors_take_the_apis_shape() -> None:
    assert DIALECT.error(400, "steps: 20 of 20", kind="budget_exhausted") == {
        "type": "error", "error": {"type": "invalid_request_error", "message": "steps: 20 of 20"}}
    assert DIALECT.error(502, "no answer", kind="upstream_error")["error"]["type"] == "api_error"
