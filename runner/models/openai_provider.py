"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp, SGLang, ...) as a Model.

What a request carries is its endpoint's dialect (runner/models/dialects.py, `dialect:` in the config): the
output cap's parameter name, the temperature (none, where the model takes only its provider's default), and the
structured-output request the endpoint honours; on Anthropic a JSON schema goes through its Messages API as a
forced tool call (runner/models/anthropic_messages.py). Each request's `sample` (an independent generation of the
same prompt, FlowEval §3.1) is part of its response-cache key.

Retries are ours (tenacity), not the client's, so the policy is explicit and testable: connection
errors (also a connection the server closes without an answer), timeouts, 429, 5xx and a 200 whose
body is no chat completion (a proxy's page, a truncated body) are retried with jittered exponential
backoff; other 4xx are the caller's fault and fail at once. A refusal of the request itself (400, 413, 422: "At most
4 image(s) may be provided in one prompt", a prompt longer than the context) is a RequestRefused carrying the
server's own message, which no caller retries as transient. Whatever remains after the retries becomes a
ProviderError (failure bucket `provider_error`).

Response handling: an answer's `finish_reason` ("length": cut at the output cap), a reasoning model's reasoning
(vLLM's `reasoning`, else `reasoning_content`) and its token count (`completion_tokens_details.reasoning_tokens`)
are kept apart from the answer. A structured request to an endpoint whose decoding may pad JSON with whitespace
(`whitespace_run_limit`) is streamed and stopped once a run of whitespace outside strings passes the limit
(runner/models/whitespace_guard.py), so a decoder loop costs a few dozen tokens instead of the whole cap. A cut
answer is never cached (a re-ask must not replay it).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ConfigDict, Field, model_validator
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from runner.models import anthropic_messages
from runner.models.base import ChatAnswer, GenerationRequest, ModelBase, ModelResponse, ProviderError, RequestLimits
from runner.models.cache import ResponseCache
from runner.models.dialects import DialectName, check_settings, dialect_of, sampling_parameters, structured_kind
from runner.models.fitting import RequestRefused
from runner.models.pricing import ModelPrice
from runner.models.time_limit import generation_time_limit_s
from runner.models.whitespace_guard import DEFAULT_WHITESPACE_RUN_LIMIT, WhitespaceRun
from runner.errors import ConfigError

__all__ = ["OpenAIModel", "OpenAIModelSettings"]

_NO_KEY = "EMPTY"  # what local OpenAI-compatible servers accept when they need no key
_OUTPUT_CAPS = ("max_tokens", "max_completion_tokens")  # an agent's output cap, under either of OpenAI's names
T = TypeVar("T")
_REFUSALS = (400, 413, 422)  # the request itself is refused: too many images, too long, malformed


class GenerationSettings(BaseModel):
    """How a chat model is asked and retried; shared by every OpenAI-compatible provider."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    name: str
    api_key_env: str | None = None  # name of the env var holding the key; None: local server, no key
    temperature: float = 0.0
    max_tokens: int = Field(default=4096, ge=1)  # the answer's output cap (a reasoning budget comes on top)
    # Tokens a reasoning model may think before it answers, on top of `max_tokens`: sent as vLLM's
    # `thinking_token_budget` (the server ends the reasoning there), with max_tokens + budget as the request's cap.
    # null: no budget (the server's cap covers reasoning and answer together).
    reasoning_budget_tokens: int | None = Field(default=None, ge=0)
    # A structured answer is streamed and stopped after this many whitespace characters in a row outside JSON
    # strings (a decoder loop; runner/models/whitespace_guard.py). null: read whole (a server whose decoding
    # writes compact JSON: provider vllm sets it so for the servers it starts).
    whitespace_run_limit: int | None = Field(default=DEFAULT_WHITESPACE_RUN_LIMIT, ge=1)
    top_p: float | None = None
    seed: int | None = None
    vision: bool = False
    # One HTTP attempt; null: fitted to max_tokens (runner/models/time_limit.py), so a slow but healthy server's
    # longest answer is not cut and retried into a provider error.
    timeout_s: float | None = Field(default=None, gt=0)
    max_retries: int = Field(default=4, ge=0)
    retry_base_s: float = Field(default=0.5, ge=0)  # first backoff; doubles per attempt, plus jitter
    retry_max_s: float = Field(default=20.0, ge=0)  # cap on a single backoff (and on Retry-After)
    cache: bool = True
    extra_body: dict[str, Any] = Field(default_factory=dict)
    # What the server accepts (images per prompt, context, image size): requests are fitted to it before they
    # are sent (runner/models/fitting.py). provider vllm fills it from its `server` block.
    limits: RequestLimits = Field(default_factory=RequestLimits)

    @property
    def output_cap(self) -> int:
        """The request's `max_tokens`: the answer's cap plus the reasoning budget."""
        return self.max_tokens + (self.reasoning_budget_tokens or 0)

    @property
    def attempt_timeout_s(self) -> float:
        """Seconds one attempt may take: `timeout_s`, else the rule on the output cap."""
        return self.timeout_s if self.timeout_s is not None else generation_time_limit_s(self.output_cap)


class OpenAIModelSettings(GenerationSettings):
    provider: str = "openai"
    model: str  # the served model id sent in requests
    base_url: str
    # The endpoint family whose documented API the requests follow (runner/models/dialects.py).
    dialect: DialectName = "openai-compatible"
    # The only temperature the model accepts, its provider's default (GPT-5 family: 1; Claude Opus 4.7: none may be
    # set): requests then carry no temperature (nor top_p), and a configured `temperature` that differs is
    # recorded as a deviation (lineage.json, summary). null: `temperature` is sent.
    fixed_temperature: float | None = Field(default=None, ge=0)
    # Identity of the endpoint in the response cache, where base_url is not stable (a server on a free port).
    cache_endpoint: str | None = None
    price: ModelPrice | None = None  # per million input/output tokens: the cost bound of run.plan=true

    @model_validator(mode="after")
    def _dialect_rules(self) -> OpenAIModelSettings:
        check_settings(self)
        return self


class _MalformedResponse(Exception):
    """A 200 whose body is no chat completion: no model response was obtained (EvoGenUI-Bench §4.3,
    e = 0), and like a 5xx it is the server's transient trouble, so it is retried."""


def _is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, _MalformedResponse):
        return True
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        # 408 is a timeout reported by the server; 429 rate limit; 5xx server trouble.
        return exc.status_code in (408, 429) or exc.status_code >= 500
    return False


def _retry_after_s(exc: BaseException | None) -> float | None:
    if not isinstance(exc, openai.APIStatusError):
        return None
    value = exc.response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class OpenAIModel(ModelBase):
    """Implements the Model protocol for one OpenAI-compatible endpoint."""

    def __init__(
        self,
        settings: OpenAIModelSettings,
        *,
        cache: ResponseCache | None = None,
        http_client: Any = None,  # an httpx.AsyncClient, for custom transports
    ) -> None:
        self.settings = settings
        self.name = settings.name
        self._cache = cache if settings.cache else None
        self._client = openai.AsyncOpenAI(
            api_key=self._api_key(settings),
            base_url=settings.base_url,
            timeout=settings.attempt_timeout_s,
            max_retries=0,  # our tenacity policy is the only retry layer
            http_client=http_client,
        )
        self._backoff = wait_exponential_jitter(
            multiplier=settings.retry_base_s, max=settings.retry_max_s, jitter=settings.retry_base_s
        )

    @staticmethod
    def _api_key(settings: OpenAIModelSettings) -> str:
        if settings.api_key_env is None:
            return _NO_KEY
        key = os.environ.get(settings.api_key_env)
        if not key:
            raise ConfigError(
                f"model {settings.name!r}: environment variable {settings.api_key_env!r} (api_key_env) is not set"
            )
        return key

    @property
    def request_limits(self) -> RequestLimits:
        return self.settings.limits

    @property
    def max_output_tokens(self) -> int:
        return self.settings.output_cap

    def _parameters(self, request: GenerationRequest) -> dict[str, Any]:
        """The request's parameters as the dialect names them; a structured request as the endpoint honours it."""
        params = sampling_parameters(self.settings)
        if request.response_format is None:
            return params
        requested = _response_format(request.response_format)
        kind = structured_kind(self.settings, requested["type"])
        if kind == "json_schema" or kind == "anthropic_tool":  # the latter leaves by the Messages API (_send)
            params["response_format"] = requested
        elif kind == "json_object":
            params["response_format"] = {"type": "json_object"}
        return params  # "prompt": the prompt alone asks for the JSON

    def _wait(self, state: RetryCallState) -> float:
        delay = self._backoff(state)
        exc = state.outcome.exception() if state.outcome else None
        hint = _retry_after_s(exc)
        if hint is not None:
            delay = max(delay, min(hint, self.settings.retry_max_s))
        return delay

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        started = time.perf_counter()
        params = self._parameters(request)
        key = None
        if self._cache is not None:
            key = self._cache.key(
                endpoint=self.settings.cache_endpoint or self.settings.base_url,
                model=self.settings.model,
                messages=request.messages,
                # `sample`: independent generations of one prompt get answers of their own (FlowEval §3.1)
                parameters={**params, "extra_body": self._extra_body() or {}, "sample": request.sample},
            )
            hit = await asyncio.to_thread(self._cache.get, key)
            if hit is not None:
                hit.latency_s = time.perf_counter() - started
                return hit

        response = await self._call_with_retries(request, params)
        response.latency_s = time.perf_counter() - started
        if self._cache is not None and key is not None and response.text.strip() and not response.cut:
            await asyncio.to_thread(self._cache.put, key, response, model=self.settings.model)
        return response

    @property
    def answers_tool_calls(self) -> bool:
        return True

    async def chat(self, body: dict[str, Any], *, task_id: str, turn: int) -> ChatAnswer:
        """An agent's request with the config's model, sampling settings and output cap (the smaller of the
        agent's and the config's), by the dialect's parameter names; retried like `generate`, never cached."""
        started = time.perf_counter()
        request = {key: value for key, value in body.items() if key not in _OUTPUT_CAPS}
        params = sampling_parameters(self.settings)
        token_parameter = dialect_of(self.settings.dialect).token_parameter
        asked = [int(body[key]) for key in _OUTPUT_CAPS if isinstance(body.get(key), int) and body[key] > 0]
        params[token_parameter] = min([int(params[token_parameter]), *asked])
        request = {**self.settings.extra_body, **request, **params, "model": self.settings.model}

        async def send() -> dict[str, Any]:
            try:
                completion = await self._client.post("/chat/completions", cast_to=object, body=request)
            except ValueError as exc:  # a 200 whose JSON body does not decode
                raise _MalformedResponse(f"malformed response body: {exc}") from exc
            return _chat_completion(completion)

        completion = await self._with_retries(send)
        usage = completion.get("usage") or {}
        return ChatAnswer(request=request, completion=completion, latency_s=time.perf_counter() - started,
                          usage={"prompt_tokens": int(usage.get("prompt_tokens") or 0),
                                 "completion_tokens": int(usage.get("completion_tokens") or 0)})

    async def _call_with_retries(self, request: GenerationRequest, params: dict[str, Any]) -> ModelResponse:
        response = await self._with_retries(lambda: self._send(request, params))
        response.max_tokens = self.settings.output_cap
        return response

    async def _with_retries(self, send: Callable[[], Awaitable[T]]) -> T:
        """`send()` under the retry policy (module docstring); what remains is a ProviderError or RequestRefused."""
        attempts = self.settings.max_retries + 1
        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=self._wait,
            retry=retry_if_exception(_is_retryable),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    response = await send()
        except openai.APIStatusError as exc:
            n = attempt.retry_state.attempt_number
            if exc.status_code in _REFUSALS:
                server_message = _server_message(exc)
                raise RequestRefused(
                    f"{self.name}: HTTP {exc.status_code} from {self.settings.base_url}: the server refused the "
                    f"request (not retried): {server_message}",
                    server_message=server_message, status=exc.status_code) from exc
            raise ProviderError(
                f"{self.name}: HTTP {exc.status_code} from {self.settings.base_url} after {n} attempt(s): {exc.message}"
            ) from exc
        except openai.APIError as exc:  # connection errors, timeouts, undecodable bodies
            n = attempt.retry_state.attempt_number
            raise ProviderError(f"{self.name}: {type(exc).__name__} after {n} attempt(s): {exc}") from exc
        except _MalformedResponse as exc:
            n = attempt.retry_state.attempt_number
            raise ProviderError(f"{self.name}: {exc} after {n} attempt(s)") from exc
        return response

    async def _send(self, request: GenerationRequest, params: dict[str, Any]) -> ModelResponse:
        """One HTTP attempt: a chat completion, or (dialect anthropic, a JSON schema) a Messages API tool call."""
        if structured_kind(self.settings, (params.get("response_format") or {}).get("type")) == "anthropic_tool":
            return await self._send_tool_call(request, params)
        try:
            if self._streams(request):
                return await self._streamed(request, params)
            completion = await self._client.chat.completions.create(
                model=self.settings.model,
                messages=request.messages,
                extra_body=self._extra_body(),
                **params,
            )
        except ValueError as exc:  # a 200 whose JSON body does not decode
            raise _MalformedResponse(f"malformed response body: {exc}") from exc
        return self._to_response(completion)

    async def _send_tool_call(self, request: GenerationRequest, params: dict[str, Any]) -> ModelResponse:
        """The schema as a forced tool of Anthropic's Messages API (runner/models/anthropic_messages.py)."""
        response_format = params["response_format"]
        try:
            body = anthropic_messages.messages_request(
                model=self.settings.model, messages=request.messages, response_format=response_format,
                parameters={k: v for k, v in params.items() if k != "response_format"})
        except ValueError as exc:  # nothing the server could answer: refused here, never sent
            raise RequestRefused(f"{self.name}: {exc}", server_message=str(exc)) from exc
        headers = {"x-api-key": self._client.api_key, "anthropic-version": anthropic_messages.ANTHROPIC_VERSION,
                   "Authorization": openai.Omit()}
        try:
            message = await self._client.post(anthropic_messages.MESSAGES_PATH, cast_to=object, body=body,
                                              options={"headers": headers})
            schema = (response_format.get("json_schema") or {}).get("schema") or {}
            text, usage, finish, message_id = anthropic_messages.completion_from_message(
                message, tool=anthropic_messages.tool_name(response_format),
                wrapped=anthropic_messages.input_schema(schema) is not schema)
        except ValueError as exc:  # an undecodable body, or no message in it
            raise _MalformedResponse(f"malformed response body: {exc}") from exc
        return ModelResponse(text=text, usage=usage,
                             raw={"id": message_id, "model": self.settings.model, "finish_reason": finish})

    def _extra_body(self) -> dict[str, Any] | None:
        body = dict(self.settings.extra_body)
        if self.settings.reasoning_budget_tokens is not None:
            body["thinking_token_budget"] = self.settings.reasoning_budget_tokens  # vLLM's sampling parameter
        return body or None

    def _streams(self, request: GenerationRequest) -> bool:
        """A structured request to an endpoint whose decoding may loop on whitespace is read as a stream."""
        return request.response_format is not None and self.settings.whitespace_run_limit is not None

    async def _streamed(self, request: GenerationRequest, params: dict[str, Any]) -> ModelResponse:
        """The answer read chunk by chunk, stopped when a run of whitespace outside strings passes the limit."""
        limit = self.settings.whitespace_run_limit
        assert limit is not None
        guard = WhitespaceRun(limit)
        text: list[str] = []
        reasoning: list[str] = []
        finish_reason: str | None = None
        usage: Any = None
        meta: dict[str, Any] = {"id": None, "model": None}
        chunks = answered = 0
        answer = await self._client.chat.completions.with_raw_response.create(
            model=self.settings.model, messages=request.messages, extra_body=self._extra_body(),
            stream=True, stream_options={"include_usage": True}, **params)
        if "text/event-stream" not in answer.http_response.headers.get("content-type", ""):
            # a server that ignores `stream` answers with the whole completion: read as one
            body = json.loads(await answer.http_response.aread())
            if not isinstance(body, dict):
                raise _MalformedResponse(f"malformed response (a JSON {type(body).__name__}, no chat completion)")
            return self._to_response(ChatCompletion.construct(**body))
        stream = answer.parse()  # the legacy raw response parses synchronously: an AsyncStream
        try:
            async with asyncio.timeout(self.settings.attempt_timeout_s):
                async for chunk in stream:
                    chunks += 1
                    meta["id"] = meta["id"] or getattr(chunk, "id", None)
                    meta["model"] = meta["model"] or getattr(chunk, "model", None)
                    usage = getattr(chunk, "usage", None) or usage
                    for choice in (getattr(chunk, "choices", None) or [])[:1]:
                        answered += 1
                        delta = getattr(choice, "delta", None)
                        thought = _reasoning_of(delta)
                        if thought:
                            reasoning.append(thought)
                        content = getattr(delta, "content", None)
                        if isinstance(content, str) and content:
                            text.append(content)
                            if guard.feed(content):
                                finish_reason = "whitespace_run"
                                break
                        finish_reason = getattr(choice, "finish_reason", None) or finish_reason
                    if finish_reason == "whitespace_run":
                        break
        except TimeoutError as exc:
            raise _MalformedResponse(f"no complete streamed answer within {self.settings.attempt_timeout_s:.0f} s") from exc
        except httpx.HTTPError as exc:  # the stream broke off mid-answer
            raise _MalformedResponse(f"the streamed answer broke off: {type(exc).__name__}: {exc}") from exc
        finally:
            await stream.close()
        if not answered:
            raise _MalformedResponse(f"malformed response (a stream of {chunks} chunk(s) with no choices)")
        counts = _usage(usage)
        raw: dict[str, Any] = {**meta, "finish_reason": finish_reason, "streamed": True}
        if finish_reason == "whitespace_run":
            # the server's own count never came (the stream was closed): content chunks read, one token or more each
            counts["completion_tokens"] = max(counts.get("completion_tokens", 0), len(text))
            raw["whitespace_run"] = {"limit": limit, "run": guard.run, "chunks_read": len(text),
                                     "usage": "estimated from the chunks read (the stream was stopped)"}
        return ModelResponse(text="".join(text), usage=counts, raw=raw, finish_reason=finish_reason,
                             reasoning="".join(reasoning))

    def _to_response(self, completion: Any) -> ModelResponse:
        choices = getattr(completion, "choices", None)
        if not choices:
            raise _MalformedResponse(f"malformed response (no choices): {str(completion)[:200]!r}")
        choice = choices[0]
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        if content is not None and not isinstance(content, str):
            raise _MalformedResponse(f"malformed response (content is {type(content).__name__})")
        finish_reason = getattr(choice, "finish_reason", None)
        return ModelResponse(
            text=content or "",  # an empty answer is the model's, not the provider's: invalid_output later
            usage=_usage(getattr(completion, "usage", None)),
            raw={
                "id": getattr(completion, "id", None),
                "model": getattr(completion, "model", None),
                "finish_reason": finish_reason,
            },
            finish_reason=finish_reason,
            reasoning=_reasoning_of(message),
        )

    async def aclose(self) -> None:
        await self._client.close()


def _chat_completion(body: Any) -> dict[str, Any]:
    """`body` when it is a chat completion with a message (retried as malformed otherwise)."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
            or not isinstance(choices[0].get("message"), dict):
        raise _MalformedResponse(f"malformed response (no message in its choices): {str(body)[:200]!r}")
    return body


def _reasoning_of(message: Any) -> str:
    """A reasoning model's thinking, returned apart from its answer: vLLM's `reasoning` (0.32), else the older
    `reasoning_content` (vLLM before, DeepSeek's API, SGLang)."""
    for name in ("reasoning", "reasoning_content"):
        value = getattr(message, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def _usage(usage: Any) -> dict[str, int]:
    """Prompt and completion tokens; `reasoning_tokens` (part of the completion) where the server counts them."""
    counts = {
        "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
    }
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = getattr(details, "reasoning_tokens", None) if details is not None else None
    if reasoning:
        counts["reasoning_tokens"] = int(reasoning)
    return counts


def _server_message(exc: openai.APIStatusError) -> str:
    """The server's own words: vLLM and OpenAI put them in the error body's `message` (Anthropic under `error`,
    Gemini's OpenAI mode in a one-element list)."""
    body = exc.body
    if isinstance(body, list) and body and isinstance(body[0], dict):
        body = body[0]
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return body["message"]
    return str(exc.message)


def _response_format(value: dict[str, Any]) -> dict[str, Any]:
    """Pass a full OpenAI `response_format` through; wrap a bare JSON schema as `json_schema`."""
    if value.get("type") in ("json_schema", "json_object", "text"):
        return value
    return {"type": "json_schema", "json_schema": {"name": "output", "schema": value}}
