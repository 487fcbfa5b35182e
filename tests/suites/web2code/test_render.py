"""Deterministic rendering of golden pages (runner/suites/web2code/render.py), real Chromium."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from runner.browser.launch import BrowserPool
from runner.suites.web2code.image import load_rgb
from runner.suites.web2code.render import (
    PageSource,
    StaticSite,
    open_rendered_page,
    render_page,
    render_settings,
)

pytestmark = pytest.mark.browser

PAGES = Path(__file__).resolve().parents[3] / "tasks" / "web2code" / "pages"
ALL_PAGES = sorted(p for p in PAGES.iterdir() if (p / "index.html").is_file())


def test_there_are_enough_golden_pages():
    assert len(ALL_PAGES) >= 12


def test_static_site_serves_folder_and_overrides(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "a.css").write_text("body{}")
    (root / "index.html").write_text("on disk")
    (tmp_path / "secret.txt").write_text("outside the folder")
    with StaticSite(root, {"/index.html": "override"}) as site:
        assert site.origin.startswith("http://127.0.0.1:")
        assert urllib.request.urlopen(site.url("index.html"), timeout=5).read() == b"override"
        resp = urllib.request.urlopen(site.url("a.css"), timeout=5)
        assert resp.read() == b"body{}" and resp.headers["Content-Type"].startswith("text/css")
        for bad in ("missing.png", "../secret.txt", "%2e%2e/secret.txt", "x/../../secret.txt"):
            with pytest.raises(urllib.error.HTTPError):
                urllib.request.urlopen(site.url(bad), timeout=5)


def test_same_page_twice_gives_identical_pixels():
    page = PAGES / "hearth-bakery"

    async def run():
        async with BrowserPool(render_settings()) as pool:
            a = await render_page(pool, PageSource.folder(page))
            b = await render_page(pool, PageSource.folder(page))
        return a, b

    a, b = asyncio.run(run())
    assert a.width == 1280 and 1500 <= a.height <= 3000
    assert (load_rgb(a.png) == load_rgb(b.png)).all()


def test_every_golden_page_renders_without_external_requests(tmp_path):
    async def run():
        limit = asyncio.Semaphore(3)  # a few contexts at once: the browser has 2 cores to share

        async def one(pool, page):
            async with limit:
                return page.name, await render_page(pool, PageSource.folder(page), tmp_path / f"{page.name}.png")

        async with BrowserPool(render_settings()) as pool:
            return dict(await asyncio.gather(*(one(pool, p) for p in ALL_PAGES)))

    results = asyncio.run(run())
    for name, r in results.items():
        assert r.width == 1280, name
        assert 1500 <= r.height <= 3000, (name, r.height)
        assert r.blocked == [], (name, r.blocked)
        assert r.missing == [], (name, r.missing)
        assert r.page_errors == [], (name, r.page_errors)
        assert (tmp_path / f"{name}.png").stat().st_size > 0


def test_html_string_with_asset_folder_and_blocked_external(tmp_path):
    page = PAGES / "hearth-bakery"
    html = (page / "index.html").read_text()
    # the same page as a string renders like the folder
    changed = html.replace("Slow dough, honest crust.", "Slow dough, honest crust!")
    leaky = html.replace("</body>", '<img src="https://example.com/pixel.png"></body>')

    async def run():
        async with BrowserPool(render_settings()) as pool:
            same = await render_page(pool, PageSource.from_html(html, page))
            ref = await render_page(pool, PageSource.folder(page))
            diff = await render_page(pool, PageSource.from_html(changed, page))
            leak = await render_page(pool, PageSource.from_html(leaky, page))
            async with open_rendered_page(pool, PageSource.folder(page)) as session:
                vp = session.page.viewport_size
                dpr = await session.page.evaluate("window.devicePixelRatio")
        return same, ref, diff, leak, vp, dpr

    same, ref, diff, leak, vp, dpr = asyncio.run(run())
    assert (load_rgb(same.png) == load_rgb(ref.png)).all()
    assert not np.array_equal(load_rgb(diff.png), load_rgb(ref.png))
    assert leak.blocked == ["https://example.com/pixel.png"]
    assert vp == {"width": 1280, "height": 800} and dpr == 1


def test_full_page_png_has_the_pixels_of_playwrights_full_page_screenshot():
    # A page taller than the viewport (captured beyond it) and one that fits, and a page with a running Web
    # Animation (Playwright's own path): each the same pixels as Playwright's screenshot of the same page.
    tall = "<body style='margin:0'>" + "".join(
        f"<div style='height:300px;background:hsl({i * 40},70%,60%)'>row {i}</div>" for i in range(8)) + "</body>"
    short = "<body><h1>short</h1><input autofocus value='caret'></body>"
    animated = (short + "<div id='a' style='width:50px;height:50px;background:red'></div>"
                "<script>document.getElementById('a').animate([{opacity: 0}, {opacity: 1}], "
                "{duration: 100000, iterations: Infinity})</script>")

    async def run() -> list[tuple[bytes, bytes]]:
        shots = []
        async with BrowserPool(render_settings()) as pool:
            for html in (tall, short, animated):
                async with open_rendered_page(pool, PageSource.from_html(html, PAGES / "hearth-bakery")) as session:
                    ours = await session.full_page_png()
                    theirs = await session.page.screenshot(full_page=True, animations="disabled", caret="hide")
                shots.append((ours, theirs))
        return shots

    shots = asyncio.run(run())
    assert load_rgb(shots[0][0]).shape == (2400, 1280, 3)
    for ours, theirs in shots:
        assert np.array_equal(load_rgb(ours), load_rgb(theirs))
