"""The static evidence viewer: one self-contained HTML file per run (EvoGenUI-Bench Appendix E.1, Figs. 7-8).

    python -m runner.report.viewer RUN_DIR [--out FILE]      # default RUN_DIR/report.html

It opens from disk (file://) with no server: CSS and JS are inline, screenshots are embedded as data: URIs
(downscaled JPEG thumbnails for actor-trace steps). Past an image budget (default 40 MB per report) further
images become plain links relative to the report file, so huge runs stay openable. Text is bounded the same
way: one block shows at most MAX_TEXT characters and one turn TURN_TEXT_BUDGET in all; the rest of a file is
a link to it (a 4 MB answer is not copied into the report).

Sections: the run and its aggregate scores (each score links to the turns that make it up: clicking it
filters the results table), the task library (suite, sub-suite, domain, tools, user turns), the results
table (one row per task x turn; every cell links to that turn's evidence), and per turn: status and failure
bucket, error, the judge's verdict with reasons (dimensions, requirements, failure types, mechanism), the
request, the assistant text, the source files, screenshots, the actor trace with its screenshots, the tool
log, runtime state, build log, console, page errors, network and the DOM.

Everything that comes from a model or a page is untrusted: it is only ever inserted as escaped text, and a
Content-Security-Policy meta tag allows nothing but inline styles, data: images and the one inline script
that carries this file's random nonce.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import os
import re
import secrets
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.turns.evidence_folder import EvidenceFolder
from runner.turns.records import TurnRecord
from runner.view.turn_evidence import message_text

from runner.report.collect import RunData, load_run_dir
from runner.report.task_set import describe_task_set

REPORT_FILE = "report.html"
DEFAULT_IMAGE_BUDGET = 40 * 1024 * 1024
MAX_TEXT = 32_000  # characters of one text block shown before it is cut (the file is linked)
TURN_TEXT_BUDGET = 256_000  # characters of text one turn's section inlines in all; past it, links only
MAX_NETWORK_ROWS = 500  # rows of the network table; network.json holds the rest
THUMB_WIDTH = 480
MAX_INLINE_PNG = 600_000  # larger screenshots are re-encoded as JPEG

esc = html.escape


def _attr(value: Any) -> str:
    return html.escape(str(value), quote=True)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # terminal colours in build logs


@dataclass
class _TurnText:
    """The text one turn's section may still inline, and where the report lies (for links to files)."""

    left: int
    report_dir: Path


_turn_text: ContextVar[_TurnText | None] = ContextVar("turn_text", default=None)


def _pre(text: str, cls: str = "", *, source: Path | None = None) -> str:
    """`text` as an escaped block, cut at MAX_TEXT and at what the turn's text budget has left; a cut text
    from a file (`source`) links to it."""
    text = _ANSI.sub("", text)
    budget = _turn_text.get()
    limit = MAX_TEXT if budget is None else max(0, min(MAX_TEXT, budget.left))
    shown = text[:limit]
    if budget is not None:
        budget.left -= len(shown)
    html_text = f"<pre class='{cls}'>{esc(shown)}</pre>" if shown or not text else ""
    if len(shown) < len(text):
        note = f"{len(text) - len(shown)} more characters not shown"
        if source is not None and budget is not None and source.is_file():
            href = Path(os.path.relpath(source, budget.report_dir)).as_posix()
            note += f": <a href='{_attr(href)}'>{esc(source.name)}</a>"
        html_text += f"<p class='hint'>... [{note}]</p>"
    return html_text


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def _read_json(path: Path) -> Any:
    text = _read_text(path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=True, default=str)


def anchor_slug(task_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in task_id)


class _Images:
    """Embeds images as data: URIs until the budget is spent; then links relative to the report."""

    def __init__(self, budget: int, report_dir: Path) -> None:
        self.remaining = budget
        self.report_dir = report_dir

    def tag(self, path: Path, *, alt: str, thumb: bool = False) -> str:
        if not path.is_file():
            return ""
        data, mime = self._encode(path, thumb=thumb)
        if data is None or len(data) * 4 // 3 > self.remaining:
            href = os.path.relpath(path, self.report_dir)
            return f"<a class='imglink' href='{_attr(Path(href).as_posix())}'>{esc(path.name)} (not embedded)</a>"
        self.remaining -= len(data) * 4 // 3
        uri = f"data:{mime};base64,{base64.b64encode(data).decode()}"
        return f"<figure><img alt='{_attr(alt)}' src='{uri}'><figcaption>{esc(path.name)}</figcaption></figure>"

    @staticmethod
    def _encode(path: Path, *, thumb: bool) -> tuple[bytes | None, str]:
        raw = path.read_bytes()
        if not thumb and len(raw) <= MAX_INLINE_PNG and raw.startswith(b"\x89PNG"):
            return raw, "image/png"
        try:
            from PIL import Image

            with Image.open(io.BytesIO(raw)) as image:
                image = image.convert("RGB")
                width = THUMB_WIDTH if thumb else min(image.width, 1280)
                if image.width > width:
                    image = image.resize((width, max(1, image.height * width // image.width)))
                buffer = io.BytesIO()
                image.save(buffer, format="JPEG", quality=75)
                return buffer.getvalue(), "image/jpeg"
        except Exception:  # not an image we can read: show it as a link instead
            return None, ""


# --------------------------------------------------------------------------- summary


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "-" if value is None else str(value)


def summary_links(summary: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(metric, value, filter) rows: the filter selects the turns a metric is computed from
    ("" = all turns; "status=build_failed", "turn=2", "passed=true", "mechanism=..." ...)."""
    rows: list[tuple[str, str, str]] = []
    filters = {"passed": "passed=true", "unassessed_turns": "passed=none", "infra_failures": "status=infra"}
    for key, value in summary.items():
        if isinstance(value, (int, float, type(None))) and not isinstance(value, bool):
            rows.append((key, _fmt(value), filters.get(key, "")))
    for status, count in (summary.get("status_counts") or {}).items():
        rows.append((f"status_counts.{status}", str(count), f"status={status}"))
    for group, metrics in (summary.get("reliability") or {}).items():
        if not isinstance(metrics, dict):
            continue
        where = "" if group == "overall" else f"subsuite={group}"
        for key in [k for k in metrics if k in ("turn_pass", "cpt", "apr") or (k.startswith("tp_at_") and not k.startswith("tp_at_k"))]:
            rows.append((f"reliability.{group}.{key}", _fmt(metrics[key]), where))
        for position, value in enumerate(metrics.get("per_position_pass") or [], start=1):
            rows.append((f"reliability.{group}.per_position_pass[{position}]", _fmt(value),
                         "&".join(part for part in (where, f"turn={position}") if part)))
    for group, counts in (summary.get("failure_mechanisms") or {}).items():
        for mechanism, count in (counts or {}).items():
            if count and mechanism != "unclassified":
                where = "" if group == "overall" else f"subsuite={group}&"
                rows.append((f"failure_mechanisms.{group}.{mechanism}", str(count), f"{where}mechanism={mechanism}"))
    web2code = summary.get("web2code") or {}
    for mode, curve in (web2code.get("per_turn") or {}).items():
        for row in curve:
            rows.append((f"web2code.per_turn.{mode}[{row.get('turn')}].score", _fmt(row.get("score")),
                         f"subsuite={mode}&turn={row.get('turn')}"))
    return rows


def _summary_section(summary: dict[str, Any]) -> str:
    parts = ["<section id='summary'><h2>Aggregate scores</h2><p class='hint'>Click a score to see the turns it is "
             "computed from.</p><table class='metrics'><tr><th>metric</th><th>value</th><th>turns</th></tr>"]
    for key, value, where in summary_links(summary):
        parts.append(f"<tr><td><a href='#turns' class='metric' data-filter='{_attr(where)}'>{esc(key)}</a></td>"
                     f"<td>{esc(value)}</td><td class='hint'>{esc(where.replace('&', ', ') or 'all')}</td></tr>")
    parts.append("</table></section>")
    return "".join(parts)


# --------------------------------------------------------------------------- library and results table


def _library_section(run: RunData, first_anchor: dict[str, str]) -> str:
    parts = ["<section id='library'><h2>Task library</h2><table><tr><th>task</th><th>title</th><th>suite</th>"
             "<th>sub-suite</th><th>domain</th><th>tools</th><th>turns</th></tr>"]
    for task in run.library:
        link = first_anchor.get(task["id"])
        name = f"<a href='#{_attr(link)}'>{esc(task['id'])}</a>" if link else esc(task["id"])
        prompts = "".join(f"<li><b>turn {esc(str(t.get('index')))}</b>: {esc(t.get('prompt', ''))}</li>" for t in task.get("turns", []))
        turns = f"<details><summary>{len(task.get('turns', []))} turn(s)</summary><ol class='plain'>{prompts}</ol></details>"
        parts.append(f"<tr><td>{name}</td><td>{esc(task.get('title', ''))}</td><td>{esc(task.get('suite', ''))}</td>"
                     f"<td>{esc(task.get('sub_suite', ''))}</td><td>{esc(task.get('domain', ''))}</td>"
                     f"<td>{esc(', '.join(task.get('tools', [])))}</td><td>{turns}</td></tr>")
    parts.append("</table></section>")
    return "".join(parts)


def _passed_text(passed: bool | None) -> str:
    return {True: "true", False: "false", None: "none"}[passed]


def _results_section(records: list[TurnRecord], anchors: dict[tuple[str, int], str]) -> str:
    parts = ["<section id='turns'><h2>Results</h2><p><span id='filter-note' class='hint'></span> "
             "<button type='button' id='clear-filter'>show all turns</button></p>"
             "<table id='turn-table'><thead><tr><th>task</th><th>turn</th><th>sub-suite</th><th>status</th><th>passed</th>"
             "<th>scores</th><th>mechanism</th><th>error</th></tr></thead><tbody>"]
    for record in records:
        href = f"#{anchors[record.slot]}"
        mechanism = (record.verdict.mechanism if record.verdict else None) or ""
        scores = ", ".join(f"{k}={v:.3g}" for k, v in sorted(record.scores.items()))
        error = record.error.splitlines()[0][:120] if record.error else ""
        cells = [record.task_id, str(record.turn), record.sub_suite, record.status.value, _passed_text(record.passed),
                 scores, mechanism, error]
        attrs = (f"data-task='{_attr(record.task_id)}' data-turn='{record.turn}' data-status='{_attr(record.status.value)}' "
                 f"data-passed='{_passed_text(record.passed)}' data-subsuite='{_attr(record.sub_suite)}' "
                 f"data-mechanism='{_attr(mechanism)}'")
        row = "".join(f"<td><a href='{_attr(href)}'>{esc(cell) or '&nbsp;'}</a></td>" for cell in cells)
        parts.append(f"<tr class='st-{_attr(record.status.value)}' {attrs}>{row}</tr>")
    parts.append("</tbody></table></section>")
    return "".join(parts)


# --------------------------------------------------------------------------- one turn's evidence


def _block(title: str, body: str, *, open_: bool = True) -> str:
    if not body:
        return ""
    return f"<details class='auto'{' open' if open_ else ''}><summary>{esc(title)}</summary>{body}</details>"


def _verdict_html(verdict: Any) -> str:
    if verdict is None:
        return "<p class='hint'>No judge verdict (the turn never reached the judge).</p>"
    parts = [f"<p>judge <b>{esc(verdict.judge)}</b>, passed <b>{esc(_passed_text(verdict.passed))}</b>"]
    if verdict.mechanism:
        parts.append(f", mechanism <b class='mechanism'>{esc(verdict.mechanism)}</b>")
    parts.append("</p>")
    if verdict.summary:
        parts.append(f"<p class='verdict-summary'>{esc(verdict.summary)}</p>")
    if verdict.failure_types:
        parts.append("<p>failure types: " + ", ".join(f"<code>{esc(t)}</code>" for t in verdict.failure_types) + "</p>")
    if verdict.dimensions:
        parts.append("<table><tr><th>dimension</th><th>score</th><th>reason</th></tr>")
        for name, dimension in verdict.dimensions.items():
            parts.append(f"<tr><td>{esc(name)}</td><td>{esc(_fmt(dimension.score))}</td><td class='reason'>{esc(dimension.reason)}</td></tr>")
        parts.append("</table>")
    if verdict.requirements:
        parts.append("<table class='requirements'><tr><th>requirement</th><th>status</th><th>reason</th></tr>")
        for requirement in verdict.requirements:
            parts.append(f"<tr class='req-{_attr(requirement.status.value)}'><td>{esc(requirement.id)}</td>"
                         f"<td>{esc(requirement.status.value)}</td><td class='reason'>{esc(requirement.reason)}</td></tr>")
        parts.append("</table>")
    if verdict.scores:
        parts.append("<p>scores: " + esc(", ".join(f"{k}={v:.4g}" for k, v in verdict.scores.items())) + "</p>")
    if verdict.raw is not None:
        parts.append(_block("judge raw output", _pre(_json_text(verdict.raw)), open_=False))
    return "".join(parts)


def _request_html(folder: Path) -> str:
    request = _read_json(folder / EvidenceFolder.REQUEST)
    if not isinstance(request, dict):
        return ""
    parts = []
    for message in request.get("messages") or []:
        role = str(message.get("role", "")) if isinstance(message, dict) else ""
        content = message.get("content") if isinstance(message, dict) else message
        parts.append(f"<div class='msg'><div class='role'>{esc(role)}</div>"
                     f"{_pre(message_text(content), source=folder / EvidenceFolder.REQUEST)}</div>")
    return "".join(parts)


def _assistant_html(folder: Path) -> str:
    state = _read_json(folder / EvidenceFolder.EPISODE_STATE)
    text = state.get("assistant_text") if isinstance(state, dict) else None
    raw = _read_text(folder / EvidenceFolder.RAW_RESPONSE)
    parts = []
    if text:
        parts.append(_pre(text, "assistant"))
    if raw:
        parts.append(_block("raw model response", _pre(raw, "assistant-raw", source=folder / EvidenceFolder.RAW_RESPONSE),
                            open_=not text))
    return "".join(parts)


def _source_html(folder: Path) -> str:
    source = folder / EvidenceFolder.SOURCES
    if not source.is_dir():
        return ""
    parts = []
    for path in sorted(p for p in source.rglob("*") if p.is_file() and not p.is_symlink()):
        text = _read_text(path)
        if text is not None:
            parts.append(_block(path.relative_to(source).as_posix(), _pre(text, "source", source=path)))
    return "".join(parts)


def _trace_html(folder: Path, images: _Images) -> str:
    trace = _read_json(folder / EvidenceFolder.TRACE)
    if not isinstance(trace, dict):
        return ""
    parts = [f"<p>actor <b>{esc(str(trace.get('actor', '')))}</b>, finished {esc(str(trace.get('finished')))}"
             + (f", claim: {esc(str(trace.get('claim')))}" if trace.get("claim") else "") + "</p>"]
    for step in trace.get("steps") or []:
        action = step.get("action") or {}
        element = action.get("element") or {}
        what = f"{action.get('kind', '')} {element.get('label') or action.get('target') or ''}".strip()
        parts.append(f"<div class='step'><p><b>step {esc(str(step.get('index')))}</b>: {esc(what)} "
                     f"(ok {esc(str(step.get('ok')))}, DOM changed {esc(str(step.get('dom_changed')))}, "
                     f"{esc(str(step.get('mutations', 0)))} mutation(s)) {esc(str(step.get('observation', '')))}</p>")
        if step.get("error"):
            parts.append(_pre(str(step["error"]), "error"))
        for key in ("screenshot_before", "screenshot_after"):
            if step.get(key):
                parts.append(images.tag(folder / str(step[key]), alt=f"step {step.get('index')} {key}", thumb=True))
        parts.append("</div>")
    if trace.get("summary"):
        parts.append(_block("trace summary", _pre(_json_text(trace["summary"])), open_=False))
    return "".join(parts)


def _tool_log_html(folder: Path) -> str:
    for name in (EvidenceFolder.TOOL_LOG, "tool_log.json"):  # tool_log.json: a JSON array, from older runs
        text = _read_text(folder / name)
        if text is None:
            continue
        if not text.strip():
            return "<p class='hint'>no tool calls</p>"
        if name == EvidenceFolder.TOOL_LOG:
            lines = []
            for line in text.splitlines():
                try:
                    lines.append(json.dumps(json.loads(line), sort_keys=True))
                except ValueError:
                    lines.append(line)
            return _pre("\n".join(lines), "tool-log", source=folder / name)
        return _pre(_json_text(_read_json(folder / name)), "tool-log", source=folder / name)
    return ""


def _state_html(folder: Path) -> str:
    parts = []
    for name, title in ((EvidenceFolder.STATE_IN, "state at turn start"), (EvidenceFolder.STATE, "state after the actor"),
                        (EvidenceFolder.STATE_CARRIED, "state carried to the next turn")):
        value = _read_json(folder / name)
        if value is not None:
            parts.append(_block(title, _pre(_json_text(value), source=folder / name), open_=name != EvidenceFolder.STATE_IN))
    return "".join(parts)


def _browser_html(folder: Path) -> str:
    parts = []
    page_errors = _read_json(folder / EvidenceFolder.PAGE_ERRORS)
    if page_errors:
        parts.append(_block("page errors", _pre(_json_text(page_errors), "error", source=folder / EvidenceFolder.PAGE_ERRORS)))
    console = _read_json(folder / EvidenceFolder.CONSOLE)
    if console:
        parts.append(_block("console", _pre(_json_text(console), source=folder / EvidenceFolder.CONSOLE), open_=False))
    network = _read_json(folder / EvidenceFolder.NETWORK)
    if isinstance(network, list) and network:
        blocked = [r for r in network if isinstance(r, dict) and r.get("blocked")]
        rows = "".join(f"<tr class='{'blocked' if r.get('blocked') else ''}'><td>{esc(str(r.get('method', '')))}</td>"
                       f"<td>{esc(str(r.get('url', '')))}</td><td>{esc(str(r.get('status')))}</td>"
                       f"<td>{'blocked' if r.get('blocked') else ''} {esc(str(r.get('failure', '')))}</td></tr>"
                       for r in network[:MAX_NETWORK_ROWS] if isinstance(r, dict))
        if len(network) > MAX_NETWORK_ROWS:
            rows += f"<tr><td colspan='4'>... {len(network) - MAX_NETWORK_ROWS} more in network.json</td></tr>"
        parts.append(_block(f"network ({len(network)} requests, {len(blocked)} blocked)",
                            f"<table><tr><th>method</th><th>url</th><th>status</th><th>note</th></tr>{rows}</table>", open_=bool(blocked)))
    dom = _read_text(folder / EvidenceFolder.DOM)
    if dom:
        parts.append(_block("DOM (as text)", _pre(dom, "dom", source=folder / EvidenceFolder.DOM), open_=False))
    return "".join(parts)


KNOWN_FILES = {EvidenceFolder.REQUEST, EvidenceFolder.RAW_RESPONSE, EvidenceFolder.EPISODE_STATE, EvidenceFolder.VERDICT,
               EvidenceFolder.TRACE, EvidenceFolder.TOOL_LOG, "tool_log.json", EvidenceFolder.STATE_IN,
               EvidenceFolder.STATE, EvidenceFolder.STATE_CARRIED, EvidenceFolder.BUILD_LOG, EvidenceFolder.CONSOLE,
               EvidenceFolder.PAGE_ERRORS, EvidenceFolder.NETWORK, EvidenceFolder.DOM,
               EvidenceFolder.SCREENSHOT_VIEWPORT, EvidenceFolder.SCREENSHOT_FULL}


def _other_files(folder: Path, report_dir: Path) -> str:
    if not folder.is_dir():
        return ""
    names = sorted(p for p in folder.iterdir() if p.is_file() and p.name not in KNOWN_FILES and not p.name.startswith("step_"))
    links = "".join(f"<li><a href='{_attr(Path(os.path.relpath(p, report_dir)).as_posix())}'>{esc(p.name)}</a></li>" for p in names)
    return f"<ul>{links}</ul>" if links else ""


def _turn_section(run_path: Path, record: TurnRecord, anchor: str, images: _Images, report_dir: Path) -> str:
    token = _turn_text.set(_TurnText(TURN_TEXT_BUDGET, report_dir))
    try:
        return _turn_section_html(run_path, record, anchor, images, report_dir)
    finally:
        _turn_text.reset(token)


def _turn_section_html(run_path: Path, record: TurnRecord, anchor: str, images: _Images, report_dir: Path) -> str:
    folder = run_path / record.evidence_dir if record.evidence_dir else run_path / "__none__"
    verdict = record.verdict
    if verdict is None and (folder / EvidenceFolder.VERDICT).is_file():
        from runner.turns.records import Verdict

        try:
            verdict = Verdict.model_validate_json((folder / EvidenceFolder.VERDICT).read_text())
        except ValueError:
            verdict = None
    badge = f"<span class='bucket st-{_attr(record.status.value)}'>{esc(record.status.value)}</span>"
    parts = [f"<section class='turn' id='{_attr(anchor)}' data-status='{_attr(record.status.value)}'>",
             f"<h3>{esc(record.task_id)} &middot; turn {record.turn} {badge}</h3>",
             f"<p>failure bucket <b class='failure-bucket'>{esc(record.status.value)}</b>, passed "
             f"<b>{esc(_passed_text(record.passed))}</b>, model responded {esc(str(record.model_responded))}",
             f", sub-suite {esc(record.sub_suite)}" if record.sub_suite else "", "</p>"]
    if record.error:
        parts.append("<div class='error-box'><b>error</b>" + _pre(record.error, "error") + "</div>")
    if record.scores:
        parts.append("<p>scores: " + esc(", ".join(f"{k}={v:.4g}" for k, v in sorted(record.scores.items()))) + "</p>")
    if record.timings:
        parts.append("<p class='hint'>timings (s): " + esc(", ".join(f"{k} {v:.2f}" for k, v in record.timings.items())) + "</p>")
    parts.append(_block("judge verdict", f"<div class='verdict'>{_verdict_html(verdict)}</div>"))
    build_log = _read_text(folder / EvidenceFolder.BUILD_LOG)
    if build_log:
        parts.append(_block("build log", _pre(build_log[-20000:], "build-log", source=folder / EvidenceFolder.BUILD_LOG),
                            open_=record.status.value == "build_failed"))
    shots = "".join(images.tag(folder / name, alt=f"{record.task_id} turn {record.turn} {name}")
                    for name in (EvidenceFolder.SCREENSHOT_VIEWPORT,) if (folder / name).is_file())
    if (folder / EvidenceFolder.SCREENSHOT_FULL).is_file():
        href = Path(os.path.relpath(folder / EvidenceFolder.SCREENSHOT_FULL, report_dir)).as_posix()
        shots += f"<p><a href='{_attr(href)}'>full-page screenshot (file)</a></p>"
    parts += [_block("screenshot", shots), _block("request", _request_html(folder), open_=False),
              _block("assistant text", _assistant_html(folder)), _block("source", _source_html(folder), open_=False),
              _block("actor trace", _trace_html(folder, images)), _block("tool log", _tool_log_html(folder)),
              _block("runtime state", _state_html(folder)), _browser_html(folder),
              _block("other evidence files", _other_files(folder, report_dir), open_=False),
              "<p><a href='#turns'>back to the results table</a></p></section>"]
    return "".join(parts)


# --------------------------------------------------------------------------- page


_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 24px 48px;color:#1d1d1f}
h1{margin:16px 0 4px}h2{border-bottom:2px solid #ddd;padding-top:12px}nav a{margin-right:14px}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #d5d5d5;padding:2px 7px;vertical-align:top;text-align:left}
th{background:#f2f2f2}td a{color:inherit;text-decoration:none;display:block}td a:hover{text-decoration:underline}
pre{background:#f7f7f9;border:1px solid #e3e3e3;padding:6px 8px;white-space:pre-wrap;word-break:break-word;max-height:480px;overflow:auto;margin:4px 0}
pre.error{background:#fff1f0;border-color:#f5c2c0}.error-box{margin:6px 0}
.bucket{font-size:12px;padding:1px 7px;border-radius:9px;background:#e3e3e3;vertical-align:middle}
.st-ok .bucket,.bucket.st-ok{background:#d6f5dd}.bucket:not(.st-ok){background:#fde2e1}
tr.st-ok td{background:#f4fcf6}tr:not(.st-ok) td{background:#fff8f7}
.req-failed td{background:#fde2e1}.req-unassessed td{background:#fff5d6}.blocked td{background:#fde2e1}
section.turn{border:1px solid #ddd;border-radius:6px;padding:4px 14px 10px;margin:14px 0}section.turn.target{border-color:#3b82f6;box-shadow:0 0 0 3px #bfdbfe}
details{margin:4px 0}summary{cursor:pointer;font-weight:600}figure{display:inline-block;margin:4px 8px 4px 0}
img{max-width:640px;border:1px solid #ccc}figcaption{font-size:11px;color:#666}.hint{color:#666;font-size:12px}
.msg .role{font-weight:600;font-size:12px;color:#555}.step{border-left:3px solid #ddd;padding-left:8px;margin:6px 0}
ol.plain{margin:2px 0;padding-left:18px}a.metric{color:#1d4ed8}
"""

_SCRIPT = """
(function(){
  var rows = Array.prototype.slice.call(document.querySelectorAll('#turn-table tbody tr'));
  var note = document.getElementById('filter-note');
  function apply(filter){
    var keys = Object.keys(filter), shown = 0;
    rows.forEach(function(row){
      var ok = keys.every(function(k){ return row.dataset[k] === filter[k]; });
      row.hidden = !ok; if (ok) shown++;
    });
    note.textContent = keys.length ? 'filter: ' + keys.map(function(k){ return k + '=' + filter[k]; }).join(', ') + ' (' + shown + ' of ' + rows.length + ' turns)' : rows.length + ' turns';
  }
  function parse(text){
    var filter = {};
    (text || '').split('&').forEach(function(part){ var i = part.indexOf('='); if (i > 0) filter[part.slice(0, i)] = part.slice(i + 1); });
    return filter;
  }
  document.querySelectorAll('a.metric').forEach(function(link){
    link.addEventListener('click', function(){ apply(parse(link.dataset.filter)); });
  });
  document.getElementById('clear-filter').addEventListener('click', function(){ apply({}); });
  function reveal(){
    document.querySelectorAll('section.turn.target').forEach(function(s){ s.classList.remove('target'); });
    var id = decodeURIComponent(location.hash.slice(1)), el = id && document.getElementById(id);
    if (el && el.classList.contains('turn')){ el.classList.add('target'); el.querySelectorAll('details.auto').forEach(function(d){ d.open = true; }); el.scrollIntoView(); }
  }
  window.addEventListener('hashchange', reveal);
  apply({}); reveal();
})();
"""


def render_run_report(run: RunData, *, report_dir: Path, image_budget: int = DEFAULT_IMAGE_BUDGET) -> str:
    if run.path is None:
        raise ValueError("the viewer needs a run dir (evidence lives there)")
    nonce = secrets.token_urlsafe(16)
    csp = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'nonce-{nonce}'"
    records = sorted(run.records, key=lambda r: (r.task_id, r.turn))
    anchors: dict[tuple[str, int], str] = {}
    used: set[str] = set()
    for record in records:
        anchor = f"ev-{anchor_slug(record.task_id)}-{record.turn}"
        while anchor in used:
            anchor += "_"
        used.add(anchor)
        anchors[record.slot] = anchor
    first_anchor: dict[str, str] = {}
    for record in records:
        first_anchor.setdefault(record.task_id, anchors[record.slot])
    images = _Images(image_budget, report_dir)
    title = f"{run.suite} / {run.model} / {run.judge} / {run.actor}"
    head = (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{csp}\">"
            f"<meta name='viewport' content='width=device-width'><title>{esc(title)}</title><style>{_STYLE}</style></head><body>")
    meta = run.summary.get("run") or {}
    header = (f"<h1>Run report: {esc(title)}</h1><p class='hint'>run dir {esc(str(run.path))}; "
              f"{len(records)} recorded slot(s) of {esc(_fmt(run.summary.get('requested_slots')))} requested; "
              f"sandbox {esc(str(meta.get('sandbox', '')))}</p>"
              f"<p class='task-set'>{esc(describe_task_set(run.summary.get('task_set')))}</p>"
              "<nav><a href='#summary'>scores</a><a href='#library'>task library</a><a href='#turns'>results</a>"
              "<a href='#evidence'>evidence</a></nav>")
    body = [head, header, _summary_section(run.summary), _library_section(run, first_anchor),
            _results_section(records, anchors), "<section id='evidence'><h2>Evidence per turn</h2>"]
    body += [_turn_section(run.path, record, anchors[record.slot], images, report_dir) for record in records]
    body.append(f"</section><script nonce='{nonce}'>{_SCRIPT}</script></body></html>")
    return "".join(body)


def write_run_report(run_dir: Path, out: Path | None = None, *, tasks: list[Any] | None = None,
                     image_budget: int = DEFAULT_IMAGE_BUDGET) -> Path:
    """Write the viewer of one run dir to `out` (default RUN_DIR/report.html); `tasks` (the run's Task objects)
    also writes the run's task library (tasks.json) first."""
    run_dir = Path(run_dir)
    if tasks:
        from runner.report.library import write_task_library

        write_task_library(run_dir, tasks)
    run = load_run_dir(run_dir)
    out = Path(out) if out is not None else run_dir / REPORT_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    page = render_run_report(run, report_dir=out.parent.resolve(), image_budget=image_budget)
    temporary = out.with_name(f".{out.name}.tmp{os.getpid()}")
    temporary.write_text(page, encoding="utf-8")
    os.replace(temporary, out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.report.viewer", description="Write a run's static evidence viewer.")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="HTML file (default RUN_DIR/report.html)")
    parser.add_argument("--image-budget-mb", type=float, default=DEFAULT_IMAGE_BUDGET / 2**20)
    args = parser.parse_args(argv)
    print(write_run_report(args.run_dir, args.out, image_budget=int(args.image_budget_mb * 2**20)))
    return 0


__all__ = ["REPORT_FILE", "anchor_slug", "render_run_report", "summary_links", "write_run_report"]

if __name__ == "__main__":
    sys.exit(main())
