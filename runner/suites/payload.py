"""The turn payload shown to the generator (public material only).

Its shape follows EvoGenUI-Bench, Appendix F.2: the current request; task context, public tool and resource
contracts and conversation history; compact previous turns (request, assistant text, final UI text);
and the latest source files. The output contract asks for assistant text plus the complete source.
"""

from __future__ import annotations

import json
from typing import Any

from runner.suites.base import EpisodeState
from runner.turns.tasks import Task, TurnSpec

PROMPT_VERSION = "webapp-v1"

SYSTEM_PROMPT = """You build and maintain a single-page web application with React 19 and Vite.
The project template already provides index.html, package.json, vite.config.js, src/main.jsx (which renders
the default export of src/App.jsx into #root) and src/toolClient.js (exports `callTool(name, args)` returning
a Promise of the tool's result, and `listTools()`). Only `react` and `react-dom` are installed; do not import
any other package. The page is offline: no external URLs, fonts, images or CDNs.

Reply with a short note to the user, then the COMPLETE source of every file you want under src/
(at least src/App.jsx), each as a path heading followed by one fenced code block:

### src/App.jsx
```jsx
export default function App() { ... }
```

Files you omit are deleted; write every file in full, never a diff."""


def _format_files(files: dict[str, str]) -> str:
    parts = []
    for path in sorted(files):
        language = path.rsplit(".", 1)[-1] if "." in path else ""
        parts.append(f"### {path}\n```{language}\n{files[path]}\n```")
    return "\n\n".join(parts)


def build_webapp_messages(task: Task, turn: TurnSpec, episode: EpisodeState) -> list[dict[str, Any]]:
    """Messages for one turn of a multi-turn web-app task."""
    sections: list[str] = []
    if task.context:
        sections.append(f"## Task context\n{task.context}")
    if task.public_contract:
        contract = json.dumps(task.public_contract, indent=2, sort_keys=True)
        sections.append(f"## Tool and resource contracts\n```json\n{contract}\n```")
    if episode.history:
        lines = []
        for previous in episode.history:
            lines.append(
                f"- Turn {previous.turn} request: {previous.request}\n"
                f"  Your reply: {previous.assistant_text.strip()[:800]}\n"
                f"  Final UI text: {previous.ui_text.strip()[:800]}"
            )
        sections.append("## Previous turns\n" + "\n".join(lines))
    if episode.files:
        sections.append("## Current source files\n" + _format_files(episode.files))
    sections.append(f"## Current request (turn {turn.index})\n{turn.prompt}")
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n\n".join(sections)},
    ]
