"""The viewer as static files: `python -m runner.view RUN_DIR... --export OUT_DIR`.

Crawls the app in-process (no server, no network) from "/" along the same-origin links of its pages (href, src
and srcset attributes: links, scripts, styles, images, frames) and the url()s of its style sheets, with
ViewState.static_export set while rendering. Each page (text/html) is written as OUT/<path>/index.html, every
other response under its own path; then every local link in the written pages and style sheets is made relative
to the file that holds it and points at the written file itself (".../index.html", not a folder), so the folder
opens from file:// as well as from any static web server.

Evidence (every file under /files/: a model's dom.html, its sources, build logs, whatever its build wrote) is never
taken for a page, whatever type it is served with, and is written under an inert name (runner/view/inert.py): its
own where it ends in a lower-case raster image, archive or .txt suffix, else with ".txt" appended, so that opened
from disk it shows as an image or text and never runs as the page, SVG or XML it may hold. Other responses the app
serves as text/plain get the ".txt" suffix too.
A page that answers 404 is written as the app shows it (its not-found page) and reported; the crawl stops taking
new pages at `max_pages` (links to the rest are reported, not followed).
"""

from __future__ import annotations

import html
import posixpath
import re
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urljoin, urlsplit

from fastapi import FastAPI

from runner.view.inert import exported_name

ORIGIN = "http://viewer.export"  # the in-process client's base: any URL on it is the app's own
EVIDENCE_PREFIX = "/files/"  # where the app serves run dirs' files (runner/view/app.py)
# A 750-turn run has about a page per turn, per task and per episode, plus the run's lists: well within this.
DEFAULT_MAX_PAGES = 20_000
_ATTRIBUTE = re.compile(r"""(?P<pre>\s(?P<name>href|src|srcset|poster)\s*=\s*)(?P<quote>["'])(?P<value>.*?)(?P=quote)""",
                        re.IGNORECASE | re.DOTALL)
_CSS_URL = re.compile(r"""url\(\s*(?P<quote>["']?)(?P<value>[^"')]+)(?P=quote)\s*\)""")
_CSS_IMPORT = re.compile(r"""@import\s+(?P<quote>["'])(?P<value>[^"']+)(?P=quote)""")


@dataclass
class _Fetched:
    path: str  # the URL path as the app routes it (percent-decoded)
    file: str  # where it is written, relative to the export folder (posix)
    status: int
    is_page: bool
    text: str | None = None  # pages and style sheets: rewritten once every target's file is known
    data: bytes | None = None


@dataclass
class ExportReport:
    """What an export wrote, and what it could not."""

    out_dir: Path
    pages: int = 0
    files: int = 0
    bytes: int = 0
    missing: list[str] = field(default_factory=list)  # paths the app answered with an error (not found, ...)
    left_out: list[str] = field(default_factory=list)  # pages past max_pages: linked, not written

    def summary(self) -> str:
        lines = [f"exported {self.pages} pages and {self.files} other files "
                 f"({self.bytes / 1_048_576:.1f} MiB) to {self.out_dir}; open {self.out_dir / 'index.html'}"]
        for label, paths in (("links to paths the app could not answer", self.missing),
                             ("pages left out past --max-pages", self.left_out)):
            if paths:
                shown = ", ".join(paths[:10]) + (f", ... ({len(paths) - 10} more)" if len(paths) > 10 else "")
                lines.append(f"{len(paths)} {label}: {shown}")
        return "\n".join(lines)


def export_site(app: FastAPI, out_dir: Path, *, max_pages: int = DEFAULT_MAX_PAGES,
                start: tuple[str, ...] = ("/",)) -> ExportReport:
    """Write the app's pages reachable from `start` into `out_dir` (made if missing) as relative-linked files."""
    from fastapi.testclient import TestClient

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = ExportReport(out_dir)
    fetched: dict[str, _Fetched] = {}
    queue: deque[str] = deque(_app_path(path, ORIGIN + "/") or "/" for path in start)
    queued = set(queue)
    with _static_export(app), TestClient(app, base_url=ORIGIN) as client:
        while queue:
            path = queue.popleft()
            if _looks_like_page(path) and report.pages >= max_pages:
                report.left_out.append(path)
                continue
            item = _fetch(client, path)
            if item.is_page and report.pages >= max_pages:  # a page whose path looked like a file's
                report.left_out.append(path)
                continue
            fetched[path] = item
            if item.data is not None:  # written now: a run's evidence can be far larger than memory should hold
                _write_item(item, item.data, out_dir, report)
                item.data = None
            if item.status >= 400:
                report.missing.append(path)
            if item.is_page:
                report.pages += 1
            for link in _links(item):
                if link not in queued:
                    queued.add(link)
                    queue.append(link)
    _write(fetched, out_dir, report)
    return report


@contextmanager
def _static_export(app: FastAPI) -> Iterator[None]:
    """ViewState.static_export on while the crawl renders (pages may leave out what needs a server)."""
    view = app.state.view
    before = view.static_export
    view.static_export = True
    try:
        yield
    finally:
        view.static_export = before


def _fetch(client, path: str) -> _Fetched:  # noqa: ANN001 (fastapi.testclient.TestClient, imported late)
    response = client.get(quote(path, safe="/:@!$&'()*+,;=-._~"))
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    is_page = kind == "text/html" and not _is_evidence(path)
    item = _Fetched(path, _file_for(path, is_page=is_page, plain_text=kind == "text/plain"), response.status_code,
                    is_page)
    if response.status_code >= 400 and not is_page:
        return item  # nothing to write: links to it stay broken and are reported
    if is_page or (kind == "text/css" and not _is_evidence(path)):  # evidence is never parsed for links
        item.text = response.text
    else:
        item.data = response.content
    return item


def _is_evidence(path: str) -> bool:
    return path.startswith(EVIDENCE_PREFIX)


def _file_for(path: str, *, is_page: bool, plain_text: bool = False) -> str:
    """Where a URL path is written, relative to the export folder."""
    parts = [part for part in path.split("/") if part]
    if _is_evidence(path):  # by its path, never by what the response said it is
        return "/".join([*parts[:-1], exported_name(parts[-1])]) if parts and not path.endswith("/") else \
            "/".join([*parts, "index.txt"])
    if is_page:
        return "/".join([*parts, "index.html"])
    name = "/".join(parts) if parts and not path.endswith("/") else "/".join([*parts, "index"])
    if plain_text and not name.endswith(".txt"):
        name += ".txt"  # shown as text from disk, never run as the HTML or script it may hold
    return name


def _looks_like_page(path: str) -> bool:
    """Before fetching: a path whose last segment has no file suffix is taken for a page (evidence never is)."""
    return not _is_evidence(path) and "." not in path.rstrip("/").rsplit("/", 1)[-1]


def _app_path(url: str, base: str) -> str | None:
    """The app's own path a link leads to (percent-decoded, normalised), or None for another origin or scheme."""
    url = url.strip()
    if not url or url.startswith("#"):
        return None
    parts = urlsplit(urljoin(base, url))
    if f"{parts.scheme}://{parts.netloc}" != ORIGIN:
        return None
    path = posixpath.normpath(unquote(parts.path) or "/")
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    return path + "/" if parts.path.endswith("/") and path != "/" else path


def _references(item: _Fetched) -> Iterator[tuple[re.Match[str], str]]:
    """Each URL in a page's attributes (unescaped) or a style sheet's url()/@import, with the match it came from."""
    if item.text is None:
        return
    if item.is_page:
        for match in _ATTRIBUTE.finditer(item.text):
            value = html.unescape(match["value"])
            if match["name"].lower() == "srcset":
                for candidate in value.split(","):
                    if candidate.strip():
                        yield match, candidate.split()[0]
            else:
                yield match, value
    else:
        for pattern in (_CSS_URL, _CSS_IMPORT):
            for match in pattern.finditer(item.text):
                yield match, match["value"]


def _links(item: _Fetched) -> Iterator[str]:
    base = ORIGIN + quote(item.path)
    for _, url in _references(item):
        path = _app_path(url, base)
        if path is not None:
            yield path


def _write(fetched: dict[str, _Fetched], out_dir: Path, report: ExportReport) -> None:
    """Write the pages and style sheets, their links rewritten now that every target's file is known."""
    for item in fetched.values():
        if item.text is not None:
            _write_item(item, _rewritten(item, fetched).encode(), out_dir, report)


def _write_item(item: _Fetched, data: bytes, out_dir: Path, report: ExportReport) -> None:
    target = (out_dir / item.file).resolve()
    if not target.is_relative_to(out_dir.resolve()):
        return  # normalised paths never leave the folder; kept as a guard
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    except (FileExistsError, NotADirectoryError, IsADirectoryError):
        report.missing.append(f"{item.path} (its file clashes with another path's folder)")
        return
    report.bytes += len(data)
    if not item.is_page:
        report.files += 1


def _rewritten(item: _Fetched, fetched: dict[str, _Fetched]) -> str:
    """The page or style sheet with each local link made relative to its own file."""
    assert item.text is not None
    here = posixpath.dirname(item.file) or "."
    base = ORIGIN + quote(item.path)

    def relative(url: str) -> str:  # an unescaped URL in, the link to write out (unescaped)
        parts = urlsplit(url.strip())
        path = _app_path(url, base)
        if path is None:
            return url
        known = fetched.get(path)
        file = known.file if known is not None else _file_for(path, is_page=_looks_like_page(path))
        link = quote(posixpath.relpath(file, here), safe="/:@!$&'()*+,;=-._~")
        return link + (f"#{parts.fragment}" if parts.fragment else "")

    def attribute(match: re.Match[str]) -> str:
        value = html.unescape(match["value"])
        if match["name"].lower() == "srcset":
            candidates = []
            for candidate in value.split(","):
                words = candidate.split()
                candidates.append(" ".join([html.escape(relative(words[0])), *words[1:]]) if words else candidate)
            new = ", ".join(candidates)
        else:
            new = html.escape(relative(value))
        return f"{match['pre']}{match['quote']}{new}{match['quote']}"

    def css(match: re.Match[str]) -> str:
        whole = match.group(0)
        start, end = match.span("value")
        offset = match.start()
        return whole[:start - offset] + relative(match["value"]) + whole[end - offset:]

    if item.is_page:
        return _ATTRIBUTE.sub(attribute, item.text)
    return _CSS_IMPORT.sub(css, _CSS_URL.sub(css, item.text))


__all__ = ["DEFAULT_MAX_PAGES", "ExportReport", "export_site"]
