"""The model proxy: an agent's only way out of its sandbox, and the one place its model calls are made.

Each slot gets its own session, listening on a Unix socket of its own (in a folder only the runner can enter);
the socket file is all of the proxy an agent's sandbox holds, so the session knows its slot by where the request
came in, never by what the request says. A session

- routes by path to the API dialect the agent speaks (runner/agents/dialects/: OpenAI chat completions here, each
  further API a module beside it) and asks the run's model in chat completions, through the run's model role
  (`Upstream`: the engine's caller of the generator, its concurrency limit and call timeout applied, and the
  model's key, provider dialect and retries; the agent's `model`, sampling settings and key are not used);
- enforces the slot's budget (runner/agents/budget.py): a call past its steps, tokens or wall clock is refused
  (HTTP 400 in the dialect's error shape, kind `budget_exhausted`), each answer's output is capped at the tokens
  left, and a call still running when the wall clock ends is cut;
- records every call, refused ones included (request, answer, tokens, the model's seconds and the whole call's),
  through the slot's recorder (the evidence folder's agent_calls.jsonl); the model role's own wrapper makes each
  answered call an MLflow trace (runner/tracking/call_traces.py).

It asks upstream for whole answers: where an agent asks for a stream, the answer is sent as its chunks
(`completion_chunks`) through the dialect's stream translator, which would serve a streamed upstream unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from runner.agents.budget import BudgetMeter
from runner.agents.dialects import find_listing, find_route
from runner.agents.dialects.base import ChatRequest, Dialect, DialectError, SseEvent, completion_chunks
from runner.agents.http11 import HttpRequest, HttpResponse, UnixHttpServer, json_response
from runner.models.base import ChatAnswer, ProviderError
from runner.models.fitting import RequestRefused
from runner.sandbox.scratch import scratch_dir

__all__ = ["CallRecorder", "ModelProxy", "ProxySession", "Upstream", "shortened_images"]

# The run's generator, asked in chat completions (raises ProviderError, RequestRefused, TimeoutError).
Upstream = Callable[[dict[str, Any]], Awaitable[ChatAnswer]]
OUTPUT_CAPS = ("max_tokens", "max_completion_tokens")
IMAGE_NOTE_BYTES = 4096  # data URLs longer than this are recorded by type, size and hash (the evidence keeps images)
_DATA_URL = re.compile(r"^data:([\w/+.-]+);base64,", re.S)


class CallRecorder(Protocol):
    """Where a session writes each call's record (the slot's evidence folder)."""

    def record_call(self, entry: dict[str, Any]) -> None: ...


def shortened_images(value: Any) -> Any:
    """`value` with every long base64 data URL replaced by its type, size and sha256."""
    if isinstance(value, str):
        match = _DATA_URL.match(value)
        if match and len(value) > IMAGE_NOTE_BYTES:
            digest = hashlib.sha256(value.encode()).hexdigest()[:16]
            return f"[{match.group(1)} image, {len(value) - match.end()} base64 chars, sha256 {digest}]"
        return value
    if isinstance(value, list):
        return [shortened_images(item) for item in value]
    if isinstance(value, dict):
        return {key: shortened_images(item) for key, item in value.items()}
    return value


class ProxySession:
    """One slot's door to the model (module docstring). `stopped` is set when the agent is refused a call for its
    budget or when the model fails for good; whoever runs the agent ends it then."""

    def __init__(self, *, socket_path: Path, upstream: Upstream, meter: BudgetMeter, model_name: str,
                 recorder: CallRecorder, on_request: Callable[[int], None] | None = None) -> None:
        self.socket_path = socket_path
        self.upstream = upstream
        self.meter = meter
        self.model_name = model_name
        self.recorder = recorder
        self.on_request = on_request  # told the index of each call as it arrives (a workspace snapshot)
        self.stopped = asyncio.Event()
        self.failure: str | None = None  # the model's failure that ended the session
        self.calls = 0  # calls received, answered or not
        # Requests no dialect serves (a CLI's side call: telemetry, an update check, a route it tried first):
        # answered 404/405 and listed in agent.json, so what an agent tried to reach is visible, not only its calls.
        self.unrouted: list[dict[str, Any]] = []
        self.model_seconds = 0.0  # time upstream (the model's own), over the answered calls
        self._messages: list[Any] = []  # the last call's messages as sent upstream (records hold what is new)
        self._tools: Any = None
        self._lock = asyncio.Lock()  # one call at a time: an agent's steps are sequential, its budget too

    async def handle(self, request: HttpRequest) -> HttpResponse:
        if request.method == "GET":
            dialect = find_listing(request.target)
            if dialect is None:
                return self._unrouted(request, 404, f"no route for GET {request.target}", "not_found")
            return json_response(200, dialect.listing(self.model_name))
        if request.method != "POST":
            return self._unrouted(request, 405, f"method {request.method} is not served", "invalid_request")
        found = find_route(request.target)
        if found is None:
            return self._unrouted(request, 404, f"no route for POST {request.target}", "not_found")
        dialect, route = found
        async with self._lock:
            return await self._call(dialect, request, route)

    def _unrouted(self, request: HttpRequest, status: int, message: str, kind: str) -> HttpResponse:
        self.unrouted.append({"method": request.method, "target": request.target[:500], "status": status,
                              "at": round(time.time(), 3)})
        return json_response(status, _openai_error(message, kind))

    async def _call(self, dialect: Dialect, request: HttpRequest, route: Any) -> HttpResponse:
        index = self.calls
        self.calls += 1
        started, wall_started = time.perf_counter(), time.time()
        entry: dict[str, Any] = {"call": index, "dialect": dialect.name, "path": route.path,
                                 "started_at": round(wall_started, 3)}

        def finish(status: int, response: HttpResponse, **fields: Any) -> HttpResponse:
            entry.update(status=status, seconds=round(time.perf_counter() - started, 4), budget=self.meter.summary(),
                         **fields)
            self.recorder.record_call(entry)
            return response

        def refuse(status: int, message: str, kind: str) -> HttpResponse:
            return finish(status, json_response(status, dialect.error(status, message, kind=kind)), error=message,
                          error_kind=kind)

        try:
            body = request.json()
            if not isinstance(body, dict):
                raise DialectError("the request body must be a JSON object")
            chat = dialect.chat_request(body, route=route)
        except (ValueError, DialectError) as error:  # JSONDecodeError is a ValueError
            return refuse(400, f"invalid request: {error}", "invalid_request")
        entry.update(stream=chat.stream, notes=list(chat.notes), request=self._request_record(body, chat))
        if self.on_request is not None:
            self.on_request(index)
        spent = self.meter.refusal()
        if spent is not None:
            self.stopped.set()
            return refuse(400, f"the agent's budget is spent ({self.meter.describe(spent)}); no more model calls",
                          "budget_exhausted")
        outbound = _capped(chat.body, self.meter.tokens_left)
        try:
            answer = await asyncio.wait_for(self.upstream(outbound), timeout=max(self.meter.seconds_left, 0.001))
        except TimeoutError:
            if self.meter.seconds_left <= 0:  # the wall clock ended during the call: cut, like any later one
                self.meter.exhausted_by = self.meter.exhausted_by or "wall_clock"
                self.stopped.set()
                return refuse(400, f"the agent's budget is spent ({self.meter.describe('wall_clock')}); the call "
                                   "was cut", "budget_exhausted")
            return self._failed(refuse, "the model did not answer within the run's call time limit")
        except RequestRefused as error:  # the request itself (a prompt over the context): the agent may adapt
            return refuse(400, error.server_message or str(error), "refused")
        except ProviderError as error:
            return self._failed(refuse, str(error))
        self.meter.spend(answer.usage)
        self.model_seconds += answer.latency_s
        completion = {**answer.completion, "model": self.model_name}
        entry.update(usage=dict(answer.usage), model_seconds=round(answer.latency_s, 4),
                     sent={key: value for key, value in answer.request.items() if key not in ("messages", "tools")},
                     response=shortened_images(completion))
        if chat.stream:
            events = _sse(dialect.stream(request=body), completion_chunks(completion))
            return finish(200, HttpResponse(200, content_type="text/event-stream", stream=events))
        return finish(200, json_response(200, dialect.response(completion, request=body)))

    def _failed(self, refuse: Callable[[int, str, str], HttpResponse], message: str) -> HttpResponse:
        """The model gave no answer after the run's retries: the session ends (the slot's provider_error)."""
        self.failure = message
        self.stopped.set()
        return refuse(502, message, "upstream_error")

    def _request_record(self, body: dict[str, Any], chat: ChatRequest) -> dict[str, Any]:
        """What the call asked, without repeating the conversation: the messages past those the previous call
        sent (`messages_from`: how many it shares), the tools only when they changed, long images by hash."""
        messages = list(chat.body.get("messages") or [])
        shared = 0
        while shared < min(len(messages), len(self._messages)) and messages[shared] == self._messages[shared]:
            shared += 1
        record: dict[str, Any] = {key: value for key, value in chat.body.items() if key not in ("messages", "tools")}
        record.update(messages_from=shared, messages=shortened_images(messages[shared:]))
        tools = chat.body.get("tools")
        if tools != self._tools:
            record["tools"] = tools
        self._messages, self._tools = messages, tools
        record["agent_fields"] = sorted(body)  # the agent's own request, in its API: which fields it sent
        return record


def _capped(body: dict[str, Any], tokens_left: int) -> dict[str, Any]:
    """The chat request with its output cap at most the tokens the budget has left (the model's own cap applies
    upstream too), under OpenAI's `max_tokens`."""
    asked = [int(body[key]) for key in OUTPUT_CAPS if isinstance(body.get(key), int) and body[key] > 0]
    capped = {key: value for key, value in body.items() if key not in OUTPUT_CAPS}
    capped["max_tokens"] = min([tokens_left, *asked])
    return capped


async def _sse(translator: Any, chunks: Iterable[dict[str, Any]]) -> AsyncIterator[bytes]:
    events: list[SseEvent] = []
    for chunk in chunks:
        events += translator.feed(chunk)
    events += translator.finish()
    for event in events:
        yield event.encode()


def _openai_error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


class ModelProxy:
    """The run's proxy: a private folder of sockets, one listening session per slot while its agent works."""

    def __init__(self) -> None:
        self.folder = scratch_dir("proxy")  # mode 0700: the runner's alone
        self._count = 0

    @contextlib.asynccontextmanager
    async def session(self, *, upstream: Upstream, meter: BudgetMeter, model_name: str, recorder: CallRecorder,
                      on_request: Callable[[int], None] | None = None) -> AsyncIterator[ProxySession]:
        self._count += 1
        path = self.folder / f"{self._count}.sock"  # short: a socket path has at most 107 bytes
        session = ProxySession(socket_path=path, upstream=upstream, meter=meter, model_name=model_name,
                               recorder=recorder, on_request=on_request)
        server = UnixHttpServer(path, session.handle)
        await server.start()
        try:
            yield session
        finally:
            await server.close()

    async def aclose(self) -> None:
        await asyncio.to_thread(shutil.rmtree, self.folder, True)
