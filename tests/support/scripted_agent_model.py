"""A scripted tool-calling model behind a real OpenAI-compatible HTTP server (tests/support/fault_server.py): the
model an agent test drives, where the test needs to know what the model does (the fault injected is the model's
behaviour; the proxy, the agent, the sandbox, the build, the browser and the judge are real).

A script is a function of the conversation so far (the chat messages the proxy sent) to the next answer: text,
tool calls, or an HTTP error. `working_app` writes a smoke task's reference app through the built-in agent's tools
(list, write, build, view), then says it is done; `looping` calls a tool forever, for the budgets' tests.
The answers follow OpenAI's documented chat-completions shape
(https://platform.openai.com/docs/api-reference/chat/object: `message.tool_calls[].function.{name,arguments}`,
`finish_reason` "tool_calls"), with usage so the proxy can count tokens.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.support.fault_server import FaultServer

REPO_ROOT = Path(__file__).resolve().parents[2]
Script = Callable[[list[dict[str, Any]]], tuple[int, str | None]]
USAGE = {"prompt_tokens": 100, "completion_tokens": 20}  # every answer's: a budget counts 120 tokens per call


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": f"call-{uuid.uuid4().hex[:10]}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def answer(content: str = "", calls: list[dict[str, Any]] | None = None, *,
           usage: dict[str, int] | None = None) -> tuple[int, str]:
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = calls
    used = dict(usage or USAGE)
    used["total_tokens"] = used["prompt_tokens"] + used["completion_tokens"]
    return 200, json.dumps({
        "id": f"chatcmpl-{uuid.uuid4().hex[:8]}", "object": "chat.completion", "created": int(time.time()),
        "model": "scripted", "usage": used,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]})


def assistant_turns(messages: list[dict[str, Any]]) -> int:
    """How many answers the conversation already holds (the step the model is at, from 0)."""
    return sum(1 for message in messages if message.get("role") == "assistant")


def current_request(messages: list[dict[str, Any]]) -> str:
    """The turn's request from the payload (runner/suites/payload.py's "## Current request (turn N)")."""
    for message in messages:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str):
            found = re.search(r"## Current request \(turn \d+\)\n(.*)", content, re.S)
            if found:
                return found.group(1).strip()
    return ""


def smoke_references() -> dict[str, dict[str, str]]:
    """Each smoke turn's request -> its reference files (tasks/smoke/*.yaml)."""
    found: dict[str, dict[str, str]] = {}
    for path in sorted((REPO_ROOT / "tasks" / "smoke").glob("*.yaml")):
        for turn in yaml.safe_load(path.read_text())["turns"]:
            found[" ".join(turn["prompt"].split())] = turn["reference_files"]
    return found


def working_app(messages: list[dict[str, Any]]) -> tuple[int, str]:
    """List and read the workspace, write the turn's reference files, build, view the page, and stop."""
    step = assistant_turns(messages)
    files = smoke_references().get(" ".join(current_request(messages).split()))
    if files is None:
        return answer("I do not know this request.")
    if step == 0:
        return answer("Looking at the workspace.", [tool_call("list_files"), tool_call("read_file", path="src/App.jsx")])
    if step == 1:
        return answer("Writing the app.", [tool_call("write_file", path=path, content=content)
                                           for path, content in files.items()])
    if step == 2:
        return answer("", [tool_call("run_build")])
    if step == 3:
        return answer("", [tool_call("view_page")])
    return answer("Done: the app is in src/.")


def looping(messages: list[dict[str, Any]]) -> tuple[int, str]:
    """An agent that never stops: it lists the files again and again."""
    return answer("Checking again.", [tool_call("list_files")])


def scripted_server(script: Script) -> FaultServer:
    """The script behind a real HTTP server (its base_url is an OpenAI-compatible endpoint)."""
    return FaultServer(script)
