"""The dialect seam: route patterns, server-sent events, a whole answer as its stream of chunks, discovery."""

from __future__ import annotations

import json

from runner.agents.dialects import dialects, find_listing, find_route
from runner.agents.dialects.base import SseEvent, completion_chunks, match_route


def _completion(**message) -> dict:
    return {"id": "c1", "object": "chat.completion", "created": 5, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}


def test_a_route_matches_exactly_with_its_named_segments() -> None:
    pattern = "/v1beta/models/{model}:streamGenerateContent"
    assert match_route(pattern, "/v1beta/models/gemini-2.5-pro:streamGenerateContent") == {"model": "gemini-2.5-pro"}
    assert match_route(pattern, "/v1beta/models/a/b:streamGenerateContent") is None
    assert match_route(pattern, "/v1beta/models/x:generateContent") is None
    assert match_route("/v1/chat/completions", "/v1/chat/completions") == {}
    assert match_route("/v1/chat/completions", "/v1/chat/completions/extra") is None


def test_an_event_encodes_its_name_and_every_data_line() -> None:
    assert SseEvent("[DONE]").encode() == b"data: [DONE]\n\n"
    assert SseEvent.of({"a": 1}, "message_start").encode() == b'event: message_start\ndata: {"a":1}\n\n'
    assert SseEvent("one\ntwo").encode() == b"data: one\ndata: two\n\n"


def test_a_whole_answer_streams_as_role_text_tool_calls_finish_and_usage() -> None:
    calls = [{"id": "t1", "type": "function", "function": {"name": "write_file", "arguments": '{"path": "a"}'}},
             {"id": "t2", "type": "function", "function": {"name": "finish", "arguments": "{}"}}]
    chunks = list(completion_chunks(_completion(content="Writing.", tool_calls=calls)))
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks if chunk["choices"]]
    assert deltas[0] == {"role": "assistant", "content": ""}
    assert deltas[1] == {"content": "Writing."}
    assert [d["tool_calls"][0]["index"] for d in deltas[2:4]] == [0, 1]
    assert deltas[2]["tool_calls"][0]["function"] == {"name": "write_file", "arguments": '{"path": "a"}'}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1] == {"id": "c1", "object": "chat.completion.chunk", "created": 5, "model": "m", "choices": [],
                          "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}
    # Reassembled, the stream is the answer.
    text = "".join(d.get("content") or "" for d in deltas)
    assert text == "Writing." and json.loads(deltas[2]["tool_calls"][0]["function"]["arguments"]) == {"path": "a"}


def test_every_dialect_module_is_found_and_routed_by_path() -> None:
    names = [dialect.name for dialect in dialects()]
    assert "openai-chat" in names and len(names) == len(set(names))
    found = find_route("/v1/chat/completions?api-version=1")
    assert found is not None and found[0].name == "openai-chat" and found[1].query == {"api-version": "1"}
    assert find_route("/v1/unknown") is None
    assert find_listing("/v1/models") is not None and find_listing("/nothing") is None
