"""The built-in agent's tools: the workspace's files (runner-side, never through a link, never outside it), the
build of the workspace's answer in the run's sandbox, and a look at the built page in one of the run's browsers.

Each tool returns text for the model (capped) and, for view_page, a screenshot; nothing a tool does reaches the
runner's environment, its other files or the network: the file tools are confined by runner/agents/workspace.py,
the build runs as every build does, the page is served and browsed as every artifact is.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from runner.agents.base import AgentTurn
from runner.agents.workspace import WorkspaceError
from runner.turns.generation import BuildCheck

__all__ = ["TOOLS", "ToolResult", "Toolbox"]

MAX_WRITE_BYTES = 4 * 1024 * 1024
BUILD_LOG_TAIL = 3000


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


_PATH = {"type": "string", "description": "a path relative to the workspace, e.g. src/App.jsx"}
TOOLS: list[dict[str, Any]] = [
    _tool("list_files", "List the workspace's files (node_modules and dist aside), or those under a folder.",
          {"path": {"type": "string", "description": "a folder of the workspace; empty for all"}}, []),
    _tool("read_file", "Read a file of the workspace.", {"path": _PATH}, ["path"]),
    _tool("write_file", "Write a whole file of the workspace (made or replaced).",
          {"path": _PATH, "content": {"type": "string", "description": "the file's complete new content"}},
          ["path", "content"]),
    _tool("delete_file", "Delete a file of the workspace.", {"path": _PATH}, ["path"]),
    _tool("run_build", "Build the workspace's answer as it will be judged; returns whether it built and the end "
          "of its log.", {}, []),
    _tool("read_build_log", "Read lines of the last build's whole log.",
          {"from_line": {"type": "integer", "description": "the first line, 1-based"},
           "lines": {"type": "integer", "description": "how many lines (at most 400)"}}, []),
    _tool("view_page", "Build the workspace if it changed, serve the page and look at it: its visible text, "
          "console and page errors, and (for models that take images) a screenshot.", {}, []),
    _tool("finish", "Say you are done; the workspace as it is now is your answer.",
          {"summary": {"type": "string", "description": "what you did, for the user"}}, ["summary"]),
]


@dataclass
class ToolResult:
    text: str
    ok: bool = True
    image_png: bytes | None = None  # a screenshot to show the model (view_page)
    files: dict[str, str] = field(default_factory=dict)  # agent_files/ files this call wrote: {"build_log": name, ...}
    build: dict[str, Any] | None = None  # the build it ran: {"ok", "status"}
    finished: str | None = None  # finish's summary


class Toolbox:
    """The tools of one slot's built-in agent."""

    def __init__(self, turn: AgentTurn, *, result_chars: int, screenshots: bool) -> None:
        self.turn = turn
        self.result_chars = result_chars
        self.screenshots = screenshots and turn.vision
        self.last_build: BuildCheck | None = None
        self._built_snapshot: dict[str, str] | None = None

    def cap(self, text: str) -> str:
        if len(text) <= self.result_chars:
            return text
        return text[:self.result_chars] + f"\n... [{len(text) - self.result_chars} more characters not shown]"

    async def call(self, name: str, arguments: str | None, *, label: str) -> ToolResult:
        """Run tool `name` with its JSON `arguments`; `label` names the files it keeps (step and call)."""
        try:
            args = json.loads(arguments or "{}") if (arguments or "").strip() else {}
        except ValueError as error:
            return ToolResult(f"error: the arguments are not JSON ({error})", ok=False)
        if not isinstance(args, dict):
            return ToolResult("error: the arguments must be a JSON object", ok=False)
        handler = self._handlers().get(name)
        if handler is None:
            return ToolResult(f"error: no tool named {name!r}; the tools are "
                              f"{', '.join(tool['function']['name'] for tool in TOOLS)}", ok=False)
        try:
            return await handler(args, label)
        except WorkspaceError as error:
            return ToolResult(f"error: {error}", ok=False)
        except (TypeError, ValueError) as error:
            return ToolResult(f"error: bad arguments for {name}: {error}", ok=False)

    def _handlers(self) -> dict[str, Any]:
        return {"list_files": self._tool_list_files, "read_file": self._tool_read_file,
                "write_file": self._tool_write_file, "delete_file": self._tool_delete_file,
                "run_build": self._tool_run_build, "read_build_log": self._tool_read_build_log,
                "view_page": self._tool_view_page, "finish": self._tool_finish}

    # -- files ----------------------------------------------------------------------------------------

    async def _tool_list_files(self, args: dict[str, Any], label: str) -> ToolResult:
        paths = await asyncio.to_thread(self.turn.workspace.listing, str(args.get("path") or ""))
        return ToolResult(self.cap("\n".join(paths) if paths else "(no files)"))

    async def _tool_read_file(self, args: dict[str, Any], label: str) -> ToolResult:
        data = await asyncio.to_thread(self.turn.workspace.read_bytes, str(args["path"]),
                                       limit=self.result_chars * 4 + 1)
        text = data.decode("utf-8", "replace")
        return ToolResult(self.cap(text) if text else "(empty file)")

    async def _tool_write_file(self, args: dict[str, Any], label: str) -> ToolResult:
        content = args["content"]
        if not isinstance(content, str):
            raise TypeError("content must be a string")
        if len(content.encode("utf-8", "surrogatepass")) > MAX_WRITE_BYTES:
            return ToolResult(f"error: over {MAX_WRITE_BYTES} bytes; write smaller files", ok=False)
        await asyncio.to_thread(self.turn.workspace.write, str(args["path"]), content)
        return ToolResult(f"wrote {args['path']} ({len(content)} characters)")

    async def _tool_delete_file(self, args: dict[str, Any], label: str) -> ToolResult:
        await asyncio.to_thread(self.turn.workspace.delete, str(args["path"]))
        return ToolResult(f"deleted {args['path']}")

    # -- build and page ---------------------------------------------------------------------------------

    async def _build(self, label: str) -> ToolResult:
        answer = await asyncio.to_thread(self.turn.workspace.answer)
        snapshot = await asyncio.to_thread(self.turn.workspace.snapshot)
        if not answer.files:
            return ToolResult("nothing to build: the workspace holds no answer files yet", ok=False,
                              build={"ok": False, "status": "nothing"})
        check = await self.turn.tools.build_files(answer.files)
        self.last_build, self._built_snapshot = check, snapshot
        status = check.build.status if check.build is not None else "not_built"
        name = self.turn.tools.evidence.write_agent_file(f"{label}.build.log", check.log).name
        tail = check.log[-BUILD_LOG_TAIL:]
        verdict = "the build succeeded" if check.ok else f"the build failed ({status})"
        return ToolResult(f"{verdict}; the end of its log:\n{tail}", ok=check.ok, files={"build_log": name},
                          build={"ok": check.ok, "status": status})

    async def _tool_run_build(self, args: dict[str, Any], label: str) -> ToolResult:
        return await self._build(label)

    async def _tool_read_build_log(self, args: dict[str, Any], label: str) -> ToolResult:
        if self.last_build is None:
            return ToolResult("no build yet: call run_build first", ok=False)
        lines = self.last_build.log.splitlines()
        first = max(1, int(args.get("from_line") or 1))
        count = min(400, max(1, int(args.get("lines") or 200)))
        shown = lines[first - 1:first - 1 + count]
        return ToolResult(self.cap(f"lines {first}-{first + len(shown) - 1} of {len(lines)}:\n" + "\n".join(shown)))

    async def _tool_view_page(self, args: dict[str, Any], label: str) -> ToolResult:
        current = await asyncio.to_thread(self.turn.workspace.snapshot)
        built: ToolResult | None = None
        if self.last_build is None or current != self._built_snapshot:
            built = await self._build(label)
        check = self.last_build
        if check is None or not check.ok or check.build is None:
            text = built.text if built is not None else "the last build failed; fix it first"
            return ToolResult(f"no page to view: {text}", ok=False, files=built.files if built else {},
                              build=built.build if built else None)
        preview = await self.turn.tools.preview(check.build)
        files = dict(built.files) if built is not None else {}
        if preview.screenshot_png is not None:
            files["screenshot"] = self.turn.tools.evidence.write_agent_file(f"{label}.png", preview.screenshot_png).name
        parts = [f"load error: {preview.load_error}"] if preview.load_error else []
        parts.append("visible text:\n" + (preview.visible_text.strip() or "(none: the page shows no text)"))
        if preview.console_errors:
            parts.append("console errors:\n" + "\n".join(preview.console_errors[:20]))
        if preview.page_errors:
            parts.append("page errors:\n" + "\n".join(preview.page_errors[:20]))
        if self.screenshots and preview.screenshot_png is not None:
            parts.append("(the screenshot follows)")
        return ToolResult(self.cap("\n\n".join(parts)), ok=not preview.load_error,
                          image_png=preview.screenshot_png if self.screenshots else None, files=files,
                          build=built.build if built is not None else None)

    async def _tool_finish(self, args: dict[str, Any], label: str) -> ToolResult:
        summary = str(args.get("summary") or "")
        return ToolResult("done", finished=summary)
