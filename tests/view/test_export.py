"""The static export (`python -m runner.view RUN... --export OUT`) over the real runs of view_runs, opened from
file:// in real Chromium.

The crawl starts at "/" and follows whatever pages the app has. A probe mode mounted here stands for pages that
link the way the viewer's do (absolute and relative links, a script URL with data, a style sheet, thumbnails,
evidence files, fragments); its "/" only answers while the app has no index of its own.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from runner.view.app import ViewState, create_app, state
from runner.view.catalog import Catalog
from runner.view.export import export_site
from tests.conftest import REPO_ROOT, cli_env
from tests.view.conftest import chromium

pytestmark = pytest.mark.browser

_LINK = re.compile(r"""\s(?:href|src)\s*=\s*(["'])(.*?)\1""", re.IGNORECASE | re.DOTALL)


def _page(title: str, body: str, request: Request) -> HTMLResponse:
    exported = state(request).static_export
    return HTMLResponse(f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<link rel="stylesheet" href="/static/view.css"></head>
<body data-static-export="{exported}"><header class="topbar"><a href="/">home</a> <a href="/exportprobe">probe</a></header>
<main id="content">{body}</main></body></html>""")


@dataclass
class ProbeMode:
    name: str = "exportprobe"
    title: str = "Export probe"
    router: APIRouter = field(default_factory=APIRouter)

    def __post_init__(self) -> None:
        @self.router.get("/", response_class=HTMLResponse)
        def index(request: Request) -> HTMLResponse:  # shadowed by the viewer's own index once it has one
            return _page("Runs", '<a href="/exportprobe">the probe</a>', request)

        @self.router.get("/exportprobe", response_class=HTMLResponse)
        def runs(request: Request) -> HTMLResponse:
            catalog = state(request).catalog
            items = "".join(f'<li><a class="run" href="/exportprobe/runs/{run}">{run}</a></li>' for run in catalog.runs)
            return _page("Probe", f'<ul id="runs">{items}</ul><p id="count"></p>'
                                  '<script src="/exportprobe/data/rows.js"></script>'
                                  '<script src="/static/../exportprobe/show.js"></script>', request)

        @self.router.get("/exportprobe/data/rows.js")
        def rows(request: Request) -> Response:
            return Response(f"window.rows = {json.dumps(state(request).catalog.rows())};",
                            media_type="text/javascript")

        @self.router.get("/exportprobe/show.js")
        def show() -> Response:
            return Response("document.getElementById('count').textContent = window.rows.length + ' turns';",
                            media_type="text/javascript")

        @self.router.get("/exportprobe/runs/{run_id}", response_class=HTMLResponse)
        def run(request: Request, run_id: str) -> HTMLResponse:
            view = state(request).catalog.run(run_id)
            items = []
            for record in view.data.records:
                folder = Path(view.path or ".") / record.evidence_dir
                for name in ("screenshot.png", "dom.html", "build.log"):
                    if (folder / name).is_file():
                        relative = f"{record.evidence_dir}/{name}"
                        thumb = (f'<img alt="{relative}" src="/thumbs/160/{run_id}/{relative}">'
                                 if name.endswith(".png") else "")
                        items.append(f'<li><a class="file" href="/files/{run_id}/{relative}">{relative}</a>{thumb}</li>')
            return _page(run_id, f'<a id="back" href="../../exportprobe#runs">back</a><ul>{"".join(items)}</ul>', request)


@pytest.fixture(scope="module")
def exported(view_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("export") / "site"
    app = create_app(ViewState(Catalog.from_paths(list(view_runs.values())), modes={"exportprobe": ProbeMode()}))
    report = export_site(app, out)
    assert app.state.view.static_export is False  # set only while the crawl renders
    return out, report


def _local_links(page: Path) -> list[str]:
    links = []
    for _, raw in _LINK.findall(page.read_text()):
        url = html.unescape(raw)
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or url.startswith("#") or not parts.path:
            continue
        links.append(parts.path)
    return links


def test_every_local_link_of_every_written_page_is_a_written_file(exported) -> None:
    out, report = exported
    pages = list(out.rglob("*.html"))
    assert (out / "index.html").is_file() and (out / "exportprobe" / "index.html").is_file()
    assert report.pages == len(pages) >= 1 + 1 + 3  # the index, the probe's list and a page per run
    checked = 0
    for page in pages:
        for link in _local_links(page):
            assert not link.startswith("/"), f"{page}: absolute link {link}"
            target = (page.parent / unquote(link)).resolve()
            assert target.is_file(), f"{page.relative_to(out)}: {link} -> no file {target}"
            checked += 1
    assert checked > 20
    assert (out / "static" / "view.css").is_file()
    written = {path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file()}
    assert any(name.startswith("thumbs/160/") for name in written)
    # A model's page is evidence shown as text: from disk too it must not run.
    assert any(name.endswith("/dom.html.txt") for name in written)
    assert not any(name.startswith("files/") and name.endswith(".html") for name in written)
    assert '"True"' in (out / "exportprobe" / "index.html").read_text()  # rendered with static_export on
    assert report.files == len(written) - len(pages)
    # Whatever the app itself cannot answer (placeholder pages still to come) is said, not hidden.
    assert "exported" in report.summary() and all(path.startswith("/") for path in report.missing)


def test_the_export_opens_from_file_and_its_links_lead_on(exported) -> None:
    out, _ = exported

    async def main() -> dict:
        async with chromium() as browser:
            page = await browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto((out / "index.html").as_uri())
            await page.locator("a[href*='exportprobe']").first.click()
            await page.wait_for_url("**/exportprobe/index.html")
            count = await page.locator("#count").inner_text()  # the data script and the page's script both ran
            styled = await page.evaluate("getComputedStyle(document.querySelector('.topbar')).display")
            await page.locator("a.run").first.click()
            await page.wait_for_url("**/exportprobe/runs/*/index.html")
            images = await page.evaluate("[...document.images].map(i => i.complete && i.naturalWidth)")
            file_link = page.locator("a.file").first
            file_href = await file_link.get_attribute("href")
            await page.locator("#back").click()
            await page.wait_for_url("**/exportprobe/index.html#runs")
            return {"count": count, "styled": styled, "images": images, "file": file_href, "errors": errors}

    seen = asyncio.run(main())
    assert re.fullmatch(r"[1-9]\d* turns", seen["count"]), seen
    assert seen["styled"] == "flex"  # view.css loaded (its .topbar is a flex box)
    assert seen["images"] and all(width and width > 0 for width in seen["images"]), seen
    assert seen["file"] and not seen["file"].startswith("/"), seen
    assert not seen["errors"], seen


def test_the_viewers_own_pages_are_exported_and_their_script_built_links_open_from_file(exported, view_runs) -> None:
    out, _ = exported
    catalog = Catalog.from_paths(list(view_runs.values()))  # the exported app's ids
    run_id = next(run.id for run in catalog.runs.values() if run.path == view_runs["mixed"])
    episode = out / "runs" / run_id / "tasks" / "viewer-probe"
    assert (episode / "index.html").is_file()  # reached through the run page's episode list
    assert all((episode / "turns" / str(turn) / "index.html").is_file() for turn in (1, 2, 3))

    async def main() -> dict:
        async with chromium() as browser:
            page = await browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto((out / "turns" / "index.html").as_uri())
            await page.wait_for_selector("#turns tbody tr")
            count = await page.locator("#count").inner_text()
            compare_disabled = await page.evaluate("document.getElementById('compare') === null")
            # the rows and their links are built by lists.js from the rows script: each points at a written file
            hrefs = await page.evaluate("[...document.querySelectorAll('#turns tbody a')].map(a => a.href)")
            link = page.locator(f"#turns tbody tr[data-run='{run_id}'][data-turn='2'] a", has_text="turn 2")
            await link.click()
            await page.wait_for_url(f"**/runs/{run_id}/tasks/viewer-probe/turns/2/index.html")
            heading = await page.locator("h1").inner_text()
            await page.goto((out / "index.html").as_uri())
            compare = await page.locator("#compare").is_disabled()
            return {"count": count, "hrefs": hrefs, "heading": heading, "compare": compare,
                    "no_compare_on_turns": compare_disabled, "errors": errors}

    seen = asyncio.run(main())
    assert seen["count"].startswith("9 of 9 turns"), seen
    assert seen["hrefs"] and all(href.startswith("file://") and href.endswith("/index.html") for href in seen["hrefs"])
    assert all(Path(unquote(urlsplit(href).path)).is_file() for href in seen["hrefs"]), seen["hrefs"]
    assert "turn 2" in seen["heading"], seen
    assert seen["compare"] is True  # an exported site holds no comparison pages
    assert not seen["errors"], seen


def test_max_pages_bounds_the_crawl_and_the_report_says_so(view_runs: dict[str, Path], tmp_path: Path) -> None:
    app = create_app(ViewState(Catalog.from_paths([view_runs["oracle"]]), modes={"exportprobe": ProbeMode()}))
    report = export_site(app, tmp_path / "site", max_pages=2)
    assert report.pages == 2 and report.left_out
    assert "past --max-pages" in report.summary()
    assert len(list((tmp_path / "site").rglob("index.html"))) == 2


def test_the_command_line_exports(view_runs: dict[str, Path], tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "runner.view", str(view_runs["oracle"]), "--export",
                           str(tmp_path / "site"), "--max-pages", "50"], cwd=REPO_ROOT, env=cli_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"to {tmp_path / 'site'}" in done.stdout


# Evidence files whose names a browser could take for active content, each running a script that, where it runs,
# changes the document's title (HTML, XHTML, SVG and XML alike) - and a PNG name over HTML, which must stay an image.
_RUNS = "<script>document.title = 'RAN'</script>"
_XML_RUNS = '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>' + \
    '<script>document.title = "RAN"</script></body></html>'
_SVG_RUNS = '<svg xmlns="http://www.w3.org/2000/svg"><script>document.title = "RAN"</script></svg>'
POISONED = {
    "evil.HTML": _RUNS, "evil.Htm": _RUNS, "evil.html": _RUNS, "evil.shtml": _RUNS, "evil.mhtml": _RUNS,
    "evil.SVG": _SVG_RUNS, "evil.svg": _SVG_RUNS, "evil.xml": _XML_RUNS, "evil.xhtml": _XML_RUNS,
    "evil.xht": _XML_RUNS, "evil.XHTML": _XML_RUNS, "evil.PNG": _RUNS, "evil.png": _RUNS, "evil": _RUNS,
    "evil.css": "body { background: url(/static/view.css) }",
}


@dataclass
class EvidenceLister:
    """A page linking every file of one evidence folder, as the viewer's turn pages link what a turn left."""

    folder: str
    name: str = "evidencelist"
    title: str = "Evidence"
    router: APIRouter = field(default_factory=APIRouter)

    def __post_init__(self) -> None:
        @self.router.get("/evidencelist/{run_id}", response_class=HTMLResponse)
        def files(request: Request, run_id: str) -> HTMLResponse:
            folder = Path(state(request).catalog.run(run_id).path or ".") / self.folder
            links = "".join(f'<li><a class="file" href="/files/{run_id}/{self.folder}/{path.name}">{path.name}</a></li>'
                            for path in sorted(folder.iterdir()) if path.is_file())
            return _page(run_id, f"<ul>{links}</ul>", request)


def test_evidence_is_exported_inert_whatever_its_name(view_runs: dict[str, Path], tmp_path: Path) -> None:
    """Every evidence file is written under a name a browser shows as an image or text (lower-case inert
    suffixes kept, ".txt" added to the rest), none is taken for a page, and opened from disk none runs."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(view_runs["oracle"], run, symlinks=True)
    folder = "evidence/poisoned/1"
    (run / folder).mkdir(parents=True)
    for name, text in POISONED.items():
        (run / folder / name).write_text(text)
    app = create_app(ViewState(Catalog.from_paths([run]), modes={"evidencelist": EvidenceLister(folder)}))
    run_id = next(iter(app.state.view.catalog.runs))
    report = export_site(app, tmp_path / "site", start=(f"/evidencelist/{run_id}",))
    written = tmp_path / "site" / "files" / run_id / folder
    names = sorted(path.name for path in written.iterdir())
    assert names == sorted(name if name in ("evil.png",) else name + ".txt" for name in POISONED), names
    assert not list((tmp_path / "site" / "files").rglob("index.html"))  # no evidence taken for a page
    assert not [path for path in report.missing if path.startswith("/files/")], report.missing

    async def main() -> dict[str, str]:
        titles = {}
        async with chromium() as browser:
            page = await browser.new_page()
            for path in sorted(written.iterdir()):
                await page.goto(path.as_uri())
                await page.wait_for_timeout(50)
                titles[path.name] = await page.title()
        return titles

    titles = asyncio.run(main())
    assert not [name for name, title in titles.items() if title == "RAN"], titles


def test_evidence_is_served_as_an_image_a_download_or_text() -> None:
    from runner.view.inert import exported_name, served_media_type

    assert served_media_type("shot.png") == "image/png" and served_media_type("SHOT.PNG") == "image/png"
    assert served_media_type("trace.zip") == "application/zip"
    for name in POISONED:
        if not name.lower().endswith(".png"):
            assert served_media_type(name).startswith("text/plain"), name
    assert exported_name("dom.html") == "dom.html.txt" and exported_name("build.log") == "build.log.txt"
    assert exported_name("notes.txt") == "notes.txt" and exported_name("NOTES.TXT") == "NOTES.TXT.txt"
