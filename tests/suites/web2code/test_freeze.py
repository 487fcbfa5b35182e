"""Freezing golden pages that run scripts (runner/suites/web2code/freeze.py), real Chromium, and the project's
own scripted pages (tasks/web2code/scripted_pages) through the whole suite: trajectories and oracle scores."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from runner.browser.launch import BrowserPool
from runner.suites.web2code.freeze import FreezeError, freeze_page
from runner.suites.web2code.render import render_settings
from runner.suites.web2code.trajectory import TrajectoryParams, load_or_generate, open_files_page
from tests.conftest import REPO_ROOT, cli_env, runner_command

pytestmark = pytest.mark.browser

PAGES = REPO_ROOT / "tasks" / "web2code" / "scripted_pages"
SLUGS = ("harbor-lights-theme", "orchard-coop-components", "quarry-trail-jsonld")

CANVAS = """<!DOCTYPE html><html><body><h1>Chart</h1><canvas id=c width=400 height=200></canvas>
<script>const g = document.getElementById('c').getContext('2d'); g.fillStyle = '#c33'; g.fillRect(0, 0, 400, 200);</script>
</body></html>"""
CLOCK = """<!DOCTYPE html><html><body><h1>Now</h1><p id=t>0</p>
<script>let n = 0; setInterval(() => { document.getElementById('t').textContent = String(++n); }, 50);</script>
</body></html>"""


def _files(page_dir: Path) -> dict[str, str]:
    return {p.relative_to(page_dir).as_posix(): p.read_text() for p in page_dir.rglob("*") if p.suffix in (".html", ".css")}


def _freeze(page_dir: Path, files: dict[str, str], **options):
    async def run():
        async with BrowserPool(render_settings()) as pool:
            return await freeze_page(lambda f: open_files_page(pool, f, page_dir), files, **options)

    return asyncio.run(run())


def test_a_theme_switcher_is_frozen_into_its_settled_dom():
    frozen = _freeze(PAGES / "harbor-lights-theme", _files(PAGES / "harbor-lights-theme"))
    html = frozen.files["index.html"]
    assert frozen.frozen and frozen.report["removed"]["executable"] == 1 and frozen.report["removed"]["handlers"] == 1
    assert '<html lang="en" data-theme="dusk">' in html  # what the script decided, now markup
    assert '<span id="theme-label">Evening theme</span>' in html
    assert "<script" not in html and "onclick" not in html
    assert frozen.report["render_diff_px"] <= 100  # the snapshot renders like the live page (eq. 7's tau_vis)


def test_a_bundled_component_script_is_frozen_with_what_it_built():
    page = PAGES / "orchard-coop-components"
    frozen = _freeze(page, _files(page))
    html = frozen.files["index.html"]
    assert "<script" not in html
    assert html.count('<article class="card">') == 6 and "Bramley apples" in html and "Weir Cottage" in html
    assert 'data-component-styles="orchard"' in html  # the style element the bundle injected


def test_json_ld_is_kept_by_default_and_dropped_by_the_option():
    page = PAGES / "quarry-trail-jsonld"
    kept = _freeze(page, _files(page))
    assert not kept.frozen and kept.files == _files(page)  # inert: nothing to freeze
    dropped = _freeze(page, _files(page), json_ld="drop")
    assert dropped.frozen and dropped.report["removed"]["json_ld"] == 1
    assert "application/ld+json" not in dropped.files["index.html"] and "Quarry Hill Trail Run" in dropped.files["index.html"]


def test_pages_that_cannot_be_frozen_say_why(tmp_path):
    with pytest.raises(FreezeError, match="renders .* px differently from the live page"):
        _freeze(tmp_path, {"index.html": CANVAS})  # a canvas drawing is not in the DOM
    with pytest.raises(FreezeError, match="keep changing the DOM"):
        _freeze(tmp_path, {"index.html": CLOCK})


@pytest.mark.parametrize("track", ["micro", "macro"])
def test_each_scripted_page_yields_a_trajectory(track, tmp_path):
    params = TrajectoryParams(track=track, seed=0, turns=5, k_defects=3)

    async def run():
        async with BrowserPool(render_settings()) as pool:
            return [await load_or_generate(pool, PAGES / slug, params, tmp_path) for slug in SLUGS]

    for slug, traj in zip(SLUGS, asyncio.run(run())):
        assert traj.ok, (slug, traj.reason)
        assert len(traj.steps) == 5
        assert "<script src=" not in traj.state(0)["index.html"]
        meta = json.loads((traj.folder / "trajectory.json").read_text())
        assert meta["freeze"]["frozen"] is (slug != "quarry-trail-jsonld")


@pytest.mark.slow
@pytest.mark.parametrize("track", ["micro", "macro"])
def test_the_oracle_scores_one_on_the_scripted_pages(track, tmp_path):
    run_dir = tmp_path / "run"
    cmd = runner_command(f"suite={track}", "model=oracle", "judge=rules", "tracking=off", "actor=none",
                         f"suite.pages_path={PAGES}", "suite.turns=2", f"suite.cache_dir={tmp_path / 'cache'}",
                         f"hydra.run.dir={run_dir}")
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    records = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]
    assert sorted({r["task_id"] for r in records}) == list(SLUGS) and len(records) == 6
    for record in records:
        assert record["scores"]["score"] == pytest.approx(1.0), record
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["web2code"]["skipped_pages"] == [] and summary["score"] == pytest.approx(1.0)
