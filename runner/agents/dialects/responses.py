"""The OpenAI Responses API: what Codex CLI speaks, and the only API it speaks (its `wire_api = "chat"` was removed;
a provider must say `wire_api = "responses"`).

A request's `instructions` and `input` items become chat messages: `message` items by role (`developer` and
`system` as system messages; those before the model's first answer joined with the instructions into one system
prompt, runner/agents/system_prompt.py), `function_call` items as the assistant's tool calls and `function_call_output`
items as tool messages; a `custom` tool (free-form text input, e.g. Codex's `apply_patch` when its model catalog
asks for the free-form kind) is offered as a function of one string argument, `input`, and its calls go back as
`custom_tool_call` items. Reasoning items the agent sends back are left out (a chat model takes no reasoning as
input). Hosted tools (web search, file search, code interpreter, image generation, MCP...) and namespaces of tools
are not offered to the model: the sandbox has no network to run them, and the call's record names each.
`previous_response_id` and `item_reference` need responses stored server-side, which the proxy does not keep: the
agent must send its whole input (Codex does: `store: false`).

Answers: a `response` object whose `output` holds a `message` item with the text and one `function_call` (or
`custom_tool_call`) item per tool call; an answer cut by the output cap is `incomplete` with reason
`max_output_tokens`. Streamed, the events are the API's: `response.created`, `response.in_progress`,
`response.output_item.added`, `response.content_part.added`, `response.output_text.delta`, their `.done`s,
`response.function_call_arguments.delta/.done`, then `response.completed` (or `response.incomplete`) with the
whole response and its usage; every event carries `type` and a `sequence_number`.

References: https://platform.openai.com/docs/api-reference/responses/create (request, input items, tools),
https://platform.openai.com/docs/api-reference/responses/object (the response and its output items),
https://platform.openai.com/docs/api-reference/responses-streaming (the streaming events),
https://platform.openai.com/docs/guides/function-calling#custom-tools (custom tools).
"""

from __future__ import annotations

import json
from typing import Any

from runner.agents.dialects.base import (
    ChatRequest, DialectBase, DialectError, RouteMatch, SseEvent, gather_tool_call_deltas,
)
from runner.agents.system_prompt import leading_system_joined

__all__ = ["DIALECT", "Responses"]

# The run decides these (the proxy sets the model's sampling and identity): accepted without a note.
RUN_OWNED = ("model", "temperature", "top_p", "stream", "store", "metadata", "user", "service_tier",
             "prompt_cache_key", "safety_identifier", "client_metadata", "include", "truncation", "background",
             "top_logprobs", "stream_options", "prompt_cache_retention")
UNDERSTOOD = ("input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "max_output_tokens", "text",
              "reasoning", "previous_response_id", "conversation")
# Tools the API's servers run; the other built-in kinds (local_shell, shell, apply_patch...) have items of their own
# that no chat model answers with, and are left out too.
HOSTED_TOOLS = ("web_search", "web_search_preview", "web_search_2025_08_26", "file_search", "code_interpreter",
                "image_generation", "computer_use_preview", "computer_use", "mcp", "tool_search")
CUSTOM_INPUT = "input"  # a custom tool's one argument, as the chat model sees it


def _text_of_parts(content: Any, *, where: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Chat content parts of a message item's content (a string or a list of input/output parts)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}], []
    if not isinstance(content, list):
        raise DialectError(f"{where}.content must be a string or a list of content parts, not {type(content).__name__}")
    parts: list[dict[str, Any]] = []
    notes: list[str] = []
    for index, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind == "refusal":
            parts.append({"type": "text", "text": str(part.get("refusal", ""))})
        elif kind == "input_image":
            url = part.get("image_url")
            if not isinstance(url, str) or not url:
                raise DialectError(f"{where}.content[{index}]: an input_image needs image_url (a URL or data URL); "
                                   "file_id needs stored files, which the proxy does not keep")
            image: dict[str, Any] = {"url": url}
            if part.get("detail") in ("low", "high", "auto"):
                image["detail"] = part["detail"]
            parts.append({"type": "image_url", "image_url": image})
        else:
            notes.append(f"{where}.content[{index}]: a {kind!r} part is not passed to the model")
    return parts, notes


def _chat_content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Plain text where every part is text (what every chat template takes), else the parts."""
    if all(part["type"] == "text" for part in parts):
        return "\n\n".join(part["text"] for part in parts)
    return parts


def _output_text(output: Any) -> str:
    """A function_call_output's output (a string, or a list of content parts) as a tool message's text."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(str(part.get("text", "")) for part in output
                         if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text"))
    return json.dumps(output, ensure_ascii=False)


class _Messages:
    """Chat messages built item by item: tool calls join the assistant message that precedes them."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.notes: list[str] = []

    def add(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    def tool_call(self, call: dict[str, Any]) -> None:
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "assistant":
            last.setdefault("tool_calls", []).append(call)
        else:
            self.messages.append({"role": "assistant", "content": None, "tool_calls": [call]})


def _input_items(body: dict[str, Any]) -> list[Any]:
    items = body.get("input")
    if isinstance(items, str):
        return [{"type": "message", "role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise DialectError("'input' must be a string or a non-empty list of input items")
    return items


def _call_id(item: dict[str, Any], where: str) -> str:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise DialectError(f"{where}.call_id must be a non-empty string")
    return call_id


def _messages(body: dict[str, Any]) -> _Messages:
    built = _Messages()
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        built.add({"role": "system", "content": instructions})
    reasoning_seen = False
    for index, item in enumerate(_input_items(body)):
        where = f"input[{index}]"
        if not isinstance(item, dict):
            raise DialectError(f"{where} must be an object (an input item)")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise DialectError(f"{where}.role = {role!r}: expected user, assistant, system or developer")
            parts, notes = _text_of_parts(item.get("content", ""), where=where)
            built.notes += notes
            if role == "assistant":
                text = "".join(part["text"] for part in parts if part["type"] == "text")
                built.add({"role": "assistant", "content": text})
            else:
                built.add({"role": "system" if role == "developer" else role, "content": _chat_content(parts)})
        elif kind == "function_call":
            built.tool_call({"id": _call_id(item, where), "type": "function",
                             "function": {"name": str(item.get("name", "")),
                                          "arguments": str(item.get("arguments") or "{}")}})
        elif kind == "custom_tool_call":
            arguments = json.dumps({CUSTOM_INPUT: str(item.get("input", ""))}, ensure_ascii=False)
            built.tool_call({"id": _call_id(item, where), "type": "function",
                             "function": {"name": str(item.get("name", "")), "arguments": arguments}})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            built.add({"role": "tool", "tool_call_id": _call_id(item, where),
                       "content": _output_text(item.get("output"))})
        elif kind == "reasoning":
            reasoning_seen = True
        elif kind == "item_reference":
            raise DialectError(f"{where}: item_reference needs stored responses, which the proxy does not keep; "
                               "send the items themselves")
        else:
            built.notes.append(f"{where}: a {kind!r} item is not passed to the model")
    if reasoning_seen:
        built.notes.append("reasoning items: not passed back to the model (a chat model takes none as input)")
    return built


def _function(name: str, description: Any, parameters: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if isinstance(description, str) and description:
        function["description"] = description
    function["parameters"] = parameters if isinstance(parameters, dict) else {"type": "object", "properties": {}}
    return {"type": "function", "function": function}


def _custom_parameters(tool: dict[str, Any]) -> dict[str, Any]:
    described = "The tool's whole input, as free text."
    tool_format = tool.get("format")
    if isinstance(tool_format, dict) and tool_format.get("type") == "grammar":
        syntax, definition = tool_format.get("syntax", ""), tool_format.get("definition", "")
        described += f" It must match this {syntax} grammar:\n{definition}"
    return {"type": "object", "properties": {CUSTOM_INPUT: {"type": "string", "description": described}},
            "required": [CUSTOM_INPUT]}


def _tools(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise DialectError("'tools' must be a list of tools")
    chat_tools: list[dict[str, Any]] = []
    notes: list[str] = []
    for index, tool in enumerate(tools):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind == "function":
            name = tool.get("name")
            if not isinstance(name, str) or not name:
                raise DialectError(f"tools[{index}].name must be a non-empty string")
            chat_tools.append(_function(name, tool.get("description"), tool.get("parameters")))
        elif kind == "custom":
            name = tool.get("name")
            if not isinstance(name, str) or not name:
                raise DialectError(f"tools[{index}].name must be a non-empty string")
            chat_tools.append(_function(name, tool.get("description"), _custom_parameters(tool)))
        elif kind == "namespace":
            notes.append(f"tools[{index}]: the namespace {tool.get('name')!r} and its tools are not offered to the "
                         "model")
        elif kind in HOSTED_TOOLS:
            notes.append(f"tools[{index}]: the hosted tool {kind!r} is not offered to the model (no network to run it)")
        else:
            notes.append(f"tools[{index}]: a tool of type {kind!r} is not offered to the model")
    return chat_tools, notes


def _tool_choice(choice: Any, offered: set[str]) -> tuple[Any, list[str]]:
    if choice is None or choice in ("auto", "none", "required"):
        return choice, []
    if isinstance(choice, dict) and choice.get("type") in ("function", "custom"):
        name = choice.get("name")
        if name not in offered:
            raise DialectError(f"tool_choice names the tool {name!r}, which is not among the tools offered")
        return {"type": "function", "function": {"name": name}}, []
    return "auto", [f"tool_choice {json.dumps(choice)[:120]}: sent as 'auto'"]


def _response_format(text: Any) -> tuple[dict[str, Any] | None, list[str]]:
    text_format = text.get("format") if isinstance(text, dict) else None
    if not isinstance(text_format, dict) or text_format.get("type") in (None, "text"):
        return None, []
    if text_format.get("type") == "json_object":
        return {"type": "json_object"}, []
    if text_format.get("type") == "json_schema":
        schema = {"name": str(text_format.get("name") or "output"), "schema": text_format.get("schema") or {}}
        if "strict" in text_format:
            schema["strict"] = bool(text_format["strict"])
        return {"type": "json_schema", "json_schema": schema}, []
    return None, [f"text.format {text_format.get('type')!r}: not passed to the model"]


def _custom_names(request: dict[str, Any]) -> set[str]:
    return {str(tool.get("name")) for tool in request.get("tools") or []
            if isinstance(tool, dict) and tool.get("type") == "custom"}


def _usage(usage: Any) -> dict[str, Any]:
    usage = usage if isinstance(usage, dict) else {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    cached = int(((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0)
    reasoning = int(((usage.get("completion_tokens_details") or {}).get("reasoning_tokens")) or 0)
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": int(usage.get("total_tokens") or prompt + completion)}


def _status(finish_reason: Any) -> tuple[str, dict[str, str] | None]:
    if finish_reason == "length":
        return "incomplete", {"reason": "max_output_tokens"}
    if finish_reason == "content_filter":
        return "incomplete", {"reason": "content_filter"}
    return "completed", None


def _call_item(call_id: str, name: str, arguments: str, *, item_id: str, custom: bool) -> dict[str, Any]:
    if custom:
        try:
            parsed = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            parsed = None
        text = parsed.get(CUSTOM_INPUT) if isinstance(parsed, dict) else None
        return {"type": "custom_tool_call", "id": item_id, "status": "completed", "call_id": call_id, "name": name,
                "input": text if isinstance(text, str) else arguments}
    return {"type": "function_call", "id": item_id, "status": "completed", "call_id": call_id, "name": name,
            "arguments": arguments or "{}"}


def _message_item(text: str, *, item_id: str, status: str = "completed") -> dict[str, Any]:
    return {"type": "message", "id": item_id, "status": status, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}] if status == "completed" else []}


def _response_object(request: dict[str, Any], *, response_id: str, created: int, model: str, status: str,
                     output: list[dict[str, Any]], usage: dict[str, Any] | None,
                     incomplete: dict[str, str] | None) -> dict[str, Any]:
    return {
        "id": response_id, "object": "response", "created_at": created, "status": status, "error": None,
        "incomplete_details": incomplete, "instructions": request.get("instructions"), "model": model,
        "output": output, "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "tool_choice": request.get("tool_choice", "auto"), "tools": request.get("tools") or [],
        "max_output_tokens": request.get("max_output_tokens"), "previous_response_id": None,
        "store": False, "text": request.get("text") or {"format": {"type": "text"}}, "usage": usage,
    }


def _model_of(request: dict[str, Any], completion: dict[str, Any]) -> str:
    model = request.get("model")
    return model if isinstance(model, str) and model else str(completion.get("model") or "")


class _ResponseStream:
    """The Responses API's streaming events for one answer: text as it comes, each tool call whole once the
    answer is complete (its arguments as one delta), then the whole response."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.request = request
        self.custom = _custom_names(request)
        self.sequence = 0
        self.started = False
        self.response_id = "resp_proxy"
        self.created = 0
        self.model = str(request.get("model") or "")
        self.text: str | None = None  # the message item's text so far; None: no message item open
        self.text_index = -1
        self.calls: dict[int, dict[str, str]] = {}  # chunk tool-call index -> id, name, arguments
        self.finish_reason: Any = None
        self.usage: dict[str, Any] | None = None

    def _event(self, kind: str, **fields: Any) -> SseEvent:
        event = SseEvent.of({"type": kind, "sequence_number": self.sequence, **fields}, kind)
        self.sequence += 1
        return event

    def _skeleton(self, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
        return _response_object(self.request, response_id=self.response_id, created=self.created, model=self.model,
                                 status=status, output=output, usage=None, incomplete=None)

    def _start(self, chunk: dict[str, Any]) -> list[SseEvent]:
        self.started = True
        self.response_id = f"resp_{chunk.get('id') or 'proxy'}"
        self.created = int(chunk.get("created") or 0)
        self.model = self.model or str(chunk.get("model") or "")
        return [self._event("response.created", response=self._skeleton("in_progress", [])),
                self._event("response.in_progress", response=self._skeleton("in_progress", []))]

    def _message_id(self) -> str:
        return f"msg_{self.response_id[5:]}_0"

    def feed(self, chunk: dict[str, Any]) -> list[SseEvent]:
        events = [] if self.started else self._start(chunk)
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                if self.text is None:
                    self.text, self.text_index = "", 0
                    item_id = self._message_id()
                    events.append(self._event("response.output_item.added", output_index=0,
                                              item=_message_item("", item_id=item_id, status="in_progress")))
                    events.append(self._event("response.content_part.added", item_id=item_id, output_index=0,
                                              content_index=0, part={"type": "output_text", "text": "",
                                                                     "annotations": []}))
                self.text += content
                events.append(self._event("response.output_text.delta", item_id=self._message_id(), output_index=0,
                                          content_index=0, delta=content, logprobs=[]))
            gather_tool_call_deltas(self.calls, delta)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return events

    def finish(self) -> list[SseEvent]:
        events = [] if self.started else self._start({})
        output: list[dict[str, Any]] = []
        if self.text is not None:
            item_id = self._message_id()
            part = {"type": "output_text", "text": self.text, "annotations": []}
            events.append(self._event("response.output_text.done", item_id=item_id, output_index=0, content_index=0,
                                      text=self.text, logprobs=[]))
            events.append(self._event("response.content_part.done", item_id=item_id, output_index=0, content_index=0,
                                      part=part))
            item = _message_item(self.text, item_id=item_id)
            events.append(self._event("response.output_item.done", output_index=0, item=item))
            output.append(item)
        for position, index in enumerate(sorted(self.calls)):
            slot = self.calls[index]
            output_index = len(output)
            call_id = slot["id"] or f"call_{self.response_id[5:]}_{position}"
            item_id = f"fc_{self.response_id[5:]}_{position}"
            custom = slot["name"] in self.custom
            done = _call_item(call_id, slot["name"], slot["arguments"], item_id=item_id, custom=custom)
            added = {**done, "status": "in_progress", **({"input": ""} if custom else {"arguments": ""})}
            events.append(self._event("response.output_item.added", output_index=output_index, item=added))
            if custom:
                events.append(self._event("response.custom_tool_call_input.delta", item_id=item_id,
                                          output_index=output_index, delta=done["input"]))
                events.append(self._event("response.custom_tool_call_input.done", item_id=item_id,
                                          output_index=output_index, input=done["input"]))
            else:
                events.append(self._event("response.function_call_arguments.delta", item_id=item_id,
                                          output_index=output_index, delta=done["arguments"]))
                events.append(self._event("response.function_call_arguments.done", item_id=item_id,
                                          output_index=output_index, name=done["name"], arguments=done["arguments"]))
            events.append(self._event("response.output_item.done", output_index=output_index, item=done))
            output.append(done)
        status, incomplete = _status(self.finish_reason)
        final = _response_object(self.request, response_id=self.response_id, created=self.created, model=self.model,
                                 status=status, output=output, usage=_usage(self.usage), incomplete=incomplete)
        events.append(self._event("response.completed" if status == "completed" else "response.incomplete",
                                  response=final))
        return events


class Responses(DialectBase):
    name = "openai-responses"
    routes = ("/v1/responses", "/responses")

    def chat_request(self, body: dict[str, Any], *, route: RouteMatch) -> ChatRequest:
        if body.get("previous_response_id") or body.get("conversation"):
            raise DialectError("previous_response_id / conversation need responses stored server-side, which the "
                               "proxy does not keep: send the whole input with store=false")
        built = _messages(body)
        tools, tool_notes = _tools(body)
        notes = built.notes + tool_notes
        chat: dict[str, Any] = {"messages": leading_system_joined(built.messages)}
        if tools:
            chat["tools"] = tools
            choice, choice_notes = _tool_choice(body.get("tool_choice"), {t["function"]["name"] for t in tools})
            notes += choice_notes
            if choice is not None:
                chat["tool_choice"] = choice
            if "parallel_tool_calls" in body:
                chat["parallel_tool_calls"] = bool(body["parallel_tool_calls"])
        if isinstance(body.get("max_output_tokens"), int):
            chat["max_tokens"] = body["max_output_tokens"]
        response_format, format_notes = _response_format(body.get("text"))
        notes += format_notes
        if response_format is not None:
            chat["response_format"] = response_format
        reasoning = body.get("reasoning")
        if isinstance(reasoning, dict) and reasoning.get("effort") in ("minimal", "low", "medium", "high"):
            chat["reasoning_effort"] = reasoning["effort"]
        left_out = sorted(set(body) - set(UNDERSTOOD) - set(RUN_OWNED))
        notes += [f"{key}: not passed to the model" for key in left_out]
        return ChatRequest(body=chat, stream=bool(body.get("stream")), notes=tuple(notes))

    def response(self, completion: dict[str, Any], *, request: dict[str, Any]) -> dict[str, Any]:
        base_id = str(completion.get("id") or "proxy")
        choices = completion.get("choices") or [{}]
        choice = choices[0] if isinstance(choices[0], dict) else {}
        message = choice.get("message") or {}
        custom = _custom_names(request)
        output: list[dict[str, Any]] = []
        if isinstance(message.get("content"), str) and message["content"]:
            output.append(_message_item(message["content"], item_id=f"msg_{base_id}_0"))
        for position, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            name = str(function.get("name") or "")
            output.append(_call_item(str(call.get("id") or f"call_{base_id}_{position}"), name,
                                     str(function.get("arguments") or ""), item_id=f"fc_{base_id}_{position}",
                                     custom=name in custom))
        status, incomplete = _status(choice.get("finish_reason"))
        return _response_object(request, response_id=f"resp_{base_id}", created=int(completion.get("created") or 0),
                                model=_model_of(request, completion), status=status, output=output,
                                usage=_usage(completion.get("usage")), incomplete=incomplete)

    def stream(self, *, request: dict[str, Any]) -> _ResponseStream:
        return _ResponseStream(request)


DIALECT = Responses()
