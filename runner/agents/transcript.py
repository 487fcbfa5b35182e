"""An agent's transcript, step by step, from what the model proxy recorded: for a command agent (a CLI) the
proxy's records are all there is. Step n is the model's n-th answer: its text and tool calls, each call's result
as the agent sent it back in its next request, and the files the workspace gained, changed or lost between the
two requests (the snapshots the session took as each request arrived)."""

from __future__ import annotations

from typing import Any

from runner.agents.workspace import diff_snapshots

__all__ = ["RESULT_CHARS", "cap", "steps_from_calls"]

RESULT_CHARS = 4000  # a tool result as kept in the transcript (the whole of it is in agent_calls.jsonl)


def cap(text: str, limit: int = RESULT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... [{len(text) - limit} more characters]"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return "" if content is None else str(content)


def _message(call: dict[str, Any]) -> dict[str, Any]:
    choices = (call.get("response") or {}).get("choices") or [{}]
    return (choices[0] or {}).get("message") or {}


def steps_from_calls(calls: list[dict[str, Any]], snapshots: dict[int, dict[str, str]],
                     final: dict[str, str]) -> list[dict[str, Any]]:
    """The transcript of `calls` (agent_calls.jsonl's records, in order); `snapshots`: the workspace as call i
    arrived; `final`: as the agent left it."""
    answered = [call for call in calls if call.get("status") == 200]
    steps: list[dict[str, Any]] = []
    for position, call in enumerate(answered):
        message = _message(call)
        later = [c for c in calls if c["call"] > call["call"]]
        results: dict[str, str] = {}
        if later:
            for sent in (later[0].get("request") or {}).get("messages") or []:
                if isinstance(sent, dict) and sent.get("role") == "tool":
                    results[str(sent.get("tool_call_id"))] = _content_text(sent.get("content"))
        tool_calls = []
        for item in message.get("tool_calls") or []:
            function = item.get("function") or {}
            entry = {"id": item.get("id"), "name": function.get("name"), "arguments": function.get("arguments")}
            if str(item.get("id")) in results:
                entry["result"] = cap(results[str(item["id"])])
            tool_calls.append(entry)
        before = snapshots.get(call["call"], {})
        after = snapshots.get(later[0]["call"], final) if later else final
        changed = diff_snapshots(before, after)
        steps.append({"step": position + 1, "call": call["call"], "assistant": _content_text(message.get("content")),
                      "tool_calls": tool_calls, "files_changed": {k: v for k, v in changed.items() if v},
                      "usage": call.get("usage") or {}, "model_seconds": call.get("model_seconds")})
    return steps
