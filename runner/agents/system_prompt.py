"""One system prompt for a translated conversation: the system (and developer) messages an agent sends before the
model's first answer, joined in their order into a single system message at the start.

Codex sends its instructions and two developer messages ahead of the user's, and Claude Code a system message of
its environment after the user's first one; many chat templates take a system message only first, or only one
(Gemma's refuse any other; Mistral's require user and assistant to alternate). Before the model has answered, all
of them are its instructions, so joining them keeps their meaning. A system message after an answer stays where it
is (an instruction given mid-conversation)."""

from __future__ import annotations

from typing import Any

__all__ = ["leading_system_joined"]


def leading_system_joined(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with every text system message before the first assistant message joined into the first one."""
    first_answer = next((index for index, message in enumerate(messages) if message.get("role") == "assistant"),
                        len(messages))
    head = messages[:first_answer]
    system = [message for message in head
              if message.get("role") == "system" and isinstance(message.get("content"), str)]
    if len(system) < 2 and (not system or head[0] is system[0]):
        return messages
    joined = {"role": "system", "content": "\n\n".join(str(message["content"]) for message in system)}
    rest = [message for message in head if not any(message is kept for kept in system)]
    return [joined, *rest, *messages[first_answer:]]
