"""One turn's evidence as the viewer's pages show it: read from its evidence folder with EvidenceFolder's names
and readers (runner/turns/evidence_folder.py), texts capped with a link to the whole file, every file named by
its path inside the run dir (the app serves it under /files/<run>/<path>).

Nothing here is trusted: it is model and page output, handed to autoescaping templates as plain strings.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.report.collect import RunData
from runner.turns.evidence_folder import EvidenceFolder
from runner.turns.records import FailureBucket, TurnRecord, Verdict
from runner.view.catalog import ViewRun
from runner.view.source_diff import FileDiff, diff_trees, read_tree

MAX_TEXT = 20_000  # characters of one text block inlined; the rest is behind the link to its file
MAX_BUILD_LOG = 12_000  # a build log's tail (its errors are at the end)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # terminal colours in build logs
_FRAME = set("│╰╭╮╯─┬┴├┤|")  # the frame of a bundler's source excerpt
_IMAGE_NAME = re.compile(r"[\w.-]+\.(?:png|jpe?g|webp)", re.IGNORECASE)


@dataclass
class Text:
    """A text block as shown: at most MAX_TEXT characters, and where the whole of it is."""

    text: str
    cut: int = 0  # characters not shown
    href: str = ""  # run-relative path of the file holding all of it ("" when it lives in no file of its own)

    @classmethod
    def of(cls, text: str, href: str = "", *, limit: int = MAX_TEXT, tail: bool = False) -> Text:
        text = _ANSI.sub("", text)
        if len(text) <= limit:
            return cls(text, 0, href)
        shown = text[-limit:] if tail else text[:limit]
        return cls(shown, len(text) - limit, href)


@dataclass
class Step:
    index: Any
    kind: str
    target: str
    ok: bool
    error: str
    dom_changed: bool | None
    mutations: int
    observation: str
    before: str  # run-relative image paths ("" when the step has none)
    after: str


@dataclass
class AgentToolCall:
    name: str
    arguments: Text
    result: Text
    ok: bool
    build: dict[str, Any] | None = None  # the build it ran: {"ok", "status"}
    build_log: str = ""  # run-relative paths ("" when it kept none)
    screenshot: str = ""


@dataclass
class AgentStep:
    """One step of an agent (runner/agents/): the model's answer, its tool calls with their results, the files
    they changed."""

    index: Any
    assistant: Text
    calls: list[AgentToolCall]
    files_changed: dict[str, list[str]]
    usage: dict[str, Any]
    seconds: Any


@dataclass
class Requirement:
    id: str
    status: str
    reason: str
    check: dict[str, Any] | None = None  # the outcome of its executable check (rules judge), when there is one
    images: list[str] = field(default_factory=list)  # evidence images its reason names


@dataclass
class FailedAttempt:
    """One rejected answer of a failed model call, as the viewer shows it: what the model wrote, how it ended."""

    attempt: Any
    finish_reason: str
    tokens: str  # "64 of 64 tokens (0 reasoning)"
    error: str
    next: str  # what the next attempt changed, or why none followed
    text: Text
    trailing_whitespace: int  # whitespace characters the answer ends with (a decoder loop shows here)
    reasoning: Text | None = None


@dataclass
class FailedCall:
    """A structured model call that failed (or was accepted after rejected attempts), from failed_calls.jsonl or
    judge_failed_calls.jsonl (runner/models/structured.py, failed_call_record)."""

    role: str
    model: str
    outcome: str  # truncated | malformed | recovered | empty
    error: str
    where: str  # the folder's place: "" for the slot, "cases/<id>" for a tester's case, "step 3" for an actor step
    href: str  # the JSONL file holding it whole
    attempts: list[FailedAttempt] = field(default_factory=list)


@dataclass
class PacketPart:
    name: str
    summary: str
    body: Text


@dataclass
class TurnEvidence:
    run: ViewRun
    record: TurnRecord
    folder: Path | None  # None: the turn has no evidence folder on this machine
    base: str  # the evidence folder relative to the run dir
    prompt: str = ""
    request: list[tuple[str, Text]] = field(default_factory=list)  # (role, text) per message of request.json
    assistant: Text | None = None
    raw_response: Text | None = None
    screenshot: str = ""  # after load
    final_screenshot: str = ""  # after the actor
    full_pages: list[tuple[str, str]] = field(default_factory=list)  # (label, path)
    dom: str = ""  # the DOM files, linked as text (the app serves them as text/plain)
    final_dom: str = ""
    trace: dict[str, Any] | None = None
    steps: list[Step] = field(default_factory=list)
    agent: dict[str, Any] | None = None  # agent.json: who worked the workspace, what stopped it, what it spent
    agent_steps: list[AgentStep] = field(default_factory=list)
    verdict: Verdict | None = None
    requirements: list[Requirement] = field(default_factory=list)
    build_log: Text | None = None
    page_errors: Text | None = None
    console: Text | None = None
    tool_log: Text | None = None
    network: list[dict[str, Any]] = field(default_factory=list)  # the visit's requests (network.json)
    network_blocked: int = 0
    states: list[tuple[str, Text]] = field(default_factory=list)  # (title, state)
    packet_parts: list[PacketPart] = field(default_factory=list)
    packet_images: list[str] = field(default_factory=list)
    judge_requests: Text | None = None
    failed_calls: list[FailedCall] = field(default_factory=list)  # what every failed model call wrote
    judge_bundle: dict[str, Any] = field(default_factory=dict)  # what a model judge's bundle included (counts, names)
    judge_images: list[str] = field(default_factory=list)
    playwright_trace: str = ""
    sources: list[FileDiff] = field(default_factory=list)
    diff_against: int | None = None  # the earlier turn the sources are compared with (None: none had sources)
    blocked_by: TurnRecord | None = None  # for a blocked turn: the earlier turn that left no artifact
    blocked_error: str = ""  # that turn's error, its first telling line
    error: str = ""  # the record's error without terminal colours
    other_files: list[str] = field(default_factory=list)

    def path(self, name: str) -> str:
        return f"{self.base}/{name}" if self.base else name


# -- small readers -------------------------------------------------------------------------------------


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False)


def message_text(content: Any) -> str:
    """An OpenAI chat message's content as text; images and other parts named, not inlined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                pieces.append(str(part.get("text", "")))
            elif isinstance(part, dict):
                pieces.append(f"[{part.get('type', 'part')}]")
            else:
                pieces.append(str(part))
        return "\n".join(pieces)
    return json_text(content)


def first_line(text: str, limit: int = 160) -> str:
    line = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text or "")


def error_line(text: str, limit: int = 160) -> str:
    """The first line of an error that says something: a build error's tail starts inside a framed excerpt of
    the source (lines drawn with box characters), which says nothing on its own."""
    for line in strip_ansi(text).splitlines():
        if line.strip()[:1] in _FRAME or sum(c.isalnum() for c in line) < 3:
            continue
        line = line.strip()
        return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def task_entry(data: RunData, task_id: str) -> dict[str, Any]:
    """The task's public library entry (tasks.json); {} when the run has none."""
    return next((task for task in data.library if task.get("id") == task_id), {})


def turn_prompt(data: RunData, task_id: str, turn: int, folder: Path | None = None) -> str:
    """The turn's user prompt: from the task library, else the last user message the model was sent."""
    for entry in task_entry(data, task_id).get("turns") or []:
        if entry.get("index") == turn:
            return str(entry.get("prompt") or "")
    if folder is not None:
        request = EvidenceFolder(folder).read_json(EvidenceFolder.REQUEST)
        messages = request.get("messages") if isinstance(request, dict) else None
        for message in reversed(messages or []):
            if isinstance(message, dict) and message.get("role") == "user":
                return message_text(message.get("content"))
    return ""


def evidence_folder(run: ViewRun, record: TurnRecord) -> Path | None:
    if run.path is None or not record.evidence_dir:
        return None
    folder = (run.path / record.evidence_dir).resolve()
    return folder if folder.is_dir() and folder.is_relative_to(run.path.resolve()) else None


def card_screenshot(run: ViewRun, record: TurnRecord) -> str:
    """The screenshot that sums a turn up: the page the actor left, else the page after load ("" when none)."""
    folder = evidence_folder(run, record)
    if folder is None:
        return ""
    for name in (EvidenceFolder.FINAL_SCREENSHOT_VIEWPORT, EvidenceFolder.SCREENSHOT_VIEWPORT):
        if (folder / name).is_file():
            return f"{record.evidence_dir}/{name}"
    return ""


def task_records(run: ViewRun, task_id: str) -> list[TurnRecord]:
    return sorted((r for r in run.data.records if r.task_id == task_id), key=lambda r: r.turn)


def mark(record: TurnRecord) -> str:
    """pass / fail / unassessed for a turn that ran, else its failure bucket in words ("build failed")."""
    if record.status is not FailureBucket.OK:
        return record.status.value.replace("_", " ")
    return {True: "pass", False: "fail", None: "unassessed"}[record.passed]


def mark_class(record: TurnRecord) -> str:
    return {True: "pass", False: "fail", None: "unassessed"}[record.passed]


# -- the turn ------------------------------------------------------------------------------------------


def load_turn(run: ViewRun, record: TurnRecord) -> TurnEvidence:
    folder = evidence_folder(run, record)
    turn = TurnEvidence(run, record, folder, record.evidence_dir.rstrip("/"))
    turn.prompt = turn_prompt(run.data, record.task_id, record.turn, folder)
    turn.verdict = record.verdict
    turn.error = strip_ansi(record.error)
    if record.status is FailureBucket.BLOCKED:
        earlier = [r for r in task_records(run, record.task_id) if r.turn < record.turn]
        turn.blocked_by = next((r for r in reversed(earlier) if r.status is not FailureBucket.BLOCKED), None)
        turn.blocked_error = error_line(turn.blocked_by.error) if turn.blocked_by else ""
    if folder is None:
        return turn
    ev = EvidenceFolder(folder)
    if turn.verdict is None:  # a verdict written after the record (a judging still running, a re-judge)
        data = ev.read_json(EvidenceFolder.VERDICT)
        if isinstance(data, dict):
            try:
                turn.verdict = Verdict.model_validate(data)
            except ValueError:
                pass
    _read_request(turn, ev)
    _read_answer(turn, ev)
    _read_screens(turn, folder)
    _read_trace(turn, ev)
    _read_agent(turn, ev)
    packet = _read_packet(turn, ev)
    _read_requirements(turn, folder, packet)
    _read_logs(turn, ev)
    _read_failed_calls(turn, folder)
    _read_sources(turn, run, record, ev)
    if (folder / EvidenceFolder.BROWSER_TRACE).is_file():
        turn.playwright_trace = turn.path(EvidenceFolder.BROWSER_TRACE)
    shown = {EvidenceFolder.SOURCES, EvidenceFolder.WORKSPACE, EvidenceFolder.AGENT_FILES}
    turn.other_files = sorted(turn.path(p.name) for p in folder.iterdir() if p.is_file() and p.name not in shown)
    return turn


def _read_request(turn: TurnEvidence, ev: EvidenceFolder) -> None:
    request = ev.read_json(EvidenceFolder.REQUEST)
    for message in (request.get("messages") if isinstance(request, dict) else None) or []:
        if isinstance(message, dict):
            turn.request.append((str(message.get("role", "")),
                                 Text.of(message_text(message.get("content")), turn.path(EvidenceFolder.REQUEST))))


def _read_answer(turn: TurnEvidence, ev: EvidenceFolder) -> None:
    state = ev.read_json(EvidenceFolder.EPISODE_STATE)
    text = state.get("assistant_text") if isinstance(state, dict) else None
    if text:
        turn.assistant = Text.of(str(text), turn.path(EvidenceFolder.RAW_RESPONSE))
    raw = _read_text(ev.raw_response)
    if raw:
        turn.raw_response = Text.of(raw, turn.path(EvidenceFolder.RAW_RESPONSE))


def _read_screens(turn: TurnEvidence, folder: Path) -> None:
    if (folder / EvidenceFolder.SCREENSHOT_VIEWPORT).is_file():
        turn.screenshot = turn.path(EvidenceFolder.SCREENSHOT_VIEWPORT)
    if (folder / EvidenceFolder.FINAL_SCREENSHOT_VIEWPORT).is_file():
        turn.final_screenshot = turn.path(EvidenceFolder.FINAL_SCREENSHOT_VIEWPORT)
    if (folder / EvidenceFolder.DOM).is_file():
        turn.dom = turn.path(EvidenceFolder.DOM)
    if (folder / EvidenceFolder.FINAL_DOM).is_file():
        turn.final_dom = turn.path(EvidenceFolder.FINAL_DOM)
    for label, name in (("full page after load", EvidenceFolder.SCREENSHOT_FULL),
                        ("full page after the actor", EvidenceFolder.FINAL_SCREENSHOT_FULL)):
        if (folder / name).is_file():
            turn.full_pages.append((label, turn.path(name)))


def _target(action: dict[str, Any]) -> str:
    element = action.get("element") if isinstance(action.get("element"), dict) else {}
    target = element.get("label") or action.get("target") or element.get("selector") or ""
    if isinstance(target, dict):  # a scripted step's locator: role and name
        target = " ".join(str(v) for k, v in target.items() if k in ("role", "name", "text", "selector") and v)
    return str(target)


def _read_trace(turn: TurnEvidence, ev: EvidenceFolder) -> None:
    trace = ev.read_json(EvidenceFolder.TRACE)
    if not isinstance(trace, dict):
        return
    turn.trace = trace
    for step in trace.get("steps") or []:
        if not isinstance(step, dict):
            continue
        action = step.get("action") if isinstance(step.get("action"), dict) else {}
        shots = []
        for key in ("screenshot_before", "screenshot_after"):
            name = str(step.get(key) or "")
            shots.append(turn.path(name) if name and (ev.path / name).is_file() else "")
        turn.steps.append(Step(step.get("index"), str(action.get("kind") or action.get("action") or ""), _target(action),
                               bool(step.get("ok", True)), str(step.get("error") or ""), step.get("dom_changed"),
                               int(step.get("mutations") or 0), str(step.get("observation") or ""), *shots))


AGENT_TEXT = 4_000  # an agent step's text, tool arguments and results as inlined (the files hold them whole)


def _agent_file(turn: TurnEvidence, ev: EvidenceFolder, name: Any) -> str:
    """The run-relative path of one of the agent's own files, when it is there ("" else)."""
    if not isinstance(name, str) or not name or "/" in name or not (ev.agent_files / name).is_file():
        return ""
    return turn.path(f"{EvidenceFolder.AGENT_FILES}/{name}")


def _read_agent(turn: TurnEvidence, ev: EvidenceFolder) -> None:
    """An agent's slot: its summary and its transcript, step by step."""
    turn.agent = ev.read_agent()
    if turn.agent is None:
        return
    href = turn.path(EvidenceFolder.AGENT_STEPS)
    for step in ev.read_agent_steps():
        calls = []
        for call in step.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            calls.append(AgentToolCall(
                name=str(call.get("name") or ""), ok=bool(call.get("ok", True)),
                arguments=Text.of(str(call.get("arguments") or ""), href, limit=AGENT_TEXT),
                result=Text.of(str(call.get("result") or ""), href, limit=AGENT_TEXT),
                build=call.get("build") if isinstance(call.get("build"), dict) else None,
                build_log=_agent_file(turn, ev, call.get("build_log")),
                screenshot=_agent_file(turn, ev, call.get("screenshot"))))
        changed = step.get("files_changed") if isinstance(step.get("files_changed"), dict) else {}
        turn.agent_steps.append(AgentStep(
            index=step.get("step"), assistant=Text.of(str(step.get("assistant") or ""), href, limit=AGENT_TEXT),
            calls=calls, files_changed={str(k): [str(p) for p in v] for k, v in changed.items() if isinstance(v, list)},
            usage=step.get("usage") if isinstance(step.get("usage"), dict) else {}, seconds=step.get("seconds")))


def _summary(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, dict):
        return f"{len(value)} key(s)"
    if isinstance(value, list):
        return f"{len(value)} item(s)"
    if isinstance(value, str):
        return f"{len(value)} character(s)"
    return str(value)


def _read_failed_calls(turn: TurnEvidence, folder: Path) -> None:
    """The slot's failed model calls (the execution roles', the judging roles'), and its test cases' (cases/<id>/)."""
    folders = [folder, *sorted(path for path in folder.glob("cases/*") if path.is_dir())]
    for place in folders:
        ev = EvidenceFolder(place)
        where = place.relative_to(folder).as_posix() if place != folder else ""
        for judging in (False, True):
            name = EvidenceFolder.JUDGE_FAILED_CALLS if judging else EvidenceFolder.FAILED_CALLS
            href = turn.path(f"{where}/{name}" if where else name)
            for entry in ev.read_failed_calls(judging=judging):
                turn.failed_calls.append(_failed_call(entry, where, href))


def _failed_call(entry: dict[str, Any], where: str, href: str) -> FailedCall:
    place = [where] if where else []
    if entry.get("step") is not None:
        place.append(f"step {entry['step']}")
    if entry.get("compared_with"):
        place.append(f"compared with {entry['compared_with']}")
    call = FailedCall(role=str(entry.get("role") or "model"), model=str(entry.get("model") or ""),
                      outcome=str(entry.get("outcome") or ""), error=strip_ansi(str(entry.get("error") or "")),
                      where=", ".join(place), href=href)
    for attempt in entry.get("attempts") or []:
        if not isinstance(attempt, dict):
            continue
        usage = attempt.get("usage") if isinstance(attempt.get("usage"), dict) else {}
        tokens = f"{usage.get('completion_tokens', '?')} of {attempt.get('max_tokens') or '?'} tokens"
        if usage.get("reasoning_tokens"):
            tokens += f" ({usage['reasoning_tokens']} reasoning)"
        text = str(attempt.get("text") or "")
        reasoning = str(attempt.get("reasoning") or "")
        call.attempts.append(FailedAttempt(
            attempt=attempt.get("attempt"), finish_reason=str(attempt.get("finish_reason") or ""), tokens=tokens,
            error=str(attempt.get("error") or ""), next=str(attempt.get("next") or ""),
            text=Text.of(text, href, limit=8_000), trailing_whitespace=len(text) - len(text.rstrip()),
            reasoning=Text.of(reasoning, href, limit=8_000) if reasoning else None))
    return call


def _read_packet(turn: TurnEvidence, ev: EvidenceFolder) -> dict[str, Any]:
    """packet.json (what the judge read) as parts, and the images it names that the folder holds."""
    if not ev.has_packet():
        return {}
    try:
        packet = ev.read_packet_json()
    except ValueError as error:
        turn.packet_parts.append(PacketPart(EvidenceFolder.PACKET, "unreadable", Text.of(str(error))))
        return {}
    href = turn.path(EvidenceFolder.PACKET)
    for name, value in packet.items():
        if name == "files":
            value = {path: f"{len(text)} characters" for path, text in value.items()}  # the sources are shown below
        turn.packet_parts.append(PacketPart(name, _summary(value), Text.of(json_text(value), href, limit=8_000)))
    turn.packet_images = _images_named(turn, ev, [packet.get(part) for part in ("evidence", "trace", "suite_context")])
    records = ev.read_request_records(judging=True)
    if records:
        turn.judge_requests = Text.of("\n".join(json.dumps(r, sort_keys=True) for r in records),
                                      turn.path(EvidenceFolder.JUDGE_REQUESTS), limit=8_000)
    raw = turn.verdict.raw if turn.verdict is not None and isinstance(turn.verdict.raw, dict) else {}
    if isinstance(raw.get("evidence"), dict):
        turn.judge_bundle = raw["evidence"]
    # the images a model judge's requests carried (their fitting records name them)
    turn.judge_images = _images_named(turn, ev, [records, raw.get("request")])
    return packet


_FIRST_IMAGES = (EvidenceFolder.SCREENSHOT_VIEWPORT, EvidenceFolder.SCREENSHOT_FULL,
                 EvidenceFolder.FINAL_SCREENSHOT_VIEWPORT, EvidenceFolder.FINAL_SCREENSHOT_FULL)


def _images_named(turn: TurnEvidence, ev: EvidenceFolder, values: list[Any]) -> list[str]:
    """The evidence images these values name that the folder holds: the page's screenshots first, then the
    rest (actor steps, a suite's renders) by name."""
    names = {name for value in values for name in _IMAGE_NAME.findall(json.dumps(value, default=str))
             if (ev.path / name).is_file()}
    order = sorted(names, key=lambda n: (_FIRST_IMAGES.index(n) if n in _FIRST_IMAGES else len(_FIRST_IMAGES), n))
    return [turn.path(name) for name in order]


def _read_requirements(turn: TurnEvidence, folder: Path, packet: dict[str, Any]) -> None:
    """Each requirement with what it cites: its check's outcome (the judge's own, else the packet's live
    check) and any evidence image its reason names."""
    verdict = turn.verdict
    if verdict is None:
        return
    raw_checks = verdict.raw.get("checks") if isinstance(verdict.raw, dict) else None
    checks = raw_checks if isinstance(raw_checks, dict) else packet.get("checks") or {}
    for requirement in verdict.requirements:
        check = checks.get(requirement.id) if isinstance(checks, dict) else None
        images = [turn.path(name) for name in dict.fromkeys(_IMAGE_NAME.findall(requirement.reason))
                  if (folder / name).is_file()]
        turn.requirements.append(Requirement(requirement.id, requirement.status.value, requirement.reason,
                                             check if isinstance(check, dict) else None, images))


def _read_logs(turn: TurnEvidence, ev: EvidenceFolder) -> None:
    build = _read_text(ev.build_log)
    if build:
        turn.build_log = Text.of(build, turn.path(EvidenceFolder.BUILD_LOG), limit=MAX_BUILD_LOG, tail=True)
    for attr, name in (("page_errors", EvidenceFolder.PAGE_ERRORS), ("console", EvidenceFolder.CONSOLE)):
        value = ev.read_json(name)
        if value:
            setattr(turn, attr, Text.of(json_text(value), turn.path(name)))
    network = ev.read_json(EvidenceFolder.NETWORK)
    if isinstance(network, list):
        turn.network = [r for r in network if isinstance(r, dict)]
        turn.network_blocked = sum(1 for r in turn.network if r.get("blocked"))
    tool_log = ev.read_tool_log()
    if tool_log is not None:
        text = "\n".join(json.dumps(entry, sort_keys=True, ensure_ascii=False) for entry in tool_log)
        turn.tool_log = Text.of(text or "(no tool calls)", turn.path(EvidenceFolder.TOOL_LOG))
    for name, title in ((EvidenceFolder.STATE_IN, "state at the turn's start"),
                        (EvidenceFolder.STATE, "state after the actor"),
                        (EvidenceFolder.STATE_CARRIED, "state carried to the next turn")):
        value = ev.read_json(name)
        if value is not None:
            turn.states.append((title, Text.of(json_text(value), turn.path(name))))


def _read_sources(turn: TurnEvidence, run: ViewRun, record: TurnRecord, ev: EvidenceFolder) -> None:
    """This turn's src/ against the latest earlier turn that has one (what the model was editing)."""
    new = read_tree(ev.sources)
    if new is None:
        return
    old: dict[str, str] = {}
    for earlier in reversed([r for r in task_records(run, record.task_id) if r.turn < record.turn]):
        folder = evidence_folder(run, earlier)
        tree = read_tree(folder / EvidenceFolder.SOURCES) if folder is not None else None
        if tree is not None:
            old, turn.diff_against = tree, earlier.turn
            break
    turn.sources = diff_trees(old, new)
