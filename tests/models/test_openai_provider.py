"""OpenAIModel against a real HTTP server on 127.0.0.1 that speaks OpenAI's chat format.

The server is scriptable per test (a queue of actions, then a default), which is the fault
injection the retry policy is tested with: 500s, 429s, hangs, 400s and malformed bodies.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from runner.models.base import GenerationRequest, ProviderError
from runner.models.cache import ResponseCache
from runner.models.openai_provider import OpenAIModel, OpenAIModelSettings
from runner.errors import ConfigError
from runner.models.registry import build_model

MSGS = [{"role": "system", "content": "You build UIs."}, {"role": "user", "content": "A counter app."}]


@dataclass
class Script:
    """Actions: ("ok", text) | ("status", code) | ("status", code, headers) | ("hang", s) | ("raw", body, ctype)
    | ("close",): the connection is closed without an answer."""

    queue: list[tuple] = field(default_factory=list)
    default: tuple = ("ok", "answer")
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_action(self, body: dict[str, Any]) -> tuple:
        with self.lock:
            self.requests.append(body)
            return self.queue.pop(0) if self.queue else self.default

    @property
    def calls(self) -> int:
        return len(self.requests)


def _completion(text: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def _send(self, code: int, body: bytes, ctype: str = "application/json", headers: dict | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            body["_path"] = self.path
            body["_auth"] = self.headers.get("Authorization")
            if self.path != "/v1/chat/completions":
                self._send(404, b'{"error": {"message": "not found"}}')
                return
            action = script.next_action(body)
            kind = action[0]
            try:
                if kind == "ok":
                    self._send(200, json.dumps(_completion(action[1], body.get("model", ""))).encode())
                elif kind == "status":
                    err = {"error": {"message": f"injected {action[1]}", "type": "test", "code": action[1]}}
                    self._send(action[1], json.dumps(err).encode(), headers=action[2] if len(action) > 2 else None)
                elif kind == "hang":
                    script.release.wait(timeout=action[1])  # released at teardown
                    self._send(200, json.dumps(_completion("late", "")).encode())
                elif kind == "raw":
                    self._send(200, action[1], ctype=action[2])
                elif kind == "close":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                elif kind == "completion":  # a whole body of the test's own
                    self._send(200, json.dumps(action[1]).encode())
                elif kind == "sse":  # server-sent chat.completion.chunk events, then [DONE]
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for chunk in action[1]:
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.close_connection = True
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout); that is the point of the test

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # concurrent clients must not overflow the listen backlog


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()
    httpd = _Server(("127.0.0.1", 0), _handler(script))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    finally:
        script.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _settings(base_url: str, **overrides: Any) -> OpenAIModelSettings:
    values: dict[str, Any] = {
        "name": "test-model",
        "model": "served-id",
        "base_url": base_url,
        "timeout_s": 5.0,
        "max_retries": 3,
        "retry_base_s": 0.001,
        "retry_max_s": 0.01,
        "cache": False,
    }
    values.update(overrides)
    return OpenAIModelSettings(**values)


def _generate(model: OpenAIModel, request: GenerationRequest | None = None):
    async def go():
        try:
            return await model.generate(request or GenerationRequest(task_id="t1", turn=1, messages=MSGS))
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_success_returns_text_usage_and_sends_settings(server):
    url, script = server
    script.default = ("ok", "hello world")
    model = OpenAIModel(_settings(url, temperature=0.2, max_tokens=123, top_p=0.9, seed=7, extra_body={"top_k": 5}))
    resp = _generate(model)
    assert resp.text == "hello world"
    assert resp.usage == {"prompt_tokens": 11, "completion_tokens": 7}
    assert resp.cached is False and resp.latency_s > 0
    assert resp.raw["finish_reason"] == "stop"
    sent = script.requests[0]
    assert sent["model"] == "served-id" and sent["messages"] == MSGS
    assert (sent["temperature"], sent["max_tokens"], sent["top_p"], sent["seed"], sent["top_k"]) == (
        0.2,
        123,
        0.9,
        7,
        5,
    )
    assert sent["_auth"] == "Bearer EMPTY"  # no api_key_env: local server


def test_500s_then_ok_are_retried(server):
    url, script = server
    script.queue = [("status", 500), ("status", 502)]
    resp = _generate(OpenAIModel(_settings(url)))
    assert resp.text == "answer"
    assert script.calls == 3


def test_429_then_ok_is_retried_and_honours_small_retry_after(server):
    url, script = server
    script.queue = [("status", 429, {"Retry-After": "0"})]
    resp = _generate(OpenAIModel(_settings(url)))
    assert resp.text == "answer" and script.calls == 2


def test_always_500_gives_provider_error_after_all_attempts(server):
    url, script = server
    script.default = ("status", 503)
    with pytest.raises(ProviderError, match="HTTP 503") as info:
        _generate(OpenAIModel(_settings(url, max_retries=2)))
    assert script.calls == 3
    assert "3 attempt" in str(info.value)


def test_hang_times_out_then_provider_error(server):
    url, script = server
    script.default = ("hang", 10)
    with pytest.raises(ProviderError, match="Timeout"):
        _generate(OpenAIModel(_settings(url, timeout_s=0.4, max_retries=1)))
    assert script.calls == 2


def test_hang_once_then_ok_recovers(server):
    url, script = server
    script.queue = [("hang", 10)]
    resp = _generate(OpenAIModel(_settings(url, timeout_s=1.0, max_retries=1)))
    assert resp.text == "answer" and script.calls == 2


@pytest.mark.parametrize("code", [400, 401, 404, 422])
def test_client_errors_are_not_retried(server, code):
    url, script = server
    script.default = ("status", code)
    with pytest.raises(ProviderError, match=f"HTTP {code}"):
        _generate(OpenAIModel(_settings(url)))
    assert script.calls == 1


def test_malformed_json_body_is_retried_then_provider_error(server):
    """A body that is no chat completion is no model response (EvoGenUI-Bench §4.3: e = 0): retried, then
    provider_error. An answer that is a completion but breaks the output contract is invalid_output."""
    url, script = server
    script.default = ("raw", b'{"id": "x", "choices": [', "application/json")
    with pytest.raises(ProviderError, match="malformed response body.* after 2 attempt"):
        _generate(OpenAIModel(_settings(url, max_retries=1)))
    assert script.calls == 2


def test_malformed_body_once_then_ok_recovers(server):
    url, script = server
    script.queue = [("raw", b"<html>bad gateway</html>", "text/html")]
    assert _generate(OpenAIModel(_settings(url))).text == "answer" and script.calls == 2


def test_closed_connection_is_retried_then_provider_error(server):
    url, script = server
    script.default = ("close",)
    with pytest.raises(ProviderError, match="APIConnectionError after 2 attempt"):
        _generate(OpenAIModel(_settings(url, max_retries=1)))
    assert script.calls == 2


def test_closed_connection_once_then_ok_recovers(server):
    url, script = server
    script.queue = [("close",)]
    assert _generate(OpenAIModel(_settings(url))).text == "answer" and script.calls == 2


def test_unparsable_answer_is_a_response_not_a_provider_error(server):
    """The model answered text the output contract cannot parse: the provider worked, the engine buckets it
    invalid_output (p = 0, e = 1)."""
    url, script = server
    script.default = ("ok", "no files here, sorry")
    assert _generate(OpenAIModel(_settings(url))).text == "no files here, sorry" and script.calls == 1


@pytest.mark.parametrize(
    "body,ctype",
    [(b"<html>gateway</html>", "text/html"), (b'{"id": "x", "object": "chat.completion"}', "application/json")],
)
def test_body_without_choices_is_provider_error(server, body, ctype):
    url, script = server
    script.default = ("raw", body, ctype)
    with pytest.raises(ProviderError, match="no choices"):
        _generate(OpenAIModel(_settings(url)))


def test_connection_refused_is_retried_then_provider_error():
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ProviderError, match="APIConnectionError after 3 attempt"):
        _generate(OpenAIModel(_settings(f"http://127.0.0.1:{port}/v1", max_retries=2)))


def test_cache_hit_makes_no_request_and_temperature_change_misses(server, tmp_path: Path):
    url, script = server
    cache = ResponseCache(tmp_path / "responses.db")

    first = _generate(OpenAIModel(_settings(url, cache=True), cache=cache))
    assert first.cached is False and script.calls == 1
    second = _generate(OpenAIModel(_settings(url, cache=True), cache=cache))
    assert second.cached is True and second.text == first.text and second.usage == first.usage
    assert script.calls == 1  # zero HTTP requests for the hit
    third = _generate(OpenAIModel(_settings(url, cache=True, temperature=0.7), cache=cache))
    assert third.cached is False and script.calls == 2
    other_prompt = GenerationRequest(task_id="t1", turn=1, messages=[{"role": "user", "content": "different"}])
    assert _generate(OpenAIModel(_settings(url, cache=True), cache=cache), other_prompt).cached is False
    assert script.calls == 3
    cache.close()


def test_each_sample_of_one_prompt_is_its_own_request_and_its_own_cache_entry(server, tmp_path: Path):
    """FlowEval §3.1: five independent generations of one prompt are five requests; a re-run replays each
    sample's own answer and sends nothing."""
    url, script = server
    script.queue = [("ok", f"generation {n}") for n in range(5)]
    cache = ResponseCache(tmp_path / "responses.db")
    samples = [GenerationRequest(task_id="site", turn=n + 1, messages=MSGS, sample=n) for n in range(5)]
    first = [_generate(OpenAIModel(_settings(url, cache=True), cache=cache), request) for request in samples]
    assert script.calls == 5 and [r.text for r in first] == [f"generation {n}" for n in range(5)]
    assert all(body["messages"] == MSGS for body in script.requests)
    again = [_generate(OpenAIModel(_settings(url, cache=True), cache=cache), request) for request in samples]
    assert script.calls == 5 and all(r.cached for r in again)
    assert [r.text for r in again] == [r.text for r in first]
    cache.close()


def test_cache_disabled_in_settings_is_bypassed(server, tmp_path: Path):
    url, script = server
    cache = ResponseCache(tmp_path / "responses.db")
    for _ in range(2):
        _generate(OpenAIModel(_settings(url, cache=False), cache=cache))
    assert script.calls == 2 and len(cache) == 0
    cache.close()


def test_empty_answer_is_returned_but_not_cached(server, tmp_path: Path):
    url, script = server
    script.default = ("ok", "")
    cache = ResponseCache(tmp_path / "responses.db")
    assert _generate(OpenAIModel(_settings(url, cache=True), cache=cache)).text == ""
    assert _generate(OpenAIModel(_settings(url, cache=True), cache=cache)).text == ""
    assert script.calls == 2 and len(cache) == 0
    cache.close()


def test_failures_are_not_cached(server, tmp_path: Path):
    url, script = server
    script.queue = [("status", 400)]
    cache = ResponseCache(tmp_path / "responses.db")
    with pytest.raises(ProviderError):
        _generate(OpenAIModel(_settings(url, cache=True), cache=cache))
    assert _generate(OpenAIModel(_settings(url, cache=True), cache=cache)).text == "answer"
    assert script.calls == 2
    cache.close()


def test_response_format_passes_through_and_bare_schema_is_wrapped(server):
    url, script = server
    schema = {"type": "object", "properties": {"files": {"type": "object"}}}
    full = {"type": "json_schema", "json_schema": {"name": "contract", "schema": schema}}
    _generate(OpenAIModel(_settings(url)), GenerationRequest("t", 1, MSGS, response_format=full))
    _generate(OpenAIModel(_settings(url)), GenerationRequest("t", 1, MSGS, response_format=schema))
    assert script.requests[0]["response_format"] == full
    assert script.requests[1]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": schema},
    }
    _generate(OpenAIModel(_settings(url)))
    assert "response_format" not in script.requests[2]


def test_images_in_messages_pass_through_unchanged(server):
    url, script = server
    image_msgs = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Make this page."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        }
    ]
    _generate(OpenAIModel(_settings(url, vision=True)), GenerationRequest("t", 1, image_msgs))
    assert script.requests[0]["messages"] == image_msgs


def test_api_key_from_named_env_var(server, monkeypatch):
    url, script = server
    monkeypatch.setenv("RUNNER_TEST_KEY", "sk-test-123")
    _generate(OpenAIModel(_settings(url, api_key_env="RUNNER_TEST_KEY")))
    assert script.requests[0]["_auth"] == "Bearer sk-test-123"


def test_unset_api_key_env_names_the_variable(monkeypatch):
    monkeypatch.delenv("RUNNER_MISSING_KEY", raising=False)
    with pytest.raises(ConfigError, match="RUNNER_MISSING_KEY"):
        OpenAIModel(_settings("http://127.0.0.1:1/v1", api_key_env="RUNNER_MISSING_KEY"))


def test_concurrent_requests_share_one_client(server):
    url, script = server
    model = OpenAIModel(_settings(url))

    async def go():
        try:
            reqs = [GenerationRequest("t", i, [{"role": "user", "content": str(i)}]) for i in range(1, 9)]
            return await asyncio.gather(*(model.generate(r) for r in reqs))
        finally:
            await model.aclose()

    assert [r.text for r in asyncio.run(go())] == ["answer"] * 8
    assert script.calls == 8


def test_registry_builds_openai_and_validates(server):
    url, _ = server
    model = build_model({"name": "m", "provider": "openai", "model": "served-id", "base_url": url})
    assert isinstance(model, OpenAIModel) and model.name == "m"
    asyncio.run(model.aclose())
    with pytest.raises(ConfigError, match="temprature"):
        build_model({"name": "m", "provider": "openai", "model": "x", "base_url": url, "temprature": 0})


def test_a_refused_request_carries_the_servers_message_and_is_sent_once():
    """vLLM's 400 for too many images: a RequestRefused with the server's own words, never retried."""
    from runner.models.fitting import RequestRefused
    from tests.support.fault_server import FaultServer

    body = json.dumps({"object": "error", "type": "BadRequestError", "param": None, "code": 400,
                       "message": "At most 4 image(s) may be provided in one prompt."})
    with FaultServer(lambda messages: (400, body)) as fault:
        model = OpenAIModel(_settings(fault.base_url, max_retries=4))
        with pytest.raises(RequestRefused) as refused:
            _generate(model)
        assert fault.calls == 1
    assert refused.value.status == 400
    assert refused.value.server_message == "At most 4 image(s) may be provided in one prompt."
    assert "not retried" in str(refused.value)


def test_limits_are_a_validated_block():
    settings = OpenAIModelSettings.model_validate({"name": "m", "model": "m", "base_url": "http://127.0.0.1:1/v1",
                                                   "limits": {"images_per_prompt": 4, "context_tokens": 32768}})
    assert settings.limits.images_per_prompt == 4 and settings.limits.context_tokens == 32768
    with pytest.raises(ConfigError, match="limits"):
        build_model({"name": "m", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1",
                     "limits": {"images_per_promt": 4}})


# -- an agent's raw chat call (runner/agents/proxy.py) --------------------------------------------------------


def _chat(model: OpenAIModel, body: dict[str, Any]):
    async def go():
        try:
            return await model.chat(body, task_id="t1", turn=1)
        finally:
            await model.aclose()

    return asyncio.run(go())


TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}]


def test_an_agents_call_carries_its_tools_with_the_configs_model_settings_and_key(server, monkeypatch):
    url, script = server
    script.default = ("ok", "done")
    monkeypatch.setenv("GENUI_TEST_KEY", "sk-run-key")
    model = OpenAIModel(_settings(url, temperature=0.3, max_tokens=500, extra_body={"top_k": 5},
                                  api_key_env="GENUI_TEST_KEY", dialect="openai"))
    answer = _chat(model, {"messages": MSGS, "tools": TOOLS, "tool_choice": "auto", "max_tokens": 9000,
                           "temperature": 2.0})
    sent = script.requests[0]
    assert sent["model"] == "served-id" and sent["tools"] == TOOLS and sent["tool_choice"] == "auto"
    assert sent["temperature"] == 0.3 and sent["top_k"] == 5  # the config's, not the agent's
    assert sent["max_completion_tokens"] == 500 and "max_tokens" not in sent  # the dialect's name, the smaller cap
    assert sent["_auth"] == "Bearer sk-run-key"
    assert answer.completion["choices"][0]["message"]["content"] == "done"
    assert answer.usage == {"prompt_tokens": 11, "completion_tokens": 7} and answer.latency_s > 0
    assert "sk-run-key" not in json.dumps(answer.request)  # the request as recorded holds no key


def test_an_agents_smaller_cap_wins_and_failures_are_retried_as_for_generate(server):
    url, script = server
    script.queue = [("status", 503), ("raw", b'{"no": "choices"}', "application/json")]
    answer = _chat(OpenAIModel(_settings(url, max_tokens=500)), {"messages": MSGS, "max_tokens": 40})
    assert script.calls == 3 and script.requests[-1]["max_tokens"] == 40
    assert answer.completion["model"] == "served-id"


def test_an_agents_refused_request_is_not_retried_and_no_answer_is_a_provider_error(server):
    from runner.models.fitting import RequestRefused

    url, script = server
    script.default = ("status", 400)
    with pytest.raises(RequestRefused, match="injected 400"):
        _chat(OpenAIModel(_settings(url)), {"messages": MSGS})
    assert script.calls == 1
    script.requests.clear()
    script.default = ("status", 500)
    with pytest.raises(ProviderError, match="HTTP 500"):
        _chat(OpenAIModel(_settings(url, max_retries=1)), {"messages": MSGS})
    assert script.calls == 2


# ---- response handling: cut answers, reasoning apart, the whitespace bound ----------------------------------


def _chunk(content: str | None = None, *, reasoning: str | None = None, finish: str | None = None,
           usage: dict | None = None) -> dict:
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if reasoning is not None:
        delta["reasoning"] = reasoning
    choices = [] if usage is not None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    chunk: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                             "choices": choices}
    if usage is not None:
        chunk["usage"] = usage
    return chunk


SCHEMA = {"type": "json_schema", "json_schema": {"name": "v", "schema": {"type": "object"}}}


def test_a_structured_answer_looping_on_whitespace_is_streamed_and_stopped_at_the_bound(server):
    url, script = server
    loop = [_chunk('{"reason"')] + [_chunk("\t") for _ in range(2000)] + [_chunk(finish="length")]
    script.default = ("sse", loop)
    resp = _generate(OpenAIModel(_settings(url, whitespace_run_limit=16, max_tokens=8192)),
                     GenerationRequest("t", 1, MSGS, response_format=SCHEMA))
    sent = script.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert resp.finish_reason == "whitespace_run" and resp.cut
    assert resp.text == '{"reason"' + "\t" * 17  # read up to the 17th tab, then closed
    assert resp.raw["whitespace_run"]["limit"] == 16 and resp.usage["completion_tokens"] == 18
    assert resp.max_tokens == 8192


def test_a_streamed_answer_that_ends_by_itself_keeps_usage_reasoning_and_finish_reason(server):
    url, script = server
    script.default = ("sse", [_chunk(reasoning="look "), _chunk(reasoning="first"), _chunk('{"a":'),
                              _chunk(" 1}", finish="stop"),
                              _chunk(usage={"prompt_tokens": 9, "completion_tokens": 6, "total_tokens": 15,
                                            "completion_tokens_details": {"reasoning_tokens": 2}})])
    resp = _generate(OpenAIModel(_settings(url)), GenerationRequest("t", 1, MSGS, response_format=SCHEMA))
    assert (resp.text, resp.reasoning, resp.finish_reason) == ('{"a": 1}', "look first", "stop")
    assert resp.usage == {"prompt_tokens": 9, "completion_tokens": 6, "reasoning_tokens": 2} and not resp.cut


def test_a_server_that_ignores_stream_is_read_as_a_whole_completion(server):
    url, script = server
    script.default = ("ok", '{"a": 1}')
    resp = _generate(OpenAIModel(_settings(url)), GenerationRequest("t", 1, MSGS, response_format=SCHEMA))
    assert script.requests[0]["stream"] is True and resp.text == '{"a": 1}' and resp.finish_reason == "stop"


def test_without_a_schema_or_a_bound_the_answer_is_read_whole(server):
    url, script = server
    _generate(OpenAIModel(_settings(url)))
    _generate(OpenAIModel(_settings(url, whitespace_run_limit=None)), GenerationRequest("t", 1, MSGS, response_format=SCHEMA))
    assert [request.get("stream") for request in script.requests] == [None, None]


def test_a_cut_answer_is_named_with_its_reasoning_apart_and_never_cached(server, tmp_path):
    url, script = server
    body = _completion("", "m")
    body["choices"][0] = {"index": 0, "finish_reason": "length",
                          "message": {"role": "assistant", "content": None, "reasoning": "thinking..."}}
    body["usage"] = {"prompt_tokens": 11, "completion_tokens": 64, "total_tokens": 75,
                     "completion_tokens_details": {"reasoning_tokens": 64}}
    script.default = ("completion", body)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    settings = _settings(url, max_tokens=64, cache=True)
    first = _generate(OpenAIModel(settings, cache=cache))
    second = _generate(OpenAIModel(settings, cache=cache))
    assert script.calls == 2 and not second.cached  # a cut answer is never replayed
    assert first.cut and first.cut_in_reasoning and first.reasoning == "thinking..."
    assert first.cut_record() == {"finish_reason": "length", "in": "reasoning", "completion_tokens": 64,
                                  "reasoning_tokens": 64, "answer_tokens": 0, "max_tokens": 64}


def test_a_reasoning_budget_is_sent_as_vllms_thinking_budget_on_top_of_the_answer_cap(server):
    url, script = server
    model = OpenAIModel(_settings(url, max_tokens=8192, reasoning_budget_tokens=4096))
    assert model.max_output_tokens == 8192 + 4096  # what a request keeps free in the context
    _generate(model)
    sent = script.requests[0]
    assert sent["max_tokens"] == 8192 + 4096 and sent["thinking_token_budget"] == 4096
