"""Gemini's own API, generateContent: what Gemini CLI speaks (`GOOGLE_GEMINI_BASE_URL` points it at the proxy).

The model is named in the path (`/v1beta/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse` for
a stream); the proxy answers with the run's model whatever it names. `systemInstruction` becomes the system
message; each content of role `user` keeps its text and inline images, and each `functionResponse` part becomes a
tool message (its `response` object as JSON, or its `output` text where that is all it holds); each content of
role `model` keeps its text (thought parts are the model's own reasoning and are not passed back) and each
`functionCall` part becomes a tool call. Calls that carry no `id` get one by position, and a response without an
`id` answers the earliest unanswered call of its name, as the API pairs them. Function declarations become chat
functions: `parametersJsonSchema` is JSON Schema already; `parameters` is the API's OpenAPI-style Schema (upper
case type names, `nullable`), rewritten as JSON Schema. Other tools (Google Search, code execution, URL context)
are not offered: the sandbox has no network to run them, and the call's record names each.
`toolConfig.functionCallingConfig.mode` maps to chat's tool_choice (ANY is `required`, or the one allowed
function); `generationConfig.maxOutputTokens` is the output cap, `stopSequences` is `stop`, and a JSON response
schema is chat's `response_format`.

Answers: a GenerateContentResponse with one candidate whose parts hold the text and one `functionCall` per tool
call (with the call's id), its `finishReason` (STOP, MAX_TOKENS, SAFETY) and `usageMetadata`. Streamed (the API's
`alt=sse`): one response per text delta, then a last one with the function calls, the finish reason and the
usage. Errors are `{"error": {"code", "message", "status"}}`.

References: https://ai.google.dev/api/generate-content (request, response, streaming),
https://ai.google.dev/api/caching#Content (contents and parts), https://ai.google.dev/api/caching#Tool
(function declarations, tool config), https://ai.google.dev/api/caching#Schema (the Schema object).
"""

from __future__ import annotations

import json
from typing import Any

from runner.agents.dialects.base import (
    ChatRequest, DialectBase, DialectError, ErrorKind, RouteMatch, SseEvent, gather_tool_call_deltas, listed_tools,
)

__all__ = ["DIALECT", "GenerateContent"]

UNDERSTOOD = ("contents", "systemInstruction", "system_instruction", "tools", "toolConfig", "tool_config",
              "generationConfig", "generation_config")
RUN_OWNED = ("model", "safetySettings", "safety_settings", "labels")
_RUN_OWNED_GENERATION = ("temperature", "topP", "topK", "seed", "thinkingConfig", "presencePenalty",
                         "frequencyPenalty", "responseLogprobs", "logprobs", "candidateCount", "mediaResolution")
_FINISH = {"stop": "STOP", "tool_calls": "STOP", "function_call": "STOP", "length": "MAX_TOKENS",
           "content_filter": "SAFETY"}
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
# Schema fields with no JSON Schema meaning: an ordering hint for the API's own decoder, `nullable` (rewritten
# into the type), an example.
_SCHEMA_DROPPED = ("propertyOrdering", "nullable", "example")


def json_schema(schema: Any) -> Any:
    """The API's Schema object (OpenAPI 3.0 subset: `"type": "OBJECT"`, `nullable`) as JSON Schema."""
    if not isinstance(schema, dict):
        return schema
    converted: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_DROPPED:
            continue
        if key == "type" and isinstance(value, str):
            converted["type"] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            converted["properties"] = {name: json_schema(inner) for name, inner in value.items()}
        elif key == "items":
            converted["items"] = json_schema(value)
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            converted[key] = [json_schema(inner) for inner in value]
        elif key == "format" and value == "enum":
            continue  # the API marks string enums with format "enum"; the enum itself says so in JSON Schema
        else:
            converted[key] = value
    if schema.get("nullable") and isinstance(converted.get("type"), str):
        converted["type"] = [converted["type"], "null"]
    return converted


def _parts(content: dict[str, Any], where: str) -> list[dict[str, Any]]:
    parts = content.get("parts")
    if not isinstance(parts, list):
        raise DialectError(f"{where}.parts must be a list of parts")
    for index, part in enumerate(parts):
        if not isinstance(part, dict):
            raise DialectError(f"{where}.parts[{index}] must be an object")
    return parts


def _chat_content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(part["type"] == "text" for part in parts):
        return "\n\n".join(part["text"] for part in parts)
    return parts


def _media(part: dict[str, Any], where: str, notes: list[str]) -> dict[str, Any] | None:
    inline = part.get("inlineData") or part.get("inline_data")
    if isinstance(inline, dict):
        mime = str(inline.get("mimeType") or inline.get("mime_type") or "")
        if mime.startswith("image/"):
            return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{inline.get('data', '')}"}}
        notes.append(f"{where}: inline data of type {mime!r} is not passed to the model")
        return None
    stored = part.get("fileData") or part.get("file_data")
    if isinstance(stored, dict):
        mime = str(stored.get("mimeType") or stored.get("mime_type") or "")
        uri = stored.get("fileUri") or stored.get("file_uri")
        if mime.startswith("image/") and isinstance(uri, str) and uri.startswith(("http://", "https://", "data:")):
            return {"type": "image_url", "image_url": {"url": uri}}
        notes.append(f"{where}: file data {uri!r} is not passed to the model")
        return None
    return None


def _response_text(response: Any) -> str:
    if isinstance(response, dict) and set(response) == {"output"} and isinstance(response["output"], str):
        return response["output"]
    return json.dumps(response, ensure_ascii=False)


class _Calls:
    """Ids for function calls that carry none, and which call each function response answers."""

    def __init__(self) -> None:
        self.count = 0
        self.open: list[tuple[str, str]] = []  # (name, id) not yet answered, in order

    def call(self, name: str, call_id: Any) -> str:
        chosen = call_id if isinstance(call_id, str) and call_id else f"call_{self.count}"
        self.count += 1
        self.open.append((name, chosen))
        return chosen

    def answer(self, name: str, call_id: Any, where: str) -> str:
        if isinstance(call_id, str) and call_id:
            self.open = [pending for pending in self.open if pending[1] != call_id]
            return call_id
        for position, (pending_name, pending_id) in enumerate(self.open):
            if pending_name == name:
                del self.open[position]
                return pending_id
        raise DialectError(f"{where}: a functionResponse for {name!r} answers no earlier functionCall of that name")


def _messages(body: dict[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    chat: list[dict[str, Any]] = []
    system = body.get("systemInstruction", body.get("system_instruction"))
    if isinstance(system, str) and system:
        chat.append({"role": "system", "content": system})
    elif isinstance(system, dict):
        text = "\n\n".join(str(part.get("text", "")) for part in _parts(system, "systemInstruction") if "text" in part)
        if text:
            chat.append({"role": "system", "content": text})
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise DialectError("'contents' must be a non-empty list of contents")
    calls = _Calls()
    for index, content in enumerate(contents):
        where = f"contents[{index}]"
        if not isinstance(content, dict):
            raise DialectError(f"{where} must be an object")
        role = content.get("role", "user")
        parts = _parts(content, where)
        if role == "model":
            texts: list[str] = []
            tool_calls: list[dict[str, Any]] = []
            for position, part in enumerate(parts):
                call = part.get("functionCall") or part.get("function_call")
                if isinstance(call, dict):
                    name = str(call.get("name", ""))
                    arguments = json.dumps(call.get("args") or {}, ensure_ascii=False)
                    tool_calls.append({"id": calls.call(name, call.get("id")), "type": "function",
                                       "function": {"name": name, "arguments": arguments}})
                elif "text" in part and not part.get("thought"):
                    texts.append(str(part["text"]))
                elif "text" not in part:
                    notes.append(f"{where}.parts[{position}]: a part with {sorted(part)} is not passed to the model")
            message: dict[str, Any] = {"role": "assistant",
                                       "content": "".join(texts) if texts or not tool_calls else None}
            if tool_calls:
                message["tool_calls"] = tool_calls
            chat.append(message)
        elif role in ("user", "function", "tool"):
            answers: list[dict[str, Any]] = []
            user: list[dict[str, Any]] = []
            for position, part in enumerate(parts):
                at = f"{where}.parts[{position}]"
                response = part.get("functionResponse") or part.get("function_response")
                if isinstance(response, dict):
                    name = str(response.get("name", ""))
                    answers.append({"role": "tool", "tool_call_id": calls.answer(name, response.get("id"), at),
                                    "content": _response_text(response.get("response"))})
                elif "text" in part:
                    if not part.get("thought"):
                        user.append({"type": "text", "text": str(part["text"])})
                else:
                    media = _media(part, at, notes)
                    if media is not None:
                        user.append(media)
                    elif not any(key in part for key in ("inlineData", "inline_data", "fileData", "file_data")):
                        notes.append(f"{at}: a part with {sorted(part)} is not passed to the model")
            chat += answers + ([{"role": "user", "content": _chat_content(user)}] if user else [])
        else:
            raise DialectError(f"{where}.role = {role!r}: expected user or model")
    return chat


def _tools(body: dict[str, Any], notes: list[str]) -> list[dict[str, Any]]:
    chat: list[dict[str, Any]] = []
    for index, tool in listed_tools(body):
        declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
        for other in sorted(set(tool) - {"functionDeclarations", "function_declarations"}):
            notes.append(f"tools[{index}].{other}: not offered to the model (no network to run it)")
        for position, declaration in enumerate(declarations or []):
            name = declaration.get("name") if isinstance(declaration, dict) else None
            if not isinstance(name, str) or not name:
                raise DialectError(f"tools[{index}].functionDeclarations[{position}].name must be a non-empty string")
            if "parametersJsonSchema" in declaration:
                parameters = declaration["parametersJsonSchema"]
            elif "parameters" in declaration:
                parameters = json_schema(declaration["parameters"])
            else:
                parameters = {"type": "object", "properties": {}}
            function: dict[str, Any] = {"name": name, "parameters": parameters}
            if isinstance(declaration.get("description"), str):
                function["description"] = declaration["description"]
            chat.append({"type": "function", "function": function})
    return chat


def _tool_choice(body: dict[str, Any], offered: set[str]) -> Any:
    config = body.get("toolConfig", body.get("tool_config")) or {}
    calling = config.get("functionCallingConfig", config.get("function_calling_config")) or {}
    mode = str(calling.get("mode") or "AUTO").upper()
    if mode == "NONE":
        return "none"
    if mode == "ANY":
        allowed = calling.get("allowedFunctionNames", calling.get("allowed_function_names")) or []
        if len(allowed) == 1:
            if allowed[0] not in offered:
                raise DialectError(f"allowedFunctionNames names {allowed[0]!r}, which is not among the functions "
                                   "declared")
            return {"type": "function", "function": {"name": allowed[0]}}
        return "required"
    return "auto"


def _generation(body: dict[str, Any], chat: dict[str, Any], notes: list[str]) -> None:
    config = body.get("generationConfig", body.get("generation_config")) or {}
    if not isinstance(config, dict):
        raise DialectError("generationConfig must be an object")
    if config.get("candidateCount") not in (None, 1):
        raise DialectError(f"generationConfig.candidateCount = {config['candidateCount']!r}: the proxy answers one "
                           "candidate per request")
    if isinstance(config.get("maxOutputTokens"), int):
        chat["max_tokens"] = config["maxOutputTokens"]
    if isinstance(config.get("stopSequences"), list) and config["stopSequences"]:
        chat["stop"] = [str(stop) for stop in config["stopSequences"]]
    if config.get("responseMimeType") == "application/json":
        schema = config.get("responseJsonSchema")
        if schema is None and config.get("responseSchema") is not None:
            schema = json_schema(config["responseSchema"])
        chat["response_format"] = ({"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
                                   if isinstance(schema, dict) else {"type": "json_object"})
    understood = {"maxOutputTokens", "stopSequences", "responseMimeType", "responseSchema", "responseJsonSchema"}
    for key in sorted(set(config) - understood - set(_RUN_OWNED_GENERATION)):
        notes.append(f"generationConfig.{key}: not passed to the model")


def _usage(usage: Any) -> dict[str, int]:
    usage = usage if isinstance(usage, dict) else {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    metadata = {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                "totalTokenCount": int(usage.get("total_tokens") or prompt + completion)}
    cached = int(((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0)
    if cached:
        metadata["cachedContentTokenCount"] = cached
    return metadata


def _call_part(call: dict[str, Any], position: int, base_id: str) -> dict[str, Any]:
    function = call.get("function") or {}
    try:
        args = json.loads(function.get("arguments") or "{}")
    except json.JSONDecodeError:
        args = {}
    return {"functionCall": {"id": str(call.get("id") or f"call_{base_id}_{position}"),
                             "name": str(function.get("name") or ""), "args": args if isinstance(args, dict) else {}}}


def _model(request: dict[str, Any], fallback: Any) -> str:
    model = request.get("model")
    return model if isinstance(model, str) and model else str(fallback or "")


class _CandidateStream:
    """Gemini's `alt=sse` stream for one answer: a response per text delta, then one with the function calls, the
    finish reason and the usage."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.request = request
        self.response_id = "proxy"
        self.model = _model(request, "")
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason: Any = None
        self.usage: dict[str, Any] | None = None

    def _response(self, parts: list[dict[str, Any]], **candidate: Any) -> SseEvent:
        return SseEvent.of({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0, **candidate}],
                            "modelVersion": self.model, "responseId": self.response_id})

    def feed(self, chunk: dict[str, Any]) -> list[SseEvent]:
        self.response_id = str(chunk.get("id") or self.response_id)
        self.model = self.model or str(chunk.get("model") or "")
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        events: list[SseEvent] = []
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                events.append(self._response([{"text": content}]))
            gather_tool_call_deltas(self.calls, delta)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return events

    def finish(self) -> list[SseEvent]:
        parts = [_call_part({"id": slot["id"], "function": {"name": slot["name"], "arguments": slot["arguments"]}},
                            position, self.response_id)
                 for position, slot in enumerate(self.calls[index] for index in sorted(self.calls))]
        last = self._response(parts or [{"text": ""}], finishReason=_FINISH.get(str(self.finish_reason), "STOP"))
        payload = json.loads(last.data)
        payload["usageMetadata"] = _usage(self.usage)
        return [SseEvent.of(payload)]


class GenerateContent(DialectBase):
    name = "gemini"
    routes = ("/v1beta/models/{model}:generateContent", "/v1beta/models/{model}:streamGenerateContent",
              "/v1/models/{model}:generateContent", "/v1/models/{model}:streamGenerateContent")

    def chat_request(self, body: dict[str, Any], *, route: RouteMatch) -> ChatRequest:
        notes: list[str] = []
        chat: dict[str, Any] = {"messages": _messages(body, notes)}
        tools = _tools(body, notes)
        if tools:
            chat["tools"] = tools
            chat["tool_choice"] = _tool_choice(body, {tool["function"]["name"] for tool in tools})
        _generation(body, chat, notes)
        if body.get("cachedContent") or body.get("cached_content"):
            raise DialectError("cachedContent needs contents stored server-side, which the proxy does not keep")
        left_out = sorted(set(body) - set(UNDERSTOOD) - set(RUN_OWNED))
        notes += [f"{key}: not passed to the model" for key in left_out]
        return ChatRequest(body=chat, stream=route.path.endswith(":streamGenerateContent"), notes=tuple(notes))

    def response(self, completion: dict[str, Any], *, request: dict[str, Any]) -> dict[str, Any]:
        base_id = str(completion.get("id") or "proxy")
        choices = completion.get("choices") or [{}]
        choice = choices[0] if isinstance(choices[0], dict) else {}
        message = choice.get("message") or {}
        parts: list[dict[str, Any]] = []
        if isinstance(message.get("content"), str) and message["content"]:
            parts.append({"text": message["content"]})
        parts += [_call_part(call, position, base_id) for position, call in enumerate(message.get("tool_calls") or [])]
        return {"candidates": [{"content": {"role": "model", "parts": parts or [{"text": ""}]},
                                "finishReason": _FINISH.get(str(choice.get("finish_reason")), "STOP"), "index": 0}],
                "usageMetadata": _usage(completion.get("usage")),
                "modelVersion": _model(request, completion.get("model")), "responseId": base_id}

    def stream(self, *, request: dict[str, Any]) -> _CandidateStream:
        return _CandidateStream(request)

    def error(self, status: int, message: str, *, kind: ErrorKind) -> dict[str, Any]:
        return {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}


DIALECT = GenerateContent()
