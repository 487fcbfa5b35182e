"""MT-Web2Code eq. 6 in the operators' candidate filter (runner/suites/web2code/operators.py), real Chromium."""

from __future__ import annotations

import asyncio

import pytest

from runner.browser.launch import BrowserPool
from runner.suites.web2code.fingerprint import assign_fingerprints
from runner.suites.web2code.operators import install_helpers
from runner.suites.web2code.render import render_settings
from runner.suites.web2code.trajectory import open_files_page

pytestmark = pytest.mark.browser

# A card (a removal/duplication candidate: small, not top-level, not a child of <body>) holding a paragraph.
PAGE = """<!DOCTYPE html><html><head><style>
body { margin: 0; font: 16px sans-serif; } section { padding: 24px; } .card { border: 1px solid #999; padding: 12px; }
</style></head><body><main><section class="list"><div class="card" id="card">
<p id="gone">A paragraph the first defect removes entirely.</p><p id="kept">Another paragraph that stays.</p>
</div></section><section style="height: 900px"><p>Filler text so the page is long.</p></section></main></body></html>"""

DUPLICATION = {"name": "duplication", "dimension": "elements", "structural": True}
COLOR = {"name": "color", "dimension": "color", "structural": False}


def _candidates_after_removal(assets_dir) -> dict[str, object]:
    async def run():
        async with BrowserPool(render_settings()) as pool:
            async with open_files_page(pool, {"index.html": PAGE}, assets_dir) as session:
                page = session.page
                await assign_fingerprints(page)
                await install_helpers(page)
                fp = lambda sel: page.evaluate("(s) => document.querySelector(s).getAttribute('data-fp')", sel)  # noqa: E731
                card, gone, kept = await fp("#card"), await fp("#gone"), await fp("#kept")
                removed = await page.evaluate("([fp]) => window.__w2c.apply('removal', fp, 0)", [gone])
                await page.evaluate("() => window.__w2c.commit()")
                accepted = [{"fp": gone, "dimension": "elements", "structural": True, "ancestors": removed["ancestors"]}]
                dup = await page.evaluate("([o, a]) => window.__w2c.candidates(o, a, [])", [DUPLICATION, accepted])
                color = await page.evaluate("([o, a]) => window.__w2c.candidates(o, a, [])", [COLOR, accepted])
                return {"card": card, "kept": kept, "removed": removed, "dup": {c["fp"] for c in dup},
                        "color": {c["fp"] for c in color}}

    return asyncio.run(run())



def test_a_removed_targets_ancestor_gets_no_same_dimension_operator(tmp_path):
    found = _candidates_after_removal(tmp_path)
    assert found["removed"]["ok"]
    # The ancestry was recorded before the element left the page: the card is its nearest ancestor.
    assert found["removed"]["ancestors"][0] == found["card"]
    # eq. 6: the card is an ancestor of the removed paragraph, so no second "elements" operator on it ...
    assert found["card"] not in found["dup"]
    # ... and (our stricter rule, a structural edit relates to nothing else) no operator of any dimension.
    assert found["card"] not in found["color"]
    # An unrelated sibling of the removed paragraph is still a candidate for both.
    assert found["kept"] in found["dup"] and found["kept"] in found["color"]
