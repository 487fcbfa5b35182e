"""Element fingerprints (eq. 3) on the golden pages (runner/suites/web2code/fingerprint.py), real Chromium."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.browser.launch import BrowserPool
from runner.suites.web2code.fingerprint import (
    FP_ATTR,
    assign_fingerprints,
    element_boxes,
    fingerprint_hash,
    strip_fingerprints,
    top_level_regions,
)
from runner.suites.web2code.render import PageSource, open_rendered_page, render_settings

PAGES = Path(__file__).resolve().parents[3] / "tasks" / "web2code" / "pages"
ALL_PAGES = sorted(p for p in PAGES.iterdir() if (p / "index.html").is_file())


# ---- pure Python ---------------------------------------------------------------------------------


def test_strip_fingerprints_removes_every_data_fp():
    html = (
        '<html data-fp="aa"><body data-fp=\'bb\' class="x"><p data-fp="cc-1">a data-fp="kept text"</p>'
        '<img data-fp=dd src="a.svg"/><div title="x > y" data-fp="ee">t</div><br data-fp></body></html>'
    )
    out = strip_fingerprints(html)
    assert out == (
        '<html><body class="x"><p>a data-fp="kept text"</p><img src="a.svg"/>'
        '<div title="x > y">t</div><br></body></html>'
    )


def test_python_hash_is_position_free_and_ignores_data_fp():
    a = fingerprint_hash("P", "  Hello \n world ", {"class": "x", "id": "y"})
    b = fingerprint_hash("p", "Hello world", [("id", "y"), ("class", "x"), (FP_ATTR, "zzz")])
    assert a == b and len(a) == 16
    assert fingerprint_hash("p", "Hello world", {"class": "x"}) != a
    assert fingerprint_hash("span", "Hello world", {"class": "x", "id": "y"}) != a


# ---- in the browser ------------------------------------------------------------------------------


async def _fingerprint_page(pool, source):
    async with open_rendered_page(pool, source) as session:
        n = await assign_fingerprints(session.page)
        fps = await session.page.eval_on_selector_all("[data-fp]", "els => els.map(e => e.getAttribute('data-fp'))")
        total = await session.page.evaluate("document.querySelectorAll('*').length")
        regions = await top_level_regions(session.page)
        boxes = await element_boxes(session.page, [r["fp"] for r in regions] + ["not-there"])
        html = await session.page.content()
        twin = await session.page.evaluate(
            """() => { const h = document.querySelector('h1');
                       let t = ''; for (const n of h.childNodes) if (n.nodeType === 3) t += n.nodeValue;
                       return {text: t, attrs: Array.from(h.attributes).map(a => [a.name, a.value]),
                               fp: h.getAttribute('data-fp')}; }"""
        )
        page_height = await session.page.evaluate("document.documentElement.scrollHeight")
    return {"n": n, "fps": fps, "total": total, "regions": regions, "boxes": boxes, "html": html,
            "h1": twin, "height": page_height}


@pytest.mark.browser
def test_fingerprints_regions_and_stripping_on_every_golden_page():
    async def run():
        limit = asyncio.Semaphore(3)  # a few contexts at once: the browser has 2 cores to share

        async def both_loads(pool, page):
            async with limit:
                first = await _fingerprint_page(pool, PageSource.folder(page))
                second = await _fingerprint_page(pool, PageSource.folder(page))
            return page.name, (first, second)

        async with BrowserPool(render_settings()) as pool:
            pairs = await asyncio.gather(*(both_loads(pool, p) for p in ALL_PAGES))
        return dict(pairs)

    for name, (first, second) in asyncio.run(run()).items():
        # every element got one, all unique, and the same on a second load
        assert first["n"] == first["total"] == len(first["fps"]), name
        assert len(set(first["fps"])) == len(first["fps"]), name
        assert first["fps"] == second["fps"], name
        # >= 4 top-level semantic regions, each with a fingerprint and a real box in page coordinates
        regions = first["regions"]
        assert len(regions) >= 4, (name, regions)
        for r in regions:
            x, y, w, h = first["boxes"][r["fp"]]
            assert w > 0 and h > 0 and 0 <= y < first["height"], (name, r)
        assert "not-there" not in first["boxes"]
        # the Python twin of the hash agrees with the page for the page's <h1>
        h1 = first["h1"]
        attrs = [a for a in h1["attrs"] if a[0] != FP_ATTR]
        assert h1["fp"].split("-")[0] == fingerprint_hash("h1", h1["text"], attrs), name
        # the model never sees them
        stripped = strip_fingerprints(first["html"])
        assert FP_ATTR in first["html"] and FP_ATTR not in stripped, name


@pytest.mark.browser
def test_duplicates_are_suffixed_in_document_order_and_survive_edits(tmp_path):
    (tmp_path / "index.html").write_text(
        "<!doctype html><html><head></head><body><ul><li class='sep'></li><li>a</li><li class='sep'></li>"
        "<li class='sep'></li></ul><section><h2>Keep</h2><p>x</p></section></body></html>"
    )

    async def run():
        async with BrowserPool(render_settings()) as pool:
            async with open_rendered_page(pool, PageSource.folder(tmp_path)) as session:
                await assign_fingerprints(session.page)
                seps = await session.page.eval_on_selector_all("li.sep", "els => els.map(e => e.dataset.fp)")
                h2 = await session.page.eval_on_selector("h2", "e => e.dataset.fp")
                before = (await element_boxes(session.page, [h2]))[h2]
                # a structural deletion reflows the page; the fingerprint still finds the element
                await session.page.evaluate("document.querySelector('ul').remove()")
                after = (await element_boxes(session.page, [h2]))[h2]
                return seps, h2, before, after

    seps, h2, before, after = asyncio.run(run())
    base = seps[0]
    assert seps == [base, f"{base}-1", f"{base}-2"]
    assert "-" not in h2
    assert after[1] < before[1]  # moved up after the deletion, tracked by id, not by position
