"""Local stand-ins for the hosted chat APIs the shipped configs call, each enforcing its provider's documented rules.

A stand-in is a real HTTP server on 127.0.0.1 that refuses what its provider documents it refuses, with that
provider's status and error body, and answers what it accepts (a structured request with a minimal instance of
its schema, where the provider honours the schema). Each rule cites the page it follows; a rule the page does not
spell out word for word (an error text) is marked as the stand-in's own wording. Every request is kept
(`requests`: path, headers, body), so a test can count them and read what was sent.

Tests point a shipped config at a stand-in by swapping the scheme and host of its `base_url` for the stand-in's
and keeping the path: the path is part of what a stand-in checks.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlparse

KEY = "sk-test-key"  # the only key a stand-in accepts

Reply = tuple[int, Any]  # (HTTP status, JSON body)


def schema_instance(schema: dict[str, Any]) -> Any:
    """A minimal value the JSON schema admits (what a provider that honours the schema returns)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return schema_instance(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        required = schema.get("required", list(properties))
        return {name: schema_instance(properties.get(name, {})) for name in required}
    if kind == "array":
        return [schema_instance(schema.get("items", {})) for _ in range(int(schema.get("minItems", 0)))]
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "null":
        return None
    return "ok"


def chat_completion(text: str, model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-standin", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}}


def structured_text(body: dict[str, Any]) -> str:
    """The answer of a server that honours `response_format`: an instance of the schema, or a JSON object."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return json.dumps(schema_instance(response_format["json_schema"]["schema"]))
    if response_format.get("type") == "json_object":
        return json.dumps({"ok": True})
    return "OK"


def _images(messages: list[dict[str, Any]]) -> list[str]:
    return [str((part.get("image_url") or {}).get("url", "")) for message in messages
            if isinstance(message.get("content"), list) for part in message["content"]
            if part.get("type") == "image_url"]


def _bearer(headers: dict[str, str]) -> str | None:
    value = headers.get("authorization", "")
    return value[len("Bearer "):] if value.startswith("Bearer ") else None


class Rules:
    """One provider's rules: `check` refuses (status, body) or returns None; `answer` is the 200 body."""

    name = "rules"
    chat_path = "/v1/chat/completions"

    def check(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply | None:
        raise NotImplementedError

    def answer(self, path: str, body: dict[str, Any]) -> Any:
        return chat_completion(structured_text(body), str(body.get("model")))

    def not_found(self, path: str) -> Reply:
        return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}


class OpenAIRules(Rules):
    """OpenAI's Chat Completions API.

    - https://platform.openai.com/docs/api-reference/chat/create: `max_tokens` is deprecated in favour of
      `max_completion_tokens` and is not compatible with o-series models; response_format json_schema needs a
      `name` and a `schema`.
    - https://platform.openai.com/docs/guides/reasoning: reasoning models (GPT-5 family, o-series) accept only the
      default temperature and top_p (1). The refusals' exact bodies (HTTP 400, `unsupported_parameter`,
      `unsupported_value`) are the API's, as public reports quote them.
    - https://platform.openai.com/docs/guides/error-codes: a wrong key is HTTP 401 `invalid_api_key`.
    """

    name = "openai"

    @staticmethod
    def _error(message: str, param: str | None, code: str, status: int = 400) -> Reply:
        return status, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}

    def check(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply | None:
        if path != self.chat_path:
            return self.not_found(path)
        if _bearer(headers) != KEY:
            return self._error("Incorrect API key provided: sk-wr***. You can find your API key at "
                               "https://platform.openai.com/account/api-keys.", None, "invalid_api_key", 401)
        model = str(body.get("model"))
        if model.startswith(("gpt-5", "o1", "o3", "o4")):
            if "max_tokens" in body:
                return self._error("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                   "'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
            for key in ("temperature", "top_p"):
                if key in body and body[key] != 1:
                    return self._error(f"Unsupported value: '{key}' does not support {body[key]} with this model. "
                                       "Only the default (1) value is supported.", key, "unsupported_value")
        response_format = body.get("response_format") or {}
        if response_format.get("type") == "json_schema":
            schema = response_format.get("json_schema") or {}
            if not schema.get("name") or not isinstance(schema.get("schema"), dict):
                return self._error("Missing required parameter: 'response_format.json_schema.name'.",
                                   "response_format.json_schema.name", "missing_required_parameter")
        return None


class AnthropicRules(Rules):
    """Anthropic: its OpenAI-compatibility layer and its Messages API.

    - https://platform.claude.com/docs/en/api/openai-sdk: `max_tokens` and `max_completion_tokens` fully supported;
      temperature between 0 and 1 (values above are capped at 1); `n` must be exactly 1; `response_format` is
      ignored. So a structured request through the layer is answered in prose here: the layer gives no JSON.
    - https://platform.claude.com/docs/en/api/messages: `x-api-key` and `anthropic-version` headers, required
      `max_tokens`, roles `user` and `assistant` only (the system prompt is the top-level `system`), image blocks
      from base64 data (jpeg, png, gif, webp) or a URL; a field the API does not define is refused.
    - https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use: `tool_choice`
      {"type": "tool", "name": ...} forces that tool; the answer is a `tool_use` block whose `input` is the tool's
      input, `stop_reason` "tool_use".
    - https://platform.claude.com/docs/en/about-claude/models/whats-new-claude-4-7: Claude Opus 4.7 removed
      temperature, top_p and top_k; HTTP 400 "`temperature` is deprecated for this model." (as public reports quote).
    - https://platform.claude.com/docs/en/api/errors: error bodies {"type": "error", "error": {"type", "message"}};
      401 authentication_error, 400 invalid_request_error.
    """

    name = "anthropic"
    messages_path = "/v1/messages"
    MESSAGE_FIELDS = frozenset({"model", "max_tokens", "messages", "system", "tools", "tool_choice", "temperature",
                                "top_p", "top_k", "stop_sequences", "metadata", "stream", "thinking", "service_tier"})
    MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})

    @staticmethod
    def _error(kind: str, message: str, status: int = 400) -> Reply:
        return status, {"type": "error", "error": {"type": kind, "message": message}}

    def _sampling(self, body: dict[str, Any]) -> Reply | None:
        if str(body.get("model")).startswith("claude-opus-4-7"):
            for key in ("temperature", "top_p", "top_k"):
                if key in body:
                    return self._error("invalid_request_error", f"`{key}` is deprecated for this model.")
        return None

    def check(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply | None:
        if path == self.chat_path:
            if KEY not in (_bearer(headers), headers.get("x-api-key")):
                return self._error("authentication_error", "invalid x-api-key", 401)
            if body.get("n", 1) != 1:
                return self._error("invalid_request_error", "n: must be exactly 1")
            return self._sampling(body)
        if path != self.messages_path:
            return self.not_found(path)
        if headers.get("x-api-key") != KEY:
            return self._error("authentication_error", "invalid x-api-key", 401)
        if not headers.get("anthropic-version"):
            return self._error("invalid_request_error", "anthropic-version: header is required")
        extra = sorted(set(body) - self.MESSAGE_FIELDS)
        if extra:
            return self._error("invalid_request_error", f"{extra[0]}: Extra inputs are not permitted")
        if not isinstance(body.get("max_tokens"), int):
            return self._error("invalid_request_error", "max_tokens: Field required")
        for index, message in enumerate(body.get("messages") or []):
            if message.get("role") not in ("user", "assistant"):
                return self._error("invalid_request_error", f"messages.{index}.role: Input should be 'user' or "
                                   "'assistant'")
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                source = block.get("source") or {}
                if block.get("type") == "image" and source.get("type") == "base64" and \
                        source.get("media_type") not in self.MEDIA_TYPES:
                    return self._error("invalid_request_error", f"messages.{index}: image media_type "
                                       f"{source.get('media_type')!r} is not supported")
                if block.get("type") not in ("text", "image", "tool_use", "tool_result"):
                    return self._error("invalid_request_error", f"messages.{index}: unknown block type "
                                       f"{block.get('type')!r}")
        tools = {tool.get("name"): tool for tool in body.get("tools") or []}
        choice = body.get("tool_choice") or {}
        if choice.get("type") == "tool" and choice.get("name") not in tools:
            return self._error("invalid_request_error", f"tool_choice: tool {choice.get('name')!r} is not defined")
        for tool in tools.values():
            if (tool.get("input_schema") or {}).get("type") != "object":
                return self._error("invalid_request_error", "tools.0.input_schema.type: Input should be 'object'")
        return self._sampling(body)

    def answer(self, path: str, body: dict[str, Any]) -> Any:
        if path == self.chat_path:  # response_format is ignored: the layer answers in prose
            return chat_completion("Sure! Everything looks fine to me.", str(body.get("model")))
        choice = body.get("tool_choice") or {}
        tools = {tool["name"]: tool for tool in body.get("tools") or []}
        usage = {"input_tokens": 21, "output_tokens": 5}
        if choice.get("type") == "tool":
            tool = tools[choice["name"]]
            return {"id": "msg_standin", "type": "message", "role": "assistant", "model": body["model"],
                    "content": [{"type": "tool_use", "id": "toolu_standin", "name": tool["name"],
                                 "input": schema_instance(tool["input_schema"])}],
                    "stop_reason": "tool_use", "usage": usage}
        return {"id": "msg_standin", "type": "message", "role": "assistant", "model": body["model"],
                "content": [{"type": "text", "text": "OK"}], "stop_reason": "end_turn", "usage": usage}


class GeminiRules(Rules):
    """The Gemini API's OpenAI-compatible endpoint.

    - https://ai.google.dev/gemini-api/docs/openai: base URL .../v1beta/openai/, the key as a Bearer token.
    - https://ai.google.dev/api/compatibility: the fields of ChatCompletionsRequest (maxCompletionTokens and
      maxTokens, temperature, topP, responseFormat with a JSON schema, ...); a field it does not define is refused,
      HTTP 400 INVALID_ARGUMENT "Invalid JSON payload received. Unknown name ..." in a one-element list, as public
      reports quote it.
    - https://ai.google.dev/gemini-api/docs/troubleshooting: an invalid key is HTTP 400 INVALID_ARGUMENT
      (reason API_KEY_INVALID).
    """

    name = "gemini"
    chat_path = "/v1beta/openai/chat/completions"
    FIELDS = frozenset({"model", "messages", "stream", "stream_options", "tools", "tool_choice", "reasoning_effort",
                        "modalities", "n", "stop", "max_completion_tokens", "max_tokens", "temperature", "top_p",
                        "response_format", "audio", "seed", "presence_penalty", "frequency_penalty", "extra_body",
                        "parallel_tool_calls", "logprobs", "top_logprobs"})

    @staticmethod
    def _error(message: str, reason: str = "badRequest") -> Reply:
        return 400, [{"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT",
                                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]}}]

    def check(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply | None:
        if path != self.chat_path:
            return self.not_found(path)
        if _bearer(headers) != KEY:
            return self._error("API key not valid. Please pass a valid API key.", "API_KEY_INVALID")
        unknown = sorted(set(body) - self.FIELDS)
        if unknown:
            return self._error(f'Invalid JSON payload received. Unknown name "{unknown[0]}": Cannot find field.')
        temperature = body.get("temperature")
        if temperature is not None and not 0 <= float(temperature) <= 2:
            return self._error(f"temperature must be within [0.0, 2.0], got {temperature}")
        return None


class DashScopeRules(Rules):
    """Alibaba Cloud Model Studio's OpenAI-compatible mode (DashScope).

    - https://www.alibabacloud.com/help/en/model-studio/compatibility-of-openai-with-dashscope: base URL
      .../compatible-mode/v1, the key as a Bearer token; temperature in [0, 2).
    - https://www.alibabacloud.com/en/notice/model_studio_notice_of_changes_to_certain_model_fields_724: the output
      cap is `max_completion_tokens`; `max_tokens` is deprecated (the stand-in refuses it: the transition period
      ended before May 30, 2026; the error text is the stand-in's own).
    - https://www.alibabacloud.com/help/en/model-studio/json-mode: JSON Object mode needs the word "json" in the
      messages (its error text quoted); JSON Schema mode only for the qwen3-max, qwen-plus and qwen-flash series
      (refused for others here; that text is the stand-in's own).
    - https://www.alibabacloud.com/help/en/model-studio/error-code: error bodies {"error": {"message", "type",
      "param", "code"}}; a wrong key is HTTP 401 invalid_api_key.
    """

    name = "dashscope"
    chat_path = "/compatible-mode/v1/chat/completions"
    SCHEMA_MODELS = ("qwen3-max", "qwen-plus", "qwen-flash")

    @staticmethod
    def _error(message: str, code: str = "invalid_parameter_error", status: int = 400) -> Reply:
        return status, {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code},
                        "request_id": "standin"}

    def check(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply | None:
        if path != self.chat_path:
            return self.not_found(path)
        if _bearer(headers) != KEY:
            return self._error("Incorrect API key provided. ", "invalid_api_key", 401)
        if "max_tokens" in body:
            return self._error("max_tokens is deprecated: use max_completion_tokens")
        temperature = body.get("temperature")
        if temperature is not None and not 0 <= float(temperature) < 2:
            return self._error("<400> InternalError.Algo.InvalidParameter: Range of temperature should be [0.0, 2.0)")
        kind = (body.get("response_format") or {}).get("type")
        if kind == "json_object" and "json" not in json.dumps(body.get("messages")).lower():
            return self._error("'messages' must contain the word 'json' in some form, to use 'response_format' of "
                               "type 'json_object'.")
        if kind == "json_schema" and not str(body.get("model")).startswith(self.SCHEMA_MODELS):
            return self._error(f"response_format type json_schema is not supported by {body.get('model')}")
        return None


class ZaiRules(Rules):
    """Z.ai's chat API.

    - https://docs.z.ai/api-reference/llm/chat-completion: base URL https://api.z.ai/api/paas/v4/, `max_tokens`,
      temperature in [0.0, 1.0], response_format types `text` and `json_object`.
    - https://docs.z.ai/api-reference/api-code: HTTP 400 for a parameter error, 401 for a failed authentication;
      bodies {"error": {"code", "message"}} with the business codes 1000 (authentication failed) and 1214 (an
      illegal parameter; message wording the stand-in's own English rendering).
    """

    name = "zai"
    chat_path = "/api/paas/v4/chat/completions"

    @staticmethod
    def _error(code: str, message: str, status: int = 400) -> Reply:
        return status, {"error": {"code": code, "message": message}}

    def check(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply | None:
        if path != self.chat_path:
            return self.not_found(path)
        if _bearer(headers) != KEY:
            return self._error("1000", "Authentication Failed", 401)
        temperature = body.get("temperature")
        if temperature is not None and not 0 <= float(temperature) <= 1:
            return self._error("1214", "Invalid temperature parameter. Please check the documentation.")
        kind = (body.get("response_format") or {}).get("type")
        if kind is not None and kind not in ("text", "json_object"):
            return self._error("1214", "Invalid response_format parameter. Please check the documentation.")
        return None


class OpenAICompatibleRules(Rules):
    """A vLLM server (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html): `max_tokens` or
    `max_completion_tokens`, any temperature >= 0, response_format json_schema decoded (honoured); with --api-key,
    a wrong key is HTTP 401 {"error": "Unauthorized"}. `key=None`: a server started without one."""

    name = "openai-compatible"

    def __init__(self, *, key: str | None = None, chat_path: str = "/v1/chat/completions") -> None:
        self.key = key
        self.chat_path = chat_path

    def check(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply | None:
        if path != self.chat_path:
            return self.not_found(path)
        if self.key is not None and _bearer(headers) != self.key:
            return 401, {"error": "Unauthorized"}
        temperature = body.get("temperature")
        if temperature is not None and float(temperature) < 0:
            return 400, {"object": "error", "message": "temperature must be non-negative", "type": "BadRequestError",
                         "code": 400}
        return None


RULES: dict[str, Callable[[], Rules]] = {"openai": OpenAIRules, "anthropic": AnthropicRules, "gemini": GeminiRules,
                                         "dashscope": DashScopeRules, "zai": ZaiRules,
                                         "openai-compatible": OpenAICompatibleRules}


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class ProviderStandIn:
    """A provider's rules served on 127.0.0.1 (a context manager). `reply(body) -> text` overrides the text of
    accepted chat completions (a generator's answer)."""

    rules: Rules
    reply: Callable[[dict[str, Any]], str] | None = None
    requests: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                path = urlparse(self.path).path
                with outer.lock:
                    outer.requests.append(Seen(path, headers, body))
                refused = outer.rules.check(path, headers, body)
                if refused is not None:
                    status, payload = refused
                else:
                    status, payload = 200, outer.rules.answer(path, body)
                    if outer.reply is not None and path.endswith("/chat/completions"):
                        payload = chat_completion(outer.reply(body), str(body.get("model")))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ProviderStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def base_url(self, configured: str) -> str:
        """`configured` (a shipped base_url) with this stand-in's scheme and host, its path kept."""
        return self.origin + urlparse(configured).path

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [seen.body for seen in self.requests]


def images_in(body: dict[str, Any]) -> list[str]:
    """The image URLs (OpenAI format) or Anthropic image sources a request body carries."""
    found = _images(body.get("messages") or [])
    for message in body.get("messages") or []:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if block.get("type") == "image":
                found.append(json.dumps(block.get("source")))
    return found
