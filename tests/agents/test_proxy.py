"""The model proxy over its Unix socket, asked by OpenAI's own client and by raw HTTP: routing, the run's model in
the answer, streams, budgets (steps, tokens, wall clock), the model's failures and refusals, and the records.

The upstream here is a function standing in for the run's model role (its answers are what a chat-completions
server returns); the role itself (runner/models/openai_provider.py's `chat`) is tested against a real HTTP server
in tests/models/test_openai_provider.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from typing import Any

import httpx
import openai
import pytest

from runner.agents.budget import AgentBudget, BudgetMeter
from runner.agents.proxy import ModelProxy
from runner.models.base import ChatAnswer, ProviderError
from runner.models.fitting import RequestRefused

TOOLS = [{"type": "function", "function": {"name": "list_files", "parameters": {"type": "object", "properties": {}}}}]


class Records:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def record_call(self, entry: dict[str, Any]) -> None:
        self.calls.append(json.loads(json.dumps(entry)))  # as it will be stored


def completion(content: str = "ok", calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "served-name",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 10, "total_tokens": 40}}


class Upstream:
    """Answers every request with `answer` (or raises `error`), after `delay_s`; keeps what it was sent."""

    def __init__(self, answer: dict[str, Any] | None = None, *, error: Exception | None = None,
                 delay_s: float = 0.0) -> None:
        self.answer = answer or completion()
        self.error = error
        self.delay_s = delay_s
        self.sent: list[dict[str, Any]] = []

    async def __call__(self, body: dict[str, Any]) -> ChatAnswer:
        self.sent.append(body)
        await asyncio.sleep(self.delay_s)
        if self.error is not None:
            raise self.error
        return ChatAnswer(request={**body, "model": "served-name"}, completion=self.answer, latency_s=self.delay_s,
                          usage={"prompt_tokens": 30, "completion_tokens": 10})


async def _session(upstream: Upstream, budget: AgentBudget | None = None, **options: Any):
    proxy = ModelProxy()
    records = Records()
    meter = BudgetMeter(budget or AgentBudget())
    return proxy, records, meter, proxy.session(upstream=upstream, meter=meter, model_name="qwen3-coder",
                                                recorder=records, **options)


def _client(session: Any) -> tuple[httpx.AsyncClient, openai.AsyncOpenAI]:
    http = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=str(session.socket_path)), timeout=30)
    return http, openai.AsyncOpenAI(api_key="x", base_url="http://proxy/v1", http_client=http, max_retries=0)


def test_a_chat_request_reaches_the_run_model_and_comes_back_named_for_it() -> None:
    async def scenario() -> None:
        upstream = Upstream(completion("hi", [{"id": "t1", "type": "function",
                                               "function": {"name": "list_files", "arguments": "{}"}}]))
        proxy, records, meter, opened = await _session(upstream)
        async with opened as session:
            mode = os.stat(session.socket_path).st_mode
            assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o666
            assert stat.S_IMODE(os.stat(proxy.folder).st_mode) == 0o700  # the runner's alone
            http, client = _client(session)
            async with http:
                answer = await client.chat.completions.create(
                    model="anything", messages=[{"role": "user", "content": "go"}], tools=TOOLS, temperature=1.5,
                    max_tokens=77)
                listing = (await http.get("http://proxy/v1/models")).json()
        assert not session.socket_path.exists()
        await proxy.aclose()
        assert answer.model == "anything" and answer.choices[0].message.tool_calls[0].function.name == "list_files"
        assert listing["data"][0]["id"] == "qwen3-coder"
        sent = upstream.sent[0]
        assert sent["max_tokens"] == 77 and "temperature" not in sent and sent["tools"] == TOOLS  # the run's settings
        assert meter.steps == 1 and meter.tokens == 40 and session.calls == 1
        (record,) = records.calls
        assert record["status"] == 200 and record["usage"] == {"prompt_tokens": 30, "completion_tokens": 10}
        assert record["request"]["messages"] == [{"role": "user", "content": "go"}]
        assert record["request"]["tools"] == TOOLS and record["response"]["model"] == "qwen3-coder"
        assert record["budget"]["steps"] == 1 and record["dialect"] == "openai-chat"

    asyncio.run(scenario())


def test_a_streamed_answer_is_sent_as_its_chunks_then_done() -> None:
    async def scenario() -> None:
        proxy, records, _, opened = await _session(Upstream(completion("streamed text")))
        async with opened as session:
            http, client = _client(session)
            async with http:
                stream = await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "go"}], stream=True,
                    stream_options={"include_usage": True})
                chunks = [chunk async for chunk in stream]
        await proxy.aclose()
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "streamed text"
        assert chunks[-1].usage.total_tokens == 40
        assert records.calls[0]["stream"] is True

    asyncio.run(scenario())


def test_the_step_budget_refuses_the_next_call_and_stops_the_session() -> None:
    async def scenario() -> None:
        proxy, records, meter, opened = await _session(Upstream(), AgentBudget(steps=2))
        async with opened as session:
            http, client = _client(session)
            async with http:
                for _ in range(2):
                    await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
                assert not session.stopped.is_set()
                with pytest.raises(openai.BadRequestError) as refused:
                    await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
        await proxy.aclose()
        assert refused.value.body["type"] == "budget_exhausted" and "steps: 2 of 2" in refused.value.message
        assert session.stopped.is_set() and meter.exhausted_by == "steps" and meter.steps == 2
        assert [r["status"] for r in records.calls] == [200, 200, 400]
        assert records.calls[-1]["error_kind"] == "budget_exhausted"

    asyncio.run(scenario())


def test_the_token_budget_caps_each_answer_then_refuses() -> None:
    async def scenario() -> None:
        upstream = Upstream()
        proxy, _, meter, opened = await _session(upstream, AgentBudget(tokens=70))
        async with opened as session:
            http, client = _client(session)
            async with http:
                await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}],
                                                     max_tokens=500)
                await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "b"}])
                with pytest.raises(openai.BadRequestError, match="tokens: 80 of 70"):
                    await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "c"}])
        await proxy.aclose()
        assert [sent["max_tokens"] for sent in upstream.sent] == [70, 30]  # at most what the budget has left
        assert meter.exhausted_by == "tokens"

    asyncio.run(scenario())


def test_the_wall_clock_cuts_a_call_in_flight() -> None:
    async def scenario() -> None:
        proxy, records, meter, opened = await _session(Upstream(delay_s=5), AgentBudget(wall_clock_s=0.5))
        async with opened as session:
            http, client = _client(session)
            async with http:
                with pytest.raises(openai.BadRequestError, match="the call was cut"):
                    await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
        await proxy.aclose()
        assert meter.exhausted_by == "wall_clock" and session.stopped.is_set() and meter.steps == 0
        assert records.calls[0]["seconds"] < 3

    asyncio.run(scenario())


def test_the_models_failure_ends_the_session_and_a_refusal_does_not() -> None:
    async def scenario() -> None:
        refusing = Upstream(error=RequestRefused("too long", server_message="prompt is 9000 tokens, over 8192"))
        proxy, records, _, opened = await _session(refusing)
        async with opened as session:
            http, client = _client(session)
            async with http:
                with pytest.raises(openai.BadRequestError, match="over 8192"):
                    await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
        assert not session.stopped.is_set() and session.failure is None
        assert records.calls[0]["error_kind"] == "refused"

        failing = Upstream(error=ProviderError("m: HTTP 503 after 3 attempt(s)"))
        proxy2, records2, _, opened2 = await _session(failing)
        async with opened2 as session2:
            http, client = _client(session2)
            async with http:
                with pytest.raises(openai.InternalServerError) as failed:
                    await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
        await proxy.aclose()
        await proxy2.aclose()
        assert failed.value.status_code == 502 and session2.stopped.is_set()
        assert session2.failure == "m: HTTP 503 after 3 attempt(s)" and records2.calls[0]["error_kind"] == "upstream_error"

    asyncio.run(scenario())


def test_what_is_no_request_of_any_dialect_is_refused_and_recorded() -> None:
    async def scenario() -> None:
        upstream = Upstream()
        proxy, records, meter, opened = await _session(upstream)
        async with opened as session:
            async with httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=str(session.socket_path))) as http:
                not_json = await http.post("http://proxy/v1/chat/completions", content=b"{not json")
                no_messages = await http.post("http://proxy/v1/chat/completions", json={"model": "m"})
                elsewhere = await http.post("http://proxy/v1/embeddings", json={"input": "x"})
                outside = await http.get("http://proxy/etc/passwd")
        await proxy.aclose()
        assert not_json.status_code == 400 and no_messages.status_code == 400
        assert "'messages'" in no_messages.json()["error"]["message"]
        assert elsewhere.status_code == 404 and outside.status_code == 404
        assert upstream.sent == [] and meter.steps == 0
        assert [r["error_kind"] for r in records.calls] == ["invalid_request", "invalid_request"]
        # what no dialect serves is answered, not forwarded, and listed (agent.json's unrouted_requests)
        assert [(r["method"], r["target"], r["status"]) for r in session.unrouted] == [
            ("POST", "/v1/embeddings", 404), ("GET", "/etc/passwd", 404)]

    asyncio.run(scenario())


def test_a_record_holds_only_what_the_conversation_added_and_images_by_hash() -> None:
    async def scenario() -> None:
        proxy, records, _, opened = await _session(Upstream())
        image = "data:image/png;base64," + "A" * 10000
        first = [{"role": "user", "content": "go"}]
        second = [*first, {"role": "assistant", "content": "ok"},
                  {"role": "user", "content": [{"type": "image_url", "image_url": {"url": image}}]}]
        async with opened as session:
            http, client = _client(session)
            async with http:
                await client.chat.completions.create(model="m", messages=first, tools=TOOLS)
                await client.chat.completions.create(model="m", messages=second, tools=TOOLS)
        await proxy.aclose()
        assert records.calls[1]["request"]["messages_from"] == 1
        added = records.calls[1]["request"]["messages"]
        assert added[0] == {"role": "assistant", "content": "ok"}
        assert added[1]["content"][0]["image_url"]["url"].startswith("[image/png image, 10000 base64 chars, sha256 ")
        assert "tools" in records.calls[0]["request"] and "tools" not in records.calls[1]["request"]

    asyncio.run(scenario())
