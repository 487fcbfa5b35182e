"""The built-in agent (`agent=builtin`): the project's own tool-calling loop, for any model that answers tool
calls in OpenAI's chat completions (a hosted endpoint, or a vLLM server with its tool-call parser).

It asks the model through the model proxy's socket, with OpenAI's own client, exactly as a vendor CLI would: the
proxy holds the key, enforces the budget and records every call. Each answer's tool calls run in order
(runner/agents/builtin_tools.py); their results go back as tool messages, a screenshot as a user message after
them. The turn ends when the model answers without a tool call (tool_choice auto) or calls `finish`, when the
proxy refuses a call for the budget, or when the model fails (the strategy records which). Every step is written
to the slot's agent_steps.jsonl: the answer, each tool call with its result, the files it changed, the build it
tried and the screenshot it took.
"""

from __future__ import annotations

import asyncio
import base64
import time
import uuid
from typing import Any, Literal

import httpx
import openai
from pydantic import Field

from runner.agents.base import AgentFailed, AgentOutcome, AgentTurn
from runner.agents.builtin_tools import TOOLS, Toolbox
from runner.agents.settings import AgentSettings
from runner.agents.transcript import cap
from runner.agents.workspace import diff_snapshots

__all__ = ["BuiltinAgent", "BuiltinAgentSettings", "PROXY_KEY"]

PROXY_KEY = "genui-proxy"  # what the client sends as its key: the proxy needs none and holds the real one


class BuiltinAgentSettings(AgentSettings):
    # auto: the model ends its turn with an answer that calls no tool; required: it calls a tool at every step and
    # ends with `finish` (a model whose server parses no free-form tool calls still calls tools: vLLM decodes a
    # required call under the tools' schema).
    tool_choice: Literal["auto", "required"] = "auto"
    screenshots: bool = True  # view_page shows the model the page where its config says it takes images
    tool_result_chars: int = Field(20000, ge=200)  # a tool result as the model is shown it


def _tool_calls(message: Any) -> list[dict[str, str]]:
    """The answer's tool calls (id, name, arguments), each with an id (made here where the server gave none)."""
    return [{"id": call.id or f"call-{uuid.uuid4().hex[:12]}", "name": call.function.name or "",
             "arguments": call.function.arguments or ""} for call in message.tool_calls or []]


def _assistant(content: str, calls: list[dict[str, str]]) -> dict[str, Any]:
    """The answer as the next request repeats it."""
    entry: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        entry["tool_calls"] = [{"id": call["id"], "type": "function",
                                "function": {"name": call["name"], "arguments": call["arguments"]}} for call in calls]
    return entry


def _budget_refusal(error: openai.APIStatusError) -> bool:
    body = error.body if isinstance(error.body, dict) else {}
    inner = body.get("error", body) if isinstance(body, dict) else {}
    return isinstance(inner, dict) and inner.get("type") == "budget_exhausted"


class BuiltinAgent:
    """Implements Agent."""

    name = "builtin"

    def __init__(self, settings: BuiltinAgentSettings) -> None:
        self.settings = settings

    async def work(self, turn: AgentTurn) -> AgentOutcome:
        transport = httpx.AsyncHTTPTransport(uds=str(turn.session.socket_path))
        async with httpx.AsyncClient(transport=transport, timeout=None) as http:
            client = openai.AsyncOpenAI(api_key=PROXY_KEY, base_url="http://model-proxy/v1", http_client=http,
                                        max_retries=0)
            return await self._loop(turn, client)

    async def _loop(self, turn: AgentTurn, client: openai.AsyncOpenAI) -> AgentOutcome:
        toolbox = Toolbox(turn, result_chars=self.settings.tool_result_chars, screenshots=self.settings.screenshots)
        messages = [dict(message) for message in turn.messages]
        step = 0
        while True:
            step += 1
            started = time.perf_counter()
            try:
                completion = await client.chat.completions.create(
                    model=turn.session.model_name, messages=messages, tools=TOOLS,
                    tool_choice=self.settings.tool_choice)
            except openai.APIStatusError as error:
                if _budget_refusal(error) or error.status_code == 502:
                    return AgentOutcome(steps_written=True)  # the proxy knows why: the strategy records it
                raise AgentFailed(f"the model refused the request at step {step}: HTTP {error.status_code}: "
                                  f"{error.message}") from None
            except openai.APIConnectionError as error:
                raise AgentFailed(f"the model proxy could not be reached: {error}") from None
            call_index = turn.session.calls - 1
            if not completion.choices:
                raise AgentFailed(f"step {step}: the answer holds no message")
            message = completion.choices[0].message
            content = message.content or ""
            calls = _tool_calls(message)
            messages.append(_assistant(content, calls))
            before = await asyncio.to_thread(turn.workspace.snapshot)
            usage = completion.usage
            entry: dict[str, Any] = {"step": step, "call": call_index, "assistant": content, "tool_calls": [],
                                     "usage": {"prompt_tokens": usage.prompt_tokens,
                                               "completion_tokens": usage.completion_tokens} if usage else {}}
            images: list[bytes] = []
            finished: str | None = None
            for position, call in enumerate(calls):
                result = await toolbox.call(call["name"], call["arguments"], label=f"step{step}-{position + 1}")
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result.text})
                entry["tool_calls"].append({**call, "ok": result.ok, "result": cap(result.text), **result.files,
                                            **({"build": result.build} if result.build else {})})
                if result.image_png is not None:
                    images.append(result.image_png)
                if result.finished is not None:
                    finished = result.finished
            for png in images:
                messages.append({"role": "user", "content": [
                    {"type": "text", "text": "The page's screenshot (view_page):"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()}}]})
            after = await asyncio.to_thread(turn.workspace.snapshot)
            entry["files_changed"] = {kind: paths for kind, paths in diff_snapshots(before, after).items() if paths}
            entry["seconds"] = round(time.perf_counter() - started, 3)
            turn.tools.evidence.append_agent_step(entry)
            if finished is not None:
                return AgentOutcome(message=finished or content, steps_written=True)
            if not calls:
                return AgentOutcome(message=content, steps_written=True)

    async def aclose(self) -> None:
        return None
