"""The evidence bundle an LLM judge reads (EvoGenUI-Bench §4.2 and Appendix D.2.1).

Three kinds of evidence: rendered state (screenshot, final DOM, visible text), execution evidence (actor
trace, tool and runtime logs, runtime state), and artifact context (source, build status, assistant text,
compact previous turns); plus the private validation contract. Every section is bounded so the prompt
fits a model's context; a truncation is always said, never silent. What is missing is named too (no
screenshot, no trace, ...), so the judge does not mistake absent evidence for absent behaviour.
"""

from __future__ import annotations

import base64
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.turns.evidence_folder import EvidenceFolder
from runner.judges.base import JudgeInput
from runner.judges.llm_settings import LLMJudgeSettings
from runner.models.untrusted import quote



_LOG_KEYS = ("seq", "tool", "arguments", "ok", "error", "result")
_RESOURCE_LOG_KEYS = ("seq", "uri", "ok", "error", "mime_type", "contents")
_SCRIPT_OR_STYLE = re.compile(r"(<(script|style)\b[^>]*>)(.*?)(</\2\s*>)", re.DOTALL | re.IGNORECASE)


@dataclass
class Bundle:
    """User-message content parts plus a record of what went in (kept in the verdict's raw field)."""

    parts: list[dict[str, Any]]
    included: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return join_text(self.parts)


def join_text(parts: list[dict[str, Any]]) -> str:
    """Text parts as one text (a model without vision gets a plain string)."""
    return "\n\n".join(part["text"] for part in parts if part.get("type") == "text")


def clip(text: str, limit: int) -> str:
    """At most `limit` characters; a cut is marked with how much was left out."""
    text = text or ""
    if limit <= 0:
        return "" if not text else f"[omitted: {len(text)} characters]"
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... truncated: {len(text) - limit} more characters]"


def tail(text: str, limit: int) -> str:
    text = text or ""
    if len(text) <= limit:
        return text
    return f"[... {len(text) - limit} earlier characters omitted]\n" + text[-limit:]


def image_data_url(path: Path, *, max_side: int) -> str:
    """A PNG as a data URL, scaled down (aspect kept) so its longer side is at most max_side pixels."""
    data = path.read_bytes()
    if max_side > 0:
        from PIL import Image

        with Image.open(io.BytesIO(data)) as image:
            if max(image.size) > max_side:
                scale = max_side / max(image.size)
                resized = image.convert("RGB").resize(
                    (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
                )
                buffer = io.BytesIO()
                resized.save(buffer, format="PNG")
                data = buffer.getvalue()
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def read_tool_log(judge_input: JudgeInput) -> list[dict[str, Any]] | None:
    """The tool log (re-read from the evidence folder, else what the packet gave); None: no tool runtime."""
    log = EvidenceFolder(judge_input.out_dir).read_tool_log()
    if log is not None:
        return log
    return list(judge_input.tool_log) if judge_input.tool_log else None


def read_runtime_state(judge_input: JudgeInput) -> Any:
    state = EvidenceFolder(judge_input.out_dir).read_runtime_state()
    return state if state is not None else judge_input.runtime_state


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _section(title: str, body: str) -> str:
    """A `## ` heading and its body. Whatever the artifact wrote is quoted inside the body (runner/models/untrusted.py),
    every line of it prefixed, so only these headings start a line with `## `."""
    return f"## {title}\n{body.strip() if body.strip() else '(empty)'}"


def _fenced(text: str | None, source: str, limit: int | None = None, *, keep_end: bool = False) -> str:
    """The artifact's `text` quoted as untrusted data, cut to `limit` characters (its head, or its tail with
    `keep_end`); the cut is said outside the block, where the artifact cannot forge or hide it."""
    text = text or ""
    if limit is None or len(text) <= limit:
        return quote(text, source)
    if limit <= 0:
        return f"[omitted: {len(text)} characters of {source}]"
    if keep_end:
        return f"[... {len(text) - limit} earlier characters omitted]\n" + quote(text[-limit:], source)
    return quote(text[:limit], source) + f"\n[... truncated: {len(text) - limit} more characters]"


def _contract(judge_input: JudgeInput, limit: int) -> str:
    turn = judge_input.turn
    lines = []
    for requirement in turn.requirements:
        lines.append(f"- [{requirement.id}] ({requirement.kind}) {requirement.description}")
    text = "Requirements of this turn:\n" + ("\n".join(lines) if lines else "(none listed)")
    contract = turn.extra.get("validation_contract")
    if contract:
        text += "\n\nValidation contract (verbatim):\n" + clip(_json(contract), limit)
    return text


def _previous(judge_input: JudgeInput, per_field: int) -> str:
    lines = []
    for previous in judge_input.previous_turns:
        turn = previous.get("turn")
        lines.append(
            f"- Turn {turn}: request: {clip(str(previous.get('request', '')), per_field)}\n"
            f"  assistant text:\n{_fenced(str(previous.get('assistant_text', '')), f'turn {turn} assistant text', per_field)}\n"
            f"  final UI text:\n{_fenced(str(previous.get('ui_text', '')), f'turn {turn} final UI text', per_field)}"
        )
    return "\n".join(lines) if lines else "(this is the first turn)"


def _build(judge_input: JudgeInput, limit: int) -> str:
    build = judge_input.build
    log = build.log
    log_path = EvidenceFolder(judge_input.out_dir).build_log
    if not log and log_path.exists():
        log = log_path.read_text(errors="replace")
    text = f"status: {build.status}"
    if build.rejected:
        text += "\nrejected files:\n" + _fenced("\n".join(build.rejected), "rejected files")
    if log.strip():
        text += "\nlog tail:\n" + _fenced(log.strip(), "build log", limit, keep_end=True)
    return text


def final_dom_path(judge_input: JudgeInput) -> Path | None:
    """The DOM as the actor left it, else the load-time DOM (no actor ran, or the final capture failed)."""
    evidence = judge_input.evidence
    if evidence is None:
        return None
    for name in (evidence.final_dom_path, evidence.dom_path):
        if name and (judge_input.out_dir / name).exists():
            return judge_input.out_dir / name
    return None


def _dom(judge_input: JudgeInput, limit: int) -> str:
    path = final_dom_path(judge_input)
    if path is None:
        return "(no DOM captured)"
    # Bundled scripts and styles say nothing the source section does not; keep the markup.
    html = _SCRIPT_OR_STYLE.sub(lambda m: f"{m.group(1)}[{len(m.group(3))} chars]{m.group(4)}" if m.group(3).strip()
                                else m.group(0), path.read_text(errors="replace"))
    return _fenced(html, "final DOM", limit)


def _page(judge_input: JudgeInput, settings: LLMJudgeSettings) -> str:
    evidence = judge_input.evidence
    if evidence is None:
        return "(the artifact was not loaded in a browser)"
    lines = [f"url: {json.dumps(evidence.url)}", f"load time: {evidence.load_s:.2f} s"]
    if evidence.load_error:
        lines.append("LOAD ERROR:\n" + _fenced(evidence.load_error, "load error", 2000))
    if evidence.blank:
        lines.append("the page is BLANK after load")
    errors = list(evidence.page_errors)
    errors += [e for e in judge_input.later_page_errors() if e not in errors]
    lines.append(f"uncaught page errors: {len(errors)}")
    if errors:
        lines.append(_fenced("\n".join(f"- {clip(error, 400)}" for error in errors[:5]), "page errors"))
    console = [c for c in evidence.console if c.get("type") in ("error", "warning")]
    if console:
        lines.append(f"console errors/warnings: {len(console)}")
        lines.append(_fenced("\n".join(f"- [{c.get('type')}] {clip(str(c.get('text', '')), 300)}"
                                       for c in console[:8]), "console"))
    blocked = [n.url for n in evidence.network if n.blocked]
    if blocked:
        lines.append(f"blocked external requests: {len(blocked)}, e.g.\n" + _fenced(blocked[0], "blocked request"))
    if evidence.final_dom_path:
        lines.append("visible text after the actor's interactions:\n"
                     + _fenced(evidence.final_visible_text, "visible text", settings.max_visible_text_chars))
    else:
        if evidence.final_error:
            lines.append("the capture after the actor failed; showing the page after load. The failure:\n"
                         + _fenced(evidence.final_error, "final capture error", 1000))
        lines.append("visible text after load:\n"
                     + _fenced(evidence.visible_text, "visible text", settings.max_visible_text_chars))
    return "\n".join(lines)


def _trace(judge_input: JudgeInput, limit: int) -> str:
    trace = judge_input.trace
    if trace is None:
        return "(no interaction actor ran on this turn)"
    # Actions, errors and observations carry the page's text (an element's label, what an LLM actor chose
    # after reading the page): each is quoted; the step's number, outcome and DOM change are the harness's.
    lines = [f"actor: {trace.actor}; steps: {len(trace.steps)}; finished: {trace.finished}"]
    used = len(lines[0])
    for shown, step in enumerate(trace.steps):
        changed = {True: "DOM changed", False: "no DOM change", None: "DOM change unknown"}[step.dom_changed]
        line = f"{step.index}. {'ok' if step.ok else 'FAILED'}; {changed}; action:\n{_fenced(_json(step.action), 'action', 600)}"
        if not step.ok:
            line += "\nerror:\n" + _fenced(step.error, "step error", 200)
        if step.observation:
            line += "\nobserved:\n" + _fenced(step.observation, "observation", 300)
        if used + len(line) > limit:
            lines.append(f"[... {len(trace.steps) - shown} more step(s) omitted: trace budget spent]")
            break
        used += len(line)
        lines.append(line)
    if trace.summary:
        lines.append("summary:\n" + _fenced(_json(trace.summary), "actor summary", 1000))
    if trace.claim:
        lines.append("actor's own claim (ADVISORY ONLY, not evidence):\n" + _fenced(trace.claim, "actor claim", 500))
    return "\n".join(lines)


def read_resource_log(judge_input: JudgeInput) -> list[dict[str, Any]] | None:
    """The artifact's resource reads; None: the task serves no resources."""
    return EvidenceFolder(judge_input.out_dir).read_resource_log()


def _resources(judge_input: JudgeInput, settings: LLMJudgeSettings) -> list[str]:
    log = read_resource_log(judge_input)
    if log is None:
        return []
    entries = [_json({key: entry[key] for key in _RESOURCE_LOG_KEYS if key in entry}) for entry in log]
    return [f"resource log: {len(log)} read(s)",
            _fenced("\n".join(entries), "resource log", settings.max_tool_log_chars, keep_end=True)]


def _tools(judge_input: JudgeInput, settings: LLMJudgeSettings) -> tuple[str, int | None]:
    log = read_tool_log(judge_input)
    state = read_runtime_state(judge_input)
    tool_names = sorted(judge_input.task.extra.get("tools", {}) or {})
    resource_lines = _resources(judge_input, settings)
    if log is None and state is None and not tool_names and not resource_lines:
        return "(this task has no tool runtime)", None
    lines = []
    if tool_names:
        lines.append("tools bound for this task: " + ", ".join(tool_names))
    lines += resource_lines
    if log is None:
        lines.append("tool log: (none recorded)")
    else:
        lines.append(f"tool log: {len(log)} call(s)")
        entries = []
        for entry in log:
            compact = {key: entry[key] for key in _LOG_KEYS if key in entry}
            if settings.include_state_diffs and "state_after" in entry:
                compact["state_after"] = entry.get("state_after")
            entries.append(_json(compact))
        lines.append(_fenced("\n".join(entries), "tool log", settings.max_tool_log_chars, keep_end=True))
    if state is not None:
        lines.append("runtime state now:\n" + _fenced(_json(state), "runtime state", settings.max_state_chars))
    return "\n".join(lines), (len(log) if log is not None else None)


def _sources(files: dict[str, str], limit: int) -> str:
    if not files:
        return "(no source files)"
    parts = []
    remaining = limit
    for path in sorted(files):
        content = files[path]
        # The path is the model's text too: it is the block's (JSON-quoted) label, never a heading.
        if remaining <= 0:
            parts.append(f"[omitted: {len(content)} characters of {json.dumps(path)}; source budget spent]")
            continue
        parts.append(_fenced(content, path, remaining))
        remaining -= min(len(content), remaining)
    return "\n\n".join(parts)


def build_bundle(judge_input: JudgeInput, settings: LLMJudgeSettings, *, vision: bool) -> Bundle:
    """The user-message parts for one turn: text sections, then the screenshot(s) as image parts."""
    task, turn = judge_input.task, judge_input.turn
    included: dict[str, Any] = {}
    # (fitting section, text): the section names say what runner/models/fitting.py may cut, in TRIM_ORDER.
    sections: list[tuple[str | None, str]] = [
        (None, _section(
            "Task",
            f"id: {task.id}\ntitle: {task.title or task.id}\ndomain: {task.domain}\n"
            f"suite: {task.sub_suite or task.suite}"
            + (f"\npublic context: {clip(task.context, settings.max_context_chars)}" if task.context else ""),
        )),
        (None, _section(f"Current user request (turn {turn.index} of {len(task.turns)})", turn.prompt)),
        ("contract", _section("Private validation contract (hidden from the generator)",
                              _contract(judge_input, settings.max_contract_chars))),
        ("previous", _section("Previous turns (compact)", _previous(judge_input, settings.max_previous_chars))),
        ("assistant", _section("Assistant text returned with this turn's source",
                               _fenced(judge_input.assistant_text, "assistant text", settings.max_assistant_chars))),
        ("build", _section("Build", _build(judge_input, settings.max_build_log_chars))),
        ("page", _section("Rendered page", _page(judge_input, settings))),
        ("dom", _section("Final DOM (after the actor; scripts and styles elided)",
                         _dom(judge_input, settings.max_dom_chars))),
        ("trace", _section("Interaction actor trace", _trace(judge_input, settings.max_trace_chars))),
    ]
    tools_text, tool_calls = _tools(judge_input, settings)
    sections.append(("tools", _section("Tool and runtime logs", tools_text)))
    sections.append(("source", _section("Source files", _sources(judge_input.files, settings.max_source_chars))))
    included["tool_calls"] = tool_calls
    included["trace_steps"] = len(judge_input.trace.steps) if judge_input.trace is not None else None
    included["previous_turns"] = len(judge_input.previous_turns)
    included["source_files"] = sorted(judge_input.files)

    images: list[dict[str, Any]] = []
    screenshot_note = ""
    if not settings.include_screenshot:
        screenshot_note = "Screenshot: omitted by configuration."
    elif not vision:
        screenshot_note = ("Screenshot: omitted because the judge model has no vision input; judge presentation "
                           "from the DOM and visible text, and say so in the reason.")
    else:
        for label, path, fit in _screenshots(judge_input, settings):
            images.append({"type": "text", "text": label})
            # A full page goes at full size: the request fitting tiles it rather than shrinking it unreadable.
            url = image_data_url(path, max_side=0 if fit.get("full_page") else settings.screenshot_max_side)
            images.append({"type": "image_url", "image_url": {"url": url}, "fit": fit})
        if not images:
            screenshot_note = "Screenshot: none was captured (the page did not render)."
    included["screenshots"] = len(images) // 2
    if screenshot_note:
        sections.append((None, _section("Screenshot", screenshot_note)))
        included["screenshot_note"] = screenshot_note
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": text, **({"fit": {"section": name, "keep": "tail" if name == "build" else "head",
                                                   "heading": True}} if name else {})}
        for name, text in sections
    ]
    return Bundle(parts=parts + images, included=included)


def _screenshots(judge_input: JudgeInput, settings: LLMJudgeSettings) -> list[tuple[str, Path, dict[str, Any]]]:
    """(label, file, fitting marks) of each screenshot the judge gets; the page's own screenshot is kept
    before the step screenshots when the server takes fewer images (priority)."""
    shots: list[tuple[str, Path, dict[str, Any]]] = []
    evidence = judge_input.evidence
    if evidence is not None:
        # The page as the actor left it (EvoGenUI-Bench §4.2, §5.2 "refreshed full-page screenshots"), else after load.
        full = settings.screenshot_kind == "full"
        final = evidence.final_screenshot_full if full else evidence.final_screenshot_viewport
        final = final or evidence.final_screenshot_viewport or evidence.final_screenshot_full
        loaded = evidence.screenshot_full if full else evidence.screenshot_viewport
        loaded = loaded or evidence.screenshot_viewport or evidence.screenshot_full
        page_fit = {"priority": 1, "full_page": full, "viewport_height": _viewport_height(judge_input)}
        if final and (judge_input.out_dir / final).exists():
            shots.append(("Screenshot of the page after the actor's interactions (final state):",
                          judge_input.out_dir / final, {**page_fit, "name": final}))
        elif loaded and (judge_input.out_dir / loaded).exists():
            shots.append(("Screenshot of the rendered page after load:", judge_input.out_dir / loaded,
                          {**page_fit, "name": loaded}))
    trace = judge_input.trace
    if trace is not None and settings.max_step_screenshots > 0:
        step_shots = [step for step in trace.steps
                      if step.screenshot_after and (judge_input.out_dir / step.screenshot_after).exists()]
        for step in step_shots[-settings.max_step_screenshots:]:
            shots.append((f"Screenshot after actor step {step.index}:", judge_input.out_dir / step.screenshot_after,
                          {"priority": 0, "name": step.screenshot_after}))
    return shots


def _viewport_height(judge_input: JudgeInput) -> int | None:
    """The browser viewport's height (the viewport screenshot's), the height of a full page's tiles."""
    evidence = judge_input.evidence
    name = evidence.screenshot_viewport if evidence is not None else None
    if not name or not (judge_input.out_dir / name).exists():
        return None
    from PIL import Image

    with Image.open(judge_input.out_dir / name) as image:
        return int(image.height)


# The bundle's sections as runner/models/fitting.py cuts them to fit a model's context, the first first:
# the least decisive evidence (source, which the page shows; the raw DOM) before the behaviour (logs, trace),
# the page's own text and, last, the private contract. The task and the current request are never cut.
TRIM_ORDER = ("source", "dom", "tools", "previous", "build", "assistant", "trace", "page", "contract")
