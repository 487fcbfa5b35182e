"""The generator's turn payload of EvoGenUI-Bench (EvoGenUI-Bench Appendix F.2), public material only.

    {
      "current_user_request": "...",
      "task": {"context": "...", "tools": [public contracts], "resources": [public contracts],
               "conversation_history": [...]},
      "previous_turns": [{"turn": 1, "user_request": "...", "assistant_text": "...", "final_ui_text": "..."}],
      "previous_turn_source": {"turn": 1, "files": {"src/App.jsx": "..."}}
    }

The user message is that JSON document; the system prompt (F.1: "Every model receives the same
system prompt") states the environment and the output contract: assistant text plus the complete
source (§5.1: "non-empty assistant text accompanied by the generated source files").

`conversation_history` holds the earlier user requests and assistant replies as chat messages;
`previous_turns` the compact per-turn records (request, assistant text, final UI text). Both are
built from EpisodeState.history, i.e. from turns that returned a model response.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from runner.suites.base import EpisodeState
from runner.turns.tasks import Task, TurnSpec

PROMPT_VERSION = "evogenui-f2-v2"

SYSTEM_PROMPT = """You build and maintain one interactive web interface over several turns, with React 19 and Vite.
Each user message is a JSON turn payload:
- current_user_request: what to change or add now;
- task: the public task context, the tool and resource contracts you may use, and the conversation so far;
- previous_turns: what was asked before, what you answered and the text the finished interface showed;
- previous_turn_source: the latest source files of the interface (revise them; keep what still applies).

Environment: the project template already provides index.html, package.json, vite.config.js, src/main.jsx
(renders the default export of src/App.jsx into #root) and src/toolClient.js, which exports
`callTool(name, args)` (returns a Promise of the tool's result; it rejects on errors) and `listTools()`,
`readResource(uri)` (a Promise of a public resource's contents) and `listResources()`.
Call the task's tools only through callTool, with arguments that match each tool's inputSchema, and read
its resources only through readResource; the tool state persists between turns. Only `react` and `react-dom` are installed; do not import any other package.
The page is offline: no external URLs, fonts, images or CDNs. Do not write the reserved files.

Reply with ONE JSON object and nothing else:
{"assistant_text": "<a short note to the user about what the interface now does>",
 "files": {"src/App.jsx": "<complete file>", "...": "..."}}
(If you cannot produce JSON, write the note, then each file as a `### src/App.jsx` heading followed by one
fenced code block.) List the COMPLETE content of every source file you want under src/ (at least src/App.jsx). Files you omit
are deleted; never send a diff. Describe only behaviour the interface really has."""


def _files_digest(files: dict[str, str]) -> str:
    return hashlib.sha1(json.dumps(files, sort_keys=True).encode()).hexdigest()


def source_turn(turn: TurnSpec, episode: EpisodeState) -> int | None:
    """The turn that produced `episode.files` (F.2's previous_turn_source.turn).

    Source files only change when an executed turn returns parsable files, so when the files differ
    from those of the previous payload they come from the turn of that payload. The record lives in
    `episode.extra`; without it (the first payload after a resume) the latest turn with a model
    response is used.
    """
    if not episode.files:
        return None
    digest = _files_digest(episode.files)
    seen = episode.extra.get("evogenui_source")
    if isinstance(seen, dict) and seen.get("digest") == digest:
        return seen.get("turn")
    last_payload = episode.extra.get("evogenui_last_payload_turn")
    if isinstance(last_payload, int) and last_payload < turn.index:
        produced = last_payload
    else:
        produced = episode.history[-1].turn if episode.history else turn.index - 1
    episode.extra["evogenui_source"] = {"digest": digest, "turn": produced}
    return produced


def _clip(text: str, limit: int | None) -> str:
    text = (text or "").strip()
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + " …[truncated]"


def build_turn_payload(
    task: Task,
    turn: TurnSpec,
    episode: EpisodeState,
    *,
    public_contract: dict[str, Any],
    history_turns: int | None = None,
    assistant_text_chars: int | None = 2000,
    ui_text_chars: int | None = 2000,
) -> dict[str, Any]:
    """The F.2 payload of one turn. `public_contract` is the task's public tool/resource contract
    (backends.public_tool_contract for tool-grounded tasks); nothing private is read here."""
    history = list(episode.history)
    if history_turns is not None:
        history = history[-history_turns:] if history_turns > 0 else []
    conversation: list[dict[str, str]] = []
    previous: list[dict[str, Any]] = []
    for item in history:
        assistant_text = _clip(item.assistant_text, assistant_text_chars)
        conversation.append({"role": "user", "content": item.request})
        conversation.append({"role": "assistant", "content": assistant_text})
        previous.append(
            {
                "turn": item.turn,
                "user_request": item.request,
                "assistant_text": assistant_text,
                "final_ui_text": _clip(item.ui_text, ui_text_chars),
            }
        )
    payload: dict[str, Any] = {
        "current_user_request": turn.prompt,
        "task": {
            "context": task.context,
            "tools": list(public_contract.get("tools", [])),
            "resources": list(public_contract.get("resources", [])),
            "conversation_history": conversation,
        },
        "previous_turns": previous,
    }
    produced = source_turn(turn, episode)
    if episode.files:
        payload["previous_turn_source"] = {"turn": produced, "files": dict(sorted(episode.files.items()))}
    episode.extra["evogenui_last_payload_turn"] = turn.index
    return payload


def build_turn_messages(task: Task, turn: TurnSpec, episode: EpisodeState, **options: Any) -> list[dict[str, Any]]:
    """OpenAI chat messages: the shared system prompt, then the payload as a JSON document."""
    payload = build_turn_payload(task, turn, episode, **options)
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": json.dumps(payload, ensure_ascii=False, indent=2)},
    ]
