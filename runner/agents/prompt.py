"""What an agent is told: the suite's payload (its task, history and request, public material only) after a
preamble that says where it works and that its workspace, not its reply, is the answer."""

from __future__ import annotations

from typing import Any

__all__ = ["AGENT_PROMPT_VERSION", "agent_messages", "prompt_text"]

AGENT_PROMPT_VERSION = "agent-v1"

_VITE = """You work as a coding agent in a web project: the current folder is its workspace. Do what the request
below asks by editing the workspace's files with your tools, then stop. The files under src/ when you stop are
your answer: they are built with the project's template and judged. The template's own files (index.html,
package.json, vite.config.js, src/main.jsx, src/toolClient.js, node_modules) are fixed: a change to src/main.jsx
or src/toolClient.js is refused, a change elsewhere outside src/ is ignored. Nothing can be installed and there is
no network. Instructions below about the form of your reply (code blocks, JSON, "files you omit are deleted")
do not apply to you: write files instead, and delete a file to remove it."""

_STATIC = """You work as a coding agent on a static web page: the current folder is its workspace. Do what the
request below asks by editing the workspace's files with your tools, then stop. The files in the workspace when
you stop are your answer (index.html is the page): they are served as they are and judged. There is no build and
no network. Instructions below about the form of your reply (code blocks, JSON) do not apply to you: write files
instead."""


def preamble(*, static: bool) -> str:
    return _STATIC if static else _VITE


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif isinstance(part, dict):
                parts.append(f"[{part.get('type', 'part')} not shown here]")
        return "\n".join(parts)
    return ""


def agent_messages(messages: list[dict[str, Any]], *, static: bool) -> list[dict[str, Any]]:
    """The payload with the preamble first: one system message (the preamble, then the suite's own system text
    under a heading), then the payload's other messages as they are (images included)."""
    system = [_text(message.get("content")) for message in messages if message.get("role") == "system"]
    rest = [message for message in messages if message.get("role") != "system"]
    text = preamble(static=static)
    if system:
        text += "\n\n## The task's instructions\n" + "\n\n".join(system)
    return [{"role": "system", "content": text}, *rest]


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The messages as one prompt (what a CLI is given): each message's text in order, images named only."""
    return "\n\n".join(_text(message.get("content")) for message in messages).strip()
