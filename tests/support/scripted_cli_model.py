"""A scripted tool-calling model for the official CLIs (runner/agents/clis/): what the model does is the test's, the
rest is real (the proxy and its dialect translation, the CLI in its image, its own tools, the sandbox, the build,
the browser and the judge).

The model answers in OpenAI chat completions behind a real HTTP server (tests/support/scripted_agent_model.py);
the proxy asks it in chat whatever API the CLI speaks. A script reads the conversation the proxy sent (the CLI's
own system prompt and tools, the turn's request, the tool results so far) and answers with the CLI's own tools,
by their names and arguments in the pinned version (`CLI_TOOLS`):

- a smoke turn: read the file the turn changes (the CLIs overwrite only a file read first), write each reference
  file with the CLI's file tool (Codex:
  `apply_patch`, which Codex applies itself), then say it is done;
- a hostile turn (CLI_PROBES in tests/sandbox/hostile/agent_transcripts.py): run each hostile command with the
  CLI's shell tool, one per step, then read and write a page that says "ready";
- a looping turn: run a command forever (the budget tests), each answer reporting the usage asked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.scripted_agent_model import answer, smoke_references, tool_call

WORKSPACE = "/app"  # the workspace as the CLI sees it in its container
PATCH_END = "GENUI_PATCH_END"
_REQUEST = re.compile(r"## Current request \(turn \d+\)\n")


@dataclass(frozen=True)
class CliTools:
    """How one CLI's model asks for its tools: read a file, write a file, run a shell command."""

    read: Callable[[str], dict[str, Any]]
    write: Callable[[str, str], dict[str, Any]]
    shell: Callable[[str], dict[str, Any]]


def _codex_patch(path: str, content: str) -> dict[str, Any]:
    """Codex's apply_patch through its command tool (its own prompt's form): Codex parses the patch and writes the
    file itself, reporting a file change, never running a program of that name."""
    lines = "".join(f"+{line}\n" for line in content.splitlines())
    patch = f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"
    return tool_call("exec_command", cmd=f"apply_patch <<'{PATCH_END}'\n{patch}{PATCH_END}\n")


CLI_TOOLS = {
    "qwen-code": CliTools(
        read=lambda path: tool_call("read_file", file_path=f"{WORKSPACE}/{path}"),
        write=lambda path, content: tool_call("write_file", file_path=f"{WORKSPACE}/{path}", content=content),
        shell=lambda command: tool_call("run_shell_command", command=command, is_background=False)),
    "gemini-cli": CliTools(
        read=lambda path: tool_call("read_file", file_path=f"{WORKSPACE}/{path}"),
        write=lambda path, content: tool_call("write_file", file_path=f"{WORKSPACE}/{path}", content=content),
        shell=lambda command: tool_call("run_shell_command", command=command)),
    "claude-code": CliTools(
        read=lambda path: tool_call("Read", file_path=f"{WORKSPACE}/{path}"),
        write=lambda path, content: tool_call("Write", file_path=f"{WORKSPACE}/{path}", content=content),
        shell=lambda command: tool_call("Bash", command=command)),
    "codex": CliTools(
        read=lambda path: tool_call("exec_command", cmd=f"cat {path}"),
        write=_codex_patch,
        shell=lambda command: tool_call("exec_command", cmd=command, yield_time_ms=10000)),
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def current_request(messages: list[dict[str, Any]]) -> str:
    """The turn's request: what follows the last "## Current request (turn N)" header in the user's messages
    (the CLI may add its own text around the prompt)."""
    found = ""
    for message in messages:
        if message.get("role") == "user":
            text = _text(message.get("content"))
            parts = _REQUEST.split(text)
            if len(parts) > 1:
                found = parts[-1]
    return " ".join(found.split())


def calls_made(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool calls the model made so far in this conversation, in order."""
    return [call for message in messages if message.get("role") == "assistant"
            for call in message.get("tool_calls") or []]


def tool_results(messages: list[dict[str, Any]]) -> list[str]:
    """The tool results the CLI sent back so far, in order."""
    return [_text(message.get("content")) for message in messages if message.get("role") == "tool"]


def _reference_files(request: str) -> dict[str, str] | None:
    for prompt, files in smoke_references().items():
        if request.startswith(prompt):
            return files
    return None


READY_PAGE = ('export default function App() {\n  return <main><h1>ready</h1></main>;\n}\n')


def cli_script(cli: str, *, hostile_commands: dict[str, list[str]] | None = None,
               loops: dict[str, tuple[str, dict[str, int]]] | None = None
               ) -> Callable[[list[dict[str, Any]]], tuple[int, str]]:
    """The model for one CLI. `hostile_commands`: a request -> the shell commands its turn runs, one per step;
    `loops`: a request -> the shell command its endless loop runs at every step and the usage each answer reports."""
    tools = CLI_TOOLS[cli]
    hostile_commands = hostile_commands or {}
    loops = loops or {}

    def script(messages: list[dict[str, Any]]) -> tuple[int, str]:
        request = current_request(messages)
        made = len(calls_made(messages))
        for prompt, (command, usage) in loops.items():
            if request.startswith(prompt):
                return answer("Checking once more.", [tools.shell(command)], usage=usage)
        for prompt, commands in hostile_commands.items():
            if request.startswith(prompt):
                if made < len(commands):
                    return answer("", [tools.shell(commands[made])])
                if made == len(commands):  # the CLIs write only a file they have read
                    return answer("", [tools.read("src/App.jsx")])
                if made == len(commands) + 1:
                    return answer("", [tools.write("src/App.jsx", READY_PAGE)])
                return answer("Done.")
        files = _reference_files(request)
        if files is None:
            return 500, json.dumps({"error": {"message": f"the script knows no request {request[:80]!r}"}})
        paths = sorted(files)
        if made == 0:
            return answer("Reading the app first.", [tools.read("src/App.jsx")])
        if made <= len(paths):
            path = paths[made - 1]
            return answer(f"Writing {path}.", [tools.write(path, files[path])])
        return answer("Done: the app is in src/.")

    return script
