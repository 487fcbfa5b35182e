"""A tiny two-turn tool-grounded EvoGenUI task with its backend, written into a folder by tests.

Turn 1 saves a note through the authoritative write tool (the probe actor clicks "Save note"); turn 2
reads it back on load. Turn 2 passes only if the runtime state written in turn 1 was carried over.
Private material carries PRIVATE markers so the tests can prove none of it reaches the generator.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

TASK_ID = "tiny_notes_tool"
FIXTURE_ID = "tiny_notes_v1"
NOTE = "water the fern"
PRIVATE_MARKERS = ["PRIVATE-CONTRACT-", "PRIVATE-STATE-7f3a", "PRIVATE-TASKSTATE-91b", "PRIVATE-FIXTURE-NOTE"]

BACKEND = textwrap.dedent(
    '''
    """Backend of the tiny notes task: one note, a read tool, a write tool and a decoy draft tool."""

    PRIVATE_FIXTURES = {"hint": "PRIVATE-FIXTURE-NOTE"}
    INITIAL_STATE = {"note": {"text": "", "version": 0}, "audit_secret": "PRIVATE-STATE-7f3a"}

    _NOTE = {"type": "object", "required": ["text", "version"],
             "properties": {"text": {"type": "string"}, "version": {"type": "integer"}}}

    TOOL_SCHEMAS = {
        "notes_get_note": {
            "description": "Read the saved note (authoritative).",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
            "outputSchema": _NOTE,
        },
        "notes_save_note": {
            "description": "Save the note (authoritative write); returns the new version.",
            "inputSchema": {"type": "object", "required": ["text"], "additionalProperties": False,
                            "properties": {"text": {"type": "string", "minLength": 1}}},
            "outputSchema": {"type": "object", "required": ["saved", "version"],
                             "properties": {"saved": {"type": "boolean"}, "version": {"type": "integer"}}},
            "x_private_note": "PRIVATE-FIXTURE-NOTE",
        },
        "notes_save_draft": {
            "description": "Keep a local draft (not saved to the notes service).",
            "inputSchema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
            "outputSchema": {"type": "object", "required": ["draft_id"], "properties": {"draft_id": {"type": "string"}}},
        },
    }


    def invoke(tool, args, state):
        note = state.setdefault("note", {"text": "", "version": 0})
        if tool == "notes_get_note":
            return {"text": note["text"], "version": note["version"]}
        if tool == "notes_save_note":
            note["text"] = args["text"]
            note["version"] += 1
            return {"saved": True, "version": note["version"]}
        if tool == "notes_save_draft":
            drafts = state.setdefault("drafts", [])
            drafts.append(args["text"])
            return {"draft_id": f"draft-{len(drafts)}"}
        raise ValueError(f"unknown tool {tool}")
    '''
)

APP_TURN_1 = textwrap.dedent(
    """
    import { useState } from "react";
    import { callTool } from "./toolClient.js";

    const NOTE = "water the fern";

    export default function App() {
      const [status, setStatus] = useState("Not saved yet");
      async function save() {
        try {
          const result = await callTool("notes_save_note", { text: NOTE });
          setStatus(`Saved version ${result.version}`);
        } catch (error) {
          setStatus(`Save failed: ${error.message}`);
        }
      }
      return (
        <main>
          <h1>Note keeper</h1>
          <p>Note: {NOTE}</p>
          <button onClick={save}>Save note</button>
          <p role="status">{status}</p>
        </main>
      );
    }
    """
).lstrip()

APP_TURN_2 = textwrap.dedent(
    """
    import { useEffect, useState } from "react";
    import { callTool } from "./toolClient.js";

    const NOTE = "water the fern";

    export default function App() {
      const [status, setStatus] = useState("Not saved yet");
      const [stored, setStored] = useState("loading");
      useEffect(() => {
        callTool("notes_get_note", {})
          .then((result) => setStored(result.text || "(none)"))
          .catch((error) => setStored(`unavailable (${error.message})`));
      }, []);
      async function save() {
        try {
          const result = await callTool("notes_save_note", { text: NOTE });
          setStatus(`Saved version ${result.version}`);
        } catch (error) {
          setStatus(`Save failed: ${error.message}`);
        }
      }
      return (
        <main>
          <h1>Note keeper</h1>
          <p>Note: {NOTE}</p>
          <p>Stored note: {stored}</p>
          <button onClick={save}>Save note</button>
          <p role="status">{status}</p>
        </main>
      );
    }
    """
).lstrip()


def task_document() -> dict:
    tool = lambda name, mode: {  # noqa: E731 - a small table
        "name": name,
        "mode": mode,
        "mock_contract": {"fixture_id": FIXTURE_ID, "handler_ref": f"{FIXTURE_ID}.{name}",
                          "semantic_contract": {"note": "PRIVATE-CONTRACT-semantic"}},
    }
    return {
        "task_id": TASK_ID,
        "title": "Tiny note keeper",
        "domain": "notes",
        "suite": "tool_grounded_action_ui",
        "core_interaction": ["PRIVATE-CONTRACT-core-readback"],
        "metadata": {
            "task_world": {"public_context": "A one-note keeper backed by the notes service."},
            "validation_contract": {
                "validation_scenarios": [
                    {
                        "turn": 1,
                        "oracle": "PRIVATE-CONTRACT-oracle-1: save through the authoritative tool",
                        "evidence_requirements": [
                            {
                                "id": "save_writes_backend",
                                "surface": "runtime tool logs / backend state / DOM",
                                "expect": "PRIVATE-CONTRACT-expect-1 the note is saved with notes_save_note",
                                "check": {
                                    "steps": [{"action": "click", "target": {"role": "button", "name": "Save note"}}],
                                    "assert": [
                                        {"type": "tool_called", "tool": "notes_save_note", "args_subset": {"text": NOTE}},
                                        {"type": "state", "path": "note.text", "equals": NOTE},
                                        {"type": "tool_not_called", "tool": "notes_save_draft"},
                                        {"type": "text_visible", "text": "Saved version"},
                                    ],
                                },
                            }
                        ],
                    },
                    {
                        "turn": 2,
                        "oracle": "PRIVATE-CONTRACT-oracle-2: read back the note saved in turn 1",
                        "evidence_requirements": [
                            {
                                "id": "readback_on_load",
                                "surface": "runtime tool logs / DOM",
                                "expect": "PRIVATE-CONTRACT-expect-2 the stored note is read back on load",
                                "check": {
                                    "assert": [
                                        {"type": "tool_called", "tool": "notes_get_note"},
                                        {"type": "text_visible", "text": f"Stored note: {NOTE}"},
                                    ]
                                },
                            }
                        ],
                    },
                ]
            },
        },
        "tools": [tool("notes_get_note", "read"), tool("notes_save_note", "write"), tool("notes_save_draft", "write")],
        "initial_state": {"owner": "PRIVATE-TASKSTATE-91b"},
        "turns": [
            {
                "turn": 1,
                "prompt": f'Show the note "{NOTE}" with a "Save note" button that saves it to the notes service.',
                "reference": {"assistant_text": "The note can be saved with Save note.", "files": {"src/App.jsx": APP_TURN_1}},
            },
            {
                "turn": 2,
                "prompt": 'When the page opens, read the saved note back and show it as "Stored note: <text>".',
                "reference": {"assistant_text": "The stored note is read back on load.", "files": {"src/App.jsx": APP_TURN_2}},
            },
        ],
    }


def write_tiny_task(folder: Path) -> Path:
    """tasks folder with the task JSON and backends/<fixture>.py; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{TASK_ID}.json").write_text(json.dumps(task_document(), indent=2))
    backends = folder / "backends"
    backends.mkdir(exist_ok=True)
    (backends / f"{FIXTURE_ID}.py").write_text(BACKEND)
    return folder
