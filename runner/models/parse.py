"""The output contract: turn a model's raw answer into assistant text plus source files.

Two shapes are accepted (EvoGenUI-Bench §5.1: "a common normalized output contract: non-empty
assistant text accompanied by the generated source files"):

1. JSON: ``{"assistant_text": "...", "files": {path: content}}`` (or ``files`` as a list of
   ``{"path", "content"}``), alone, inside a code fence, or surrounded by prose.
2. Markdown: prose, then file sections. A file section is a fenced code block whose path comes from
   its info string (```` ```jsx src/App.jsx ````, ```` ```jsx title="src/App.jsx" ````) or from a label
   line just above it (``### src/App.jsx``, ``## File: src/App.jsx``, ``**src/App.jsx**``).
   The assistant text is the prose outside file sections, or an explicit ``assistant_text:`` line /
   ``## Assistant`` section when there is one.

Paths are normalised lightly (``./`` and ``.`` segments removed, backslashes turned into slashes) but
never made safe here: absolute paths and ``..`` are kept so the sandbox can reject them visibly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "InvalidOutput",
    "ParsedOutput",
    "extract_json_contract",
    "extract_markdown_files",
    "normalize_path",
    "parse_model_output",
    "render_json_output",
    "strip_thinking",
]

# Bounds that keep parsing linear-ish on adversarial input.
_MAX_JSON_CANDIDATES = 200
_LABEL_LOOKBACK_LINES = 3


@dataclass(frozen=True)
class ParsedOutput:
    assistant_text: str
    files: dict[str, str]


class InvalidOutput(ValueError):
    """The answer holds no parsable files (failure bucket `invalid_output`)."""

    def __init__(self, reason: str, raw: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


def render_json_output(assistant_text: str, files: dict[str, str]) -> str:
    """The canonical JSON form of the contract (what the oracle answers)."""
    return json.dumps({"assistant_text": assistant_text, "files": files}, ensure_ascii=False, indent=2)


def parse_model_output(raw: str | None, *, default_path: str | None = None) -> ParsedOutput:
    """Parse a raw model answer; raise InvalidOutput when it holds no files.

    `default_path`: when given and the answer names no file but holds exactly one code block, that
    block becomes this file (lenient mode for models that ignore the path convention). Off by default.
    """
    if raw is None or not isinstance(raw, str) or not raw.strip():
        raise InvalidOutput("empty response", raw)
    text = strip_thinking(_normalize_newlines(raw))
    if not text.strip():
        raise InvalidOutput("empty response (only a thinking block)", raw)

    # Order matters: an answer that *is* JSON is the contract; otherwise named file sections come
    # before a JSON object found somewhere inside, which may just be data in a file (a file-browser
    # demo holding {"files": [...]}).
    json_first = text.lstrip().startswith("{")
    contract, json_problem = extract_json_contract(text) if json_first else (None, None)
    if contract is None:
        assistant_text, files, unnamed = _parse_markdown(text)
        if files:
            return ParsedOutput(assistant_text, files)
        if not json_first:
            contract, json_problem = extract_json_contract(text)
    if contract is not None:
        if not contract.files:
            raise InvalidOutput("JSON output has an empty 'files' object", raw)
        return contract
    if default_path is not None and len(unnamed) == 1:
        return ParsedOutput(assistant_text, {normalize_path(default_path): unnamed[0]})
    if json_problem:
        raise InvalidOutput(f"no parsable files: {json_problem}", raw)
    if unnamed:
        raise InvalidOutput(f"no parsable files: {len(unnamed)} code block(s) but none names a file path", raw)
    raise InvalidOutput("no parsable files: neither a JSON 'files' object nor fenced file sections", raw)


def extract_markdown_files(text: str) -> tuple[str, dict[str, str]]:
    """The markdown half of the parser on its own: (assistant text, files); files may be empty."""
    assistant_text, files, _ = _parse_markdown(strip_thinking(_normalize_newlines(text)))
    return assistant_text, files


# --------------------------------------------------------------------------- preprocessing

_THINK_BLOCK = re.compile(r"<(think|thinking)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINK_CLOSE = re.compile(r"</(?:think|thinking)>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(?:think|thinking)>", re.IGNORECASE)


def _normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_thinking(text: str) -> str:
    """Remove reasoning blocks. Chat templates that open `<think>` in the prompt leave only the
    closing tag in the answer, so everything before a stray `</think>` is reasoning too; an
    unclosed `<think>` means the answer ran out inside its reasoning."""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text


# --------------------------------------------------------------------------- paths

_PATH_TOKEN = re.compile(r"^[\w@~.\-/\\+\[\]()$:]+$")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")


def normalize_path(path: str) -> str:
    """Light normalisation only; unsafe paths stay unsafe so the sandbox can reject them."""
    p = path.strip().strip("`'\"").strip().replace("\\", "/")
    absolute = p.startswith("/")
    parts = [seg for seg in p.split("/") if seg not in ("", ".")]
    return ("/" if absolute else "") + "/".join(parts)


def _looks_like_path(token: str) -> bool:
    if not token or not _PATH_TOKEN.match(token) or "://" in token:
        return False
    if token.endswith((".", "/")) or token.startswith(("-", "$")):
        return False
    return bool(_EXTENSION.search(token))


# --------------------------------------------------------------------------- JSON contract

_JSON_START = re.compile(r"\{\s*\"")


def _files_from_json(value: Any) -> dict[str, str]:
    """Validate the `files` member; raise ValueError with a reason when its shape is wrong."""
    files: dict[str, str] = {}
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = []
        for i, entry in enumerate(value):
            if not isinstance(entry, dict):
                raise ValueError(f"files[{i}] is not an object")
            path = entry.get("path", entry.get("filename", entry.get("name")))
            content = entry.get("content", entry.get("code"))
            if not isinstance(path, str):
                raise ValueError(f"files[{i}] has no string 'path'")
            items.append((path, content))
    else:
        raise ValueError(f"'files' must be an object or a list, not {type(value).__name__}")
    for path, content in items:
        if not isinstance(content, str):
            raise ValueError(f"content of file {path!r} is not a string")
        normalized = normalize_path(path)
        if not normalized:
            raise ValueError(f"empty file path {path!r}")
        files[normalized] = content
    return files


def _contract_from_object(obj: Any, outside_text: str) -> ParsedOutput:
    if not isinstance(obj, dict) or "files" not in obj:
        raise LookupError("no 'files' member")
    files = _files_from_json(obj["files"])
    text = obj.get("assistant_text")
    if not isinstance(text, str):
        text = _clean_prose(outside_text)
    return ParsedOutput(text.strip(), files)


def extract_json_contract(text: str) -> tuple[ParsedOutput | None, str | None]:
    """Find the JSON contract in `text`: (contract, None), or (None, why the JSON attempt failed)."""
    decoder = json.JSONDecoder(strict=False)  # tolerate raw newlines inside strings
    problem: str | None = None
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            obj, end = decoder.raw_decode(stripped)
            return _contract_from_object(obj, stripped[end:]), None
        except json.JSONDecodeError as exc:
            problem = f"JSON output did not parse ({exc})"
        except LookupError:
            problem = "JSON output has no 'files' member"
        except ValueError as exc:
            problem = f"JSON output has malformed 'files': {exc}"
    tried = 0
    for match in _JSON_START.finditer(text):
        tried += 1
        if tried > _MAX_JSON_CANDIDATES:
            break
        try:
            obj, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if not isinstance(obj, dict) or "files" not in obj:
            continue
        outside = text[: match.start()] + "\n" + text[end:]
        try:
            return _contract_from_object(obj, _strip_json_fence_markers(outside)), None
        except (LookupError, ValueError) as exc:
            problem = problem or f"JSON output has malformed 'files': {exc}"
    return None, problem


def _strip_json_fence_markers(text: str) -> str:
    """Drop the now-empty fence lines that wrapped a JSON object, so they do not leak into prose."""
    return "\n".join(line for line in text.split("\n") if not _FENCE.match(line))


# --------------------------------------------------------------------------- markdown

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})[ \t]*(.*?)[ \t]*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_INFO_ATTR = re.compile(
    r"(?:title|file|filename|filepath|path|name)\s*[=:]\s*(?:\"([^\"]*)\"|'([^']*)'|(\S+))", re.IGNORECASE
)
_LABEL_PREFIX = re.compile(r"^(?:file\s*path|file\s*name|filename|filepath|file|path)\s*(?::|\s)\s*", re.IGNORECASE)
_LIST_MARKER = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_TRAILING_NOTE = re.compile(r"\s+(?:\([^)]*\)|[-—–]+\s.*)$")
_ASSISTANT_LINE = re.compile(r"^\s*(?:\*\*|__)?assistant[_ ]text(?:\*\*|__)?\s*:(?:\*\*|__)?\s?(.*)$", re.IGNORECASE)
_ASSISTANT_HEADING = re.compile(
    r"^\s{0,3}#{1,6}\s*(?:assistant(?:[_ ](?:text|message|response))?|message)\s*:?\s*$", re.IGNORECASE
)
_FILES_HEADING = re.compile(r"^\s*(?:#{1,6}\s*)?(?:\*\*)?files?(?:\*\*)?\s*:?\s*(?:\*\*)?\s*$", re.IGNORECASE)


@dataclass
class _Fence:
    start: int  # line index of the opening fence
    end: int  # line index of the closing fence (len(lines) when unclosed)
    info: str
    content: str


def _scan_fences(lines: list[str]) -> list[_Fence]:
    """CommonMark fences, plus balancing: inside a fence, a same-kind opener with an info string
    (```` ```js ````) opens a nested block that the next bare fence closes. Models often nest a
    README's code blocks inside a file block with equally long fences; this keeps those files whole."""
    fences: list[_Fence] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        indent, marker, info = len(m.group(1)), m.group(2), m.group(3)
        depth, j = 0, i + 1
        while j < len(lines):
            inner = _FENCE.match(lines[j])
            if inner and inner.group(2)[0] == marker[0] and len(inner.group(2)) >= len(marker):
                if not inner.group(3):
                    if depth == 0:
                        break
                    depth -= 1
                elif marker[0] == "~" or "`" not in inner.group(3):
                    depth += 1
            j += 1
        body = [_dedent(line, indent) for line in lines[i + 1 : j]]
        if j == len(lines):  # unclosed: CommonMark runs it to the end; drop the trailing blank lines
            while body and not body[-1].strip():
                body.pop()
        content = "\n".join(body) + ("\n" if body else "")
        fences.append(_Fence(i, j, info, content))
        i = j + 1
    return fences


def _dedent(line: str, indent: int) -> str:
    k = 0
    while k < indent and k < len(line) and line[k] == " ":
        k += 1
    return line[k:]


def _path_from_info(info: str) -> str | None:
    m = _INFO_ATTR.search(info)
    if m:
        value = next(g for g in m.groups() if g is not None)
        return normalize_path(value) if value.strip() else None
    for token in info.split():
        # "jsx:src/App.jsx" style
        if ":" in token and not _looks_like_path(token.split(":", 1)[0]):
            token = token.split(":", 1)[1]
        token = token.strip("{}")
        if _looks_like_path(token):
            return normalize_path(token)
    return None


def _strip_wrappers(s: str) -> str:
    changed = True
    while changed and s:
        changed = False
        for w in ("**", "__", "`", "*", "_", '"', "'"):
            if len(s) > 2 * len(w) and s.startswith(w) and s.endswith(w):
                s = s[len(w) : -len(w)].strip()
                changed = True
    return s


def _path_from_label(line: str) -> str | None:
    """A line that is only a path, possibly decorated: heading, bold, code span, list item, 'File:'."""
    s = line.strip()
    if not s or len(s) > 300:
        return None
    s = re.sub(r"^#{1,6}\s*", "", s)
    s = _LIST_MARKER.sub("", s)
    for _ in range(4):  # bounded: decorations nest at most a few deep
        before = s
        s = _strip_wrappers(s.strip())
        s = re.sub(r"^(\*\*|__)(.*?)\1\s*", r"\2 ", s).strip()  # "**File:** x" -> "File: x"
        s = _LABEL_PREFIX.sub("", s).strip()
        s = s.rstrip(":").strip()
        s = _TRAILING_NOTE.sub("", s).strip()
        if s == before:
            break
    s = _strip_wrappers(s).rstrip(":").strip()
    return normalize_path(s) if _looks_like_path(s) else None


_COMMENT_LINE = re.compile(r"^\s*(?://|#|/\*|<!--|\{/\*)\s*(.*?)\s*(?:\*/\}|\*/|-->)?\s*$")


def _path_from_first_line(content: str) -> str | None:
    """`// src/App.jsx` or `/* filepath: src/App.css */` as a block's first line (kept in the file)."""
    first = content.split("\n", 1)[0]
    m = _COMMENT_LINE.match(first)
    if not m or not m.group(1):
        return None
    rest = _LABEL_PREFIX.sub("", m.group(1)).strip()
    return normalize_path(rest) if _looks_like_path(rest) else None


def _parse_markdown(text: str) -> tuple[str, dict[str, str], list[str]]:
    """Returns (assistant text, named files, contents of unnamed code blocks)."""
    lines = text.split("\n")
    fences = _scan_fences(lines)
    consumed = [False] * len(lines)
    files: dict[str, str] = {}
    unnamed: list[str] = []
    prev_end = -1
    for fence in fences:
        path = _path_from_info(fence.info)
        label_line = _find_label(lines, consumed, prev_end + 1, fence.start)
        if label_line is not None:
            label_path = _path_from_label(lines[label_line])
            if path is None or label_path == path:
                path = label_path
                consumed[label_line] = True
        prev_end = fence.end
        if path is None:
            path = _path_from_first_line(fence.content)
        if path is None:
            unnamed.append(fence.content)
            continue
        for k in range(fence.start, min(fence.end + 1, len(lines))):
            consumed[k] = True
        files[path] = fence.content  # a later section for the same path wins (the model rewrote it)
    return _assistant_text(lines, consumed), files, unnamed


def _find_label(lines: list[str], consumed: list[bool], lo: int, fence_start: int) -> int | None:
    seen = 0
    for k in range(fence_start - 1, lo - 1, -1):
        if consumed[k] or not lines[k].strip():
            continue
        if _path_from_label(lines[k]) is not None:
            return k
        seen += 1
        if seen >= _LABEL_LOOKBACK_LINES or _HEADING.match(lines[k]):
            return None
    return None


def _assistant_text(lines: list[str], consumed: list[bool]) -> str:
    for k, line in enumerate(lines):
        if consumed[k]:
            continue
        inline = _ASSISTANT_LINE.match(line)
        if inline or _ASSISTANT_HEADING.match(line):
            part = [inline.group(1)] if inline else []
            for j in range(k + 1, len(lines)):
                if consumed[j] or _HEADING.match(lines[j]) or _ASSISTANT_LINE.match(lines[j]):
                    break
                part.append(lines[j])
            return _clean_prose("\n".join(part))
    return _clean_prose("\n".join(line for k, line in enumerate(lines) if not consumed[k]))


def _clean_prose(text: str) -> str:
    kept = [line.rstrip() for line in text.split("\n") if not _FILES_HEADING.match(line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
