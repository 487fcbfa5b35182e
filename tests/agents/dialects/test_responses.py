"""The Responses API dialect, on the API's documented shapes (https://platform.openai.com/docs/api-reference/responses:
a request's input items and tools, the response object, the streaming events) and on what Codex sends."""

from __future__ import annotations

import json

import pytest

from runner.agents.dialects import find_route
from runner.agents.dialects.base import DialectError, completion_chunks
from runner.agents.dialects.responses import DIALECT

ROUTE = find_route("/v1/responses")[1]
PATCH_GRAMMAR = {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+ end_patch"}


def _completion(content=None, calls=None, finish="stop", usage=None) -> dict:
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {"id": "chatcmpl-7", "object": "chat.completion", "created": 1700000000, "model": "served",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage or {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42,
                               "prompt_tokens_details": {"cached_tokens": 8}}}


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _events(request: dict, chunks) -> list[dict]:
    stream = DIALECT.stream(request=request)
    events = [event for chunk in chunks for event in stream.feed(chunk)] + stream.finish()
    decoded = []
    for event in events:
        payload = json.loads(event.data)
        assert event.event == payload["type"]  # the SSE event name is the event's type
        decoded.append(payload)
    return decoded


def test_instructions_and_input_items_become_chat_messages() -> None:
    body = {
        "model": "gpt-x", "instructions": "You are a coding agent.", "stream": True, "store": False,
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Sandbox: none."}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "Make the page."},
                {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"}]},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading."}]},
            {"type": "function_call", "call_id": "call_a", "name": "exec_command", "arguments": '{"cmd":"ls"}'},
            {"type": "function_call", "call_id": "call_b", "name": "exec_command", "arguments": '{"cmd":"pwd"}'},
            {"type": "function_call_output", "call_id": "call_a", "output": "src\n"},
            {"type": "function_call_output", "call_id": "call_b",
             "output": [{"type": "input_text", "text": "/app"}]},
            {"type": "custom_tool_call", "call_id": "call_c", "name": "apply_patch", "input": "*** Begin Patch"},
            {"type": "custom_tool_call_output", "call_id": "call_c", "output": "Done!"},
        ],
    }
    chat = DIALECT.chat_request(body, route=ROUTE)
    assert chat.stream is True
    assert chat.body["messages"] == [
        {"role": "system", "content": "You are a coding agent.\n\nSandbox: none."},
        {"role": "user", "content": [{"type": "text", "text": "Make the page."},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA",
                                                                         "detail": "low"}}]},
        {"role": "assistant", "content": "Reading.", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "exec_command", "arguments": '{"cmd":"ls"}'}},
            {"id": "call_b", "type": "function", "function": {"name": "exec_command", "arguments": '{"cmd":"pwd"}'}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "src\n"},
        {"role": "tool", "tool_call_id": "call_b", "content": "/app"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_c", "type": "function",
             "function": {"name": "apply_patch", "arguments": '{"input": "*** Begin Patch"}'}}]},
        {"role": "tool", "tool_call_id": "call_c", "content": "Done!"},
    ]
    assert any("reasoning items" in note for note in chat.notes)
    assert "model" not in chat.body and "temperature" not in chat.body  # the run's own


def test_a_string_input_is_one_user_message() -> None:
    chat = DIALECT.chat_request({"model": "m", "input": "Hello"}, route=ROUTE)
    assert chat.body == {"messages": [{"role": "user", "content": "Hello"}]} and chat.stream is False


def test_function_and_custom_tools_are_offered_hosted_ones_are_noted() -> None:
    body = {"model": "m", "input": "Go", "tool_choice": "auto", "parallel_tool_calls": False, "max_output_tokens": 900,
            "reasoning": {"effort": "low", "summary": "auto"},
            "text": {"format": {"type": "json_schema", "name": "plan", "schema": {"type": "object"}, "strict": True}},
            "tools": [
                {"type": "function", "name": "exec_command", "description": "Run a command.", "strict": False,
                 "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}},
                {"type": "custom", "name": "apply_patch", "description": "Edit files.", "format": PATCH_GRAMMAR},
                {"type": "web_search", "external_web_access": True},
                {"type": "namespace", "name": "multi_agent_v1", "tools": []},
            ]}
    chat = DIALECT.chat_request(body, route=ROUTE)
    tools = chat.body["tools"]
    assert [tool["function"]["name"] for tool in tools] == ["exec_command", "apply_patch"]
    assert tools[0]["function"]["parameters"]["required"] == ["cmd"]
    patch = tools[1]["function"]["parameters"]
    assert patch["required"] == ["input"] and "start: begin_patch" in patch["properties"]["input"]["description"]
    assert chat.body["tool_choice"] == "auto" and chat.body["parallel_tool_calls"] is False
    assert chat.body["max_tokens"] == 900 and chat.body["reasoning_effort"] == "low"
    assert chat.body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "plan", "schema": {"type": "object"}, "strict": True}}
    assert any("'web_search'" in note for note in chat.notes)
    assert any("multi_agent_v1" in note for note in chat.notes)


def test_a_forced_tool_is_a_chat_function_choice() -> None:
    body = {"model": "m", "input": "Go", "tool_choice": {"type": "function", "name": "exec_command"},
            "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}]}
    chat = DIALECT.chat_request(body, route=ROUTE)
    assert chat.body["tool_choice"] == {"type": "function", "function": {"name": "exec_command"}}
    body["tool_choice"] = {"type": "function", "name": "missing"}
    with pytest.raises(DialectError, match="missing"):
        DIALECT.chat_request(body, route=ROUTE)


@pytest.mark.parametrize("body, needle", [
    ({"model": "m", "input": "Go", "previous_response_id": "resp_1"}, "previous_response_id"),
    ({"model": "m", "input": [{"type": "item_reference", "id": "msg_1"}]}, "item_reference"),
    ({"model": "m", "input": [{"type": "message", "role": "tool", "content": "x"}]}, "input[0].role"),
    ({"model": "m", "input": [{"type": "function_call_output", "output": "x"}]}, "input[0].call_id"),
    ({"model": "m", "input": []}, "'input'"),
])
def test_a_request_the_proxy_cannot_serve_is_refused_naming_the_field(body: dict, needle: str) -> None:
    with pytest.raises(DialectError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        DIALECT.chat_request(body, route=ROUTE)


def test_an_answer_is_a_response_with_a_message_and_function_calls() -> None:
    request = {"model": "gpt-x", "input": "Go", "tools": [{"type": "function", "name": "exec_command"}]}
    completion = _completion("Listing.", [_call("call_1", "exec_command", {"cmd": "ls"})], finish="tool_calls")
    response = DIALECT.response(completion, request=request)
    assert response["object"] == "response" and response["status"] == "completed"
    assert response["id"] == "resp_chatcmpl-7" and response["model"] == "gpt-x"
    message, call = response["output"]
    assert message == {"type": "message", "id": "msg_chatcmpl-7_0", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": "Listing.", "annotations": []}]}
    assert call == {"type": "function_call", "id": "fc_chatcmpl-7_0", "status": "completed", "call_id": "call_1",
                    "name": "exec_command", "arguments": '{"cmd": "ls"}'}
    assert response["usage"] == {"input_tokens": 30, "input_tokens_details": {"cached_tokens": 8},
                                 "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0},
                                 "total_tokens": 42}


def test_a_custom_tools_call_goes_back_as_its_free_text_input() -> None:
    request = {"model": "m", "input": "Go", "tools": [{"type": "custom", "name": "apply_patch"}]}
    completion = _completion(None, [_call("call_9", "apply_patch", {"input": "*** Begin Patch\n*** End Patch\n"})],
                             finish="tool_calls")
    (item,) = DIALECT.response(completion, request=request)["output"]
    assert item["type"] == "custom_tool_call" and item["call_id"] == "call_9"
    assert item["input"] == "*** Begin Patch\n*** End Patch\n"


def test_an_answer_cut_by_the_output_cap_is_incomplete() -> None:
    response = DIALECT.response(_completion("Half", finish="length"), request={"model": "m", "input": "Go"})
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}


def test_a_stream_has_the_apis_events_in_order_and_ends_with_the_whole_response() -> None:
    request = {"model": "gpt-x", "input": "Go", "stream": True, "tools": [
        {"type": "function", "name": "exec_command"}, {"type": "custom", "name": "apply_patch"}]}
    completion = _completion("Writing the app.", [_call("call_1", "exec_command", {"cmd": "ls"}),
                                                  _call("call_2", "apply_patch", {"input": "PATCH"})],
                             finish="tool_calls")
    events = _events(request, completion_chunks(completion))
    kinds = [event["type"] for event in events]
    assert kinds == [
        "response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.done", "response.output_item.done",
        "response.output_item.added", "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done", "response.output_item.done",
        "response.completed"]
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    assert events[0]["response"]["status"] == "in_progress" and events[0]["response"]["output"] == []
    final = events[-1]["response"]
    # The stream's last event holds what the whole answer would have been.
    assert final["output"] == DIALECT.response(completion, request=request)["output"]
    assert final["usage"]["input_tokens"] == 30
    added = [event for event in events if event["type"] == "response.output_item.added"]
    assert [event["output_index"] for event in added] == [0, 1, 2]
    assert added[1]["item"]["arguments"] == "" and added[1]["item"]["status"] == "in_progress"


def test_a_stream_of_small_deltas_reassembles_the_text_and_arguments() -> None:
    base = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "served"}
    deltas = [{"role": "assistant", "content": ""}, {"content": "Wri"}, {"content": "ting"},
              {"tool_calls": [{"index": 0, "id": "call_x", "type": "function",
                               "function": {"name": "exec_command", "arguments": '{"cm'}}]},
              {"tool_calls": [{"index": 0, "function": {"arguments": 'd": "ls"}'}}]}]
    chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks += [{**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
               {**base, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}]
    events = _events({"model": "m", "input": "Go"}, chunks)
    text = "".join(event["delta"] for event in events if event["type"] == "response.output_text.delta")
    assert text == "Writing"
    final = events[-1]["response"]
    assert final["output"][1]["arguments"] == '{"cmd": "ls"}' and final["output"][1]["call_id"] == "call_x"
    assert final["usage"]["total_tokens"] == 7


def test_a_stream_cut_by_the_output_cap_ends_incomplete() -> None:
    events = _events({"model": "m", "input": "Go"}, completion_chunks(_completion("Half", finish="length")))
    assert events[-1]["type"] == "response.incomplete"
    assert events[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
