"""The Gemini generateContent dialect, on the API's documented shapes (https://ai.google.dev/api/generate-content:
contents and parts, function declarations and their Schema, tool config, the response and its `alt=sse` stream)
and on what Gemini CLI sends."""

from __future__ import annotations

import json

import pytest

from runner.agents.dialects import find_route
from runner.agents.dialects.base import DialectError, completion_chunks
from runner.agents.dialects.gemini import DIALECT, json_schema

STREAM = find_route("/v1beta/models/gemini-x:streamGenerateContent?alt=sse")[1]
WHOLE = find_route("/v1beta/models/gemini-x:generateContent")[1]


def _completion(content=None, calls=None, finish="stop") -> dict:
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {"id": "chatcmpl-g", "object": "chat.completion", "created": 5, "model": "served",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 6, "total_tokens": 46}}


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_the_model_is_in_the_path_and_the_method_says_whether_it_streams() -> None:
    assert STREAM.params == {"model": "gemini-x"} and STREAM.query == {"alt": "sse"}
    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
    assert DIALECT.chat_request(body, route=STREAM).stream is True
    assert DIALECT.chat_request(body, route=WHOLE).stream is False


def test_contents_become_chat_messages_and_calls_without_ids_pair_by_name_in_order() -> None:
    body = {
        "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "<session_context>linux</session_context>"}, {"text": "Build it."},
                                       {"inlineData": {"mimeType": "image/png", "data": "QQ=="}}]},
            {"role": "model", "parts": [{"text": "Planning.", "thought": True}, {"text": "Reading."},
                                        {"functionCall": {"name": "read_file", "args": {"file_path": "a"}}},
                                        {"functionCall": {"name": "read_file", "args": {"file_path": "b"}}},
                                        {"functionCall": {"id": "own-id", "name": "glob", "args": {"pattern": "*"}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"id": "own-id", "name": "glob", "response": {"output": "a\nb"}}},
                {"functionResponse": {"name": "read_file", "response": {"output": "A"}}},
                {"functionResponse": {"name": "read_file", "response": {"error": "no such file"}}}]},
        ],
    }
    chat = DIALECT.chat_request(body, route=STREAM)
    assert chat.body["messages"] == [
        {"role": "system", "content": "You are Gemini CLI."},
        {"role": "user", "content": [{"type": "text", "text": "<session_context>linux</session_context>"},
                                     {"type": "text", "text": "Build it."},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,QQ=="}}]},
        {"role": "assistant", "content": "Reading.", "tool_calls": [
            {"id": "call_0", "type": "function", "function": {"name": "read_file", "arguments": '{"file_path": "a"}'}},
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"file_path": "b"}'}},
            {"id": "own-id", "type": "function", "function": {"name": "glob", "arguments": '{"pattern": "*"}'}}]},
        {"role": "tool", "tool_call_id": "own-id", "content": "a\nb"},
        {"role": "tool", "tool_call_id": "call_0", "content": "A"},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"error": "no such file"}'},
    ]


def test_a_response_that_answers_no_call_is_refused() -> None:
    body = {"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "glob", "response": {}}}]}]}
    with pytest.raises(DialectError, match=r"contents\[0\].parts\[0\].*'glob'"):
        DIALECT.chat_request(body, route=WHOLE)


def test_the_apis_schema_becomes_json_schema() -> None:
    schema = {"type": "OBJECT", "propertyOrdering": ["path", "mode"], "required": ["path"], "properties": {
        "path": {"type": "STRING", "description": "A path."},
        "mode": {"type": "STRING", "format": "enum", "enum": ["a", "b"], "nullable": True},
        "lines": {"type": "ARRAY", "items": {"type": "INTEGER"}, "minItems": "1"}}}
    assert json_schema(schema) == {"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string", "description": "A path."},
        "mode": {"type": ["string", "null"], "enum": ["a", "b"]},
        "lines": {"type": "array", "items": {"type": "integer"}, "minItems": "1"}}}


def test_function_declarations_are_offered_other_tools_are_noted_and_tool_config_maps() -> None:
    declared = {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}
    body = {"contents": [{"role": "user", "parts": [{"text": "Go"}]}],
            "tools": [{"functionDeclarations": [
                          {"name": "write_file", "description": "Write.", "parametersJsonSchema": declared},
                          {"name": "list", "parameters": {"type": "OBJECT", "properties": {}}},
                          {"name": "ping"}]},
                      {"googleSearch": {}}],
            "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["write_file"]}},
            "generationConfig": {"temperature": 1, "topP": 0.95, "topK": 64, "thinkingConfig": {"includeThoughts": True},
                                 "maxOutputTokens": 512, "stopSequences": ["END"]}}
    chat = DIALECT.chat_request(body, route=STREAM)
    assert chat.body["tools"] == [
        {"type": "function", "function": {"name": "write_file", "parameters": declared, "description": "Write."}},
        {"type": "function", "function": {"name": "list", "parameters": {"type": "object", "properties": {}}}},
        {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}]
    assert chat.body["tool_choice"] == {"type": "function", "function": {"name": "write_file"}}
    assert chat.body["max_tokens"] == 512 and chat.body["stop"] == ["END"]
    assert chat.notes == ("tools[1].googleSearch: not offered to the model (no network to run it)",)
    body["toolConfig"] = {"functionCallingConfig": {"mode": "NONE"}}
    assert DIALECT.chat_request(body, route=STREAM).body["tool_choice"] == "none"
    body["toolConfig"] = {"functionCallingConfig": {"mode": "ANY"}}
    assert DIALECT.chat_request(body, route=STREAM).body["tool_choice"] == "required"


def test_a_json_response_schema_is_chats_response_format() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Go"}]}],
            "generationConfig": {"responseMimeType": "application/json",
                                 "responseSchema": {"type": "OBJECT", "properties": {"ok": {"type": "BOOLEAN"}}}}}
    assert DIALECT.chat_request(body, route=WHOLE).body["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "response", "schema": {
            "type": "object", "properties": {"ok": {"type": "boolean"}}}}}


@pytest.mark.parametrize("body, needle", [
    ({"contents": []}, "'contents'"),
    ({"contents": [{"role": "system", "parts": [{"text": "x"}]}]}, r"contents\[0\].role"),
    ({"contents": [{"role": "user", "parts": [{"text": "x"}]}], "generationConfig": {"candidateCount": 2}},
     "candidateCount"),
    ({"contents": [{"role": "user", "parts": [{"text": "x"}]}], "cachedContent": "cachedContents/1"}, "cachedContent"),
])
def test_a_request_it_cannot_serve_is_refused_naming_the_field(body: dict, needle: str) -> None:
    with pytest.raises(DialectError, match=needle):
        DIALECT.chat_request(body, route=WHOLE)


def test_an_answer_is_one_candidate_with_text_and_function_calls() -> None:
    completion = _completion("Writing.", [_call("call_7", "write_file", {"file_path": "a", "content": "x"})],
                             finish="tool_calls")
    assert DIALECT.response(completion, request={}) == {
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": "Writing."},
            {"functionCall": {"id": "call_7", "name": "write_file", "args": {"file_path": "a", "content": "x"}}}]},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 6, "totalTokenCount": 46},
        "modelVersion": "served", "responseId": "chatcmpl-g"}
    assert DIALECT.response(_completion("x", finish="length"), request={})["candidates"][0]["finishReason"] \
        == "MAX_TOKENS"


def test_a_stream_sends_the_text_then_the_calls_with_the_finish_reason_and_usage() -> None:
    completion = _completion("Writing the app.", [_call("call_1", "write_file", {"file_path": "a"})],
                             finish="tool_calls")
    stream = DIALECT.stream(request={})
    events = [event for chunk in completion_chunks(completion) for event in stream.feed(chunk)] + stream.finish()
    assert all(event.event is None for event in events)  # alt=sse: data lines only
    payloads = [json.loads(event.data) for event in events]
    assert payloads[0]["candidates"][0]["content"]["parts"] == [{"text": "Writing the app."}]
    last = payloads[-1]
    assert last["candidates"][0]["finishReason"] == "STOP" and last["usageMetadata"]["totalTokenCount"] == 46
    # Joined as a client joins them, the parts are the whole answer's.
    parts = [part for payload in payloads for part in payload["candidates"][0]["content"]["parts"]]
    assert parts == DIALECT.response(completion, request={})["candidates"][0]["content"]["parts"]
    assert all("finishReason" not in payload["candidates"][0] for payload in payloads[:-1])


def test_an_empty_answer_still_ends_with_a_finish_reason() -> None:
    stream = DIALECT.stream(request={})
    events = [event for chunk in completion_chunks(_completion("")) for event in stream.feed(chunk)] + stream.finish()
    last = json.loads(events[-1].data)
    assert last["candidates"][0]["finishReason"] == "STOP" and last["candidates"][0]["content"]["parts"] == [{"text": ""}]


def test_errors_take_the_apis_shape() -> None:
    assert DIALECT.error(400, "tokens: 10 of 10", kind="budget_exhausted") == {
        "error": {"code": 400, "message": "tokens: 10 of 10", "status": "INVALID_ARGUMENT"}}
    assert DIALECT.error(502, "no answer", kind="upstream_error")["error"]["status"] == "UNAVAILABLE"
