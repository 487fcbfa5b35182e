"""The Reverse-Corruption Trajectory Engine (runner/suites/web2code/trajectory.py, operators.py), real Chromium."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from runner.browser.launch import BrowserPool
from runner.suites.web2code.image import load_rgb
from runner.suites.web2code.fingerprint import FP_ATTR, assign_fingerprints
from runner.suites.web2code.operators import OPERATOR_BY_NAME, OPERATORS, install_helpers
from runner.suites.web2code.render import render_settings, screenshot_png
from runner.suites.web2code.trajectory import (
    Trajectory,
    TrajectoryParams,
    changed_pixels,
    load_or_generate,
    open_files_page,
)
from tests.suites.web2code.w2c_pages import (
    CLUB_CSS,
    CLUB_HTML,
    ONE_REGION_HTML,
    SCRIPT_HTML,
    SVG,
    write_page,
    write_two_pages,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pages")
    write_two_pages(root)
    write_page(root, "one-region", ONE_REGION_HTML)
    write_page(root, "scripted", SCRIPT_HTML)
    return root


def _generate(page: Path, params: TrajectoryParams, cache: Path) -> Trajectory:
    async def run():
        async with BrowserPool(render_settings()) as pool:
            return await load_or_generate(pool, page, params, cache)

    return asyncio.run(run())


MICRO = TrajectoryParams(track="micro", seed=7, turns=2, k_defects=3)
MACRO = TrajectoryParams(track="macro", seed=3, turns=2)


@pytest.fixture(scope="module")
def micro_traj(pages, tmp_path_factory) -> Trajectory:
    return _generate(pages / "chess-club", MICRO, tmp_path_factory.mktemp("cache"))


def test_operator_table_is_the_papers():
    # Table 2: nine atomic operators over the five perceptual dimensions.
    assert len(OPERATORS) == 9
    assert {op.dimension for op in OPERATORS} == {"layout", "elements", "text", "color", "spacing"}
    assert {op.name for op in OPERATORS if op.kind == "str"} == {"removal", "duplication", "text_content"}


# Each operator on an element it applies to: the edit is visible by eq. 7 and its undo restores the pixels.
OPERATOR_TARGETS = {
    "alignment": "section.news > p", "removal": "td", "duplication": ".btn", "text_content": "h2",
    "font": "footer p", "color": "h1", "box_spacing": "section.join h2", "sizing": "img", "decoration": "header p",
}


def test_each_operator_is_visible_and_undoable(tmp_path):
    page_dir = write_page(tmp_path, "club", CLUB_HTML, {"club.css": CLUB_CSS, "pics/board.svg": SVG})
    files = {"index.html": CLUB_HTML, "club.css": CLUB_CSS}

    async def run():
        out = {}
        async with BrowserPool(render_settings()) as pool:
            async with open_files_page(pool, files, page_dir) as session:
                await assign_fingerprints(session.page)
                await install_helpers(session.page)
                base = load_rgb(await screenshot_png(session))
                for name, selector in OPERATOR_TARGETS.items():
                    fp = await session.page.evaluate(
                        "(s) => document.querySelector(s).getAttribute('data-fp')", selector)
                    cands = await session.page.evaluate(
                        "([o]) => window.__w2c.candidates(o, [], [])",
                        [{"name": name, "dimension": OPERATOR_BY_NAME[name].dimension, "structural": False}])
                    result = await session.page.evaluate("([o, fp]) => window.__w2c.apply(o, fp, 1)", [name, fp])
                    after = load_rgb(await screenshot_png(session))
                    await session.page.evaluate("() => window.__w2c.undo()")
                    restored = load_rgb(await screenshot_png(session))
                    out[name] = (fp in {c["fp"] for c in cands}, result["ok"], changed_pixels(base, after, 0),
                                 changed_pixels(base, restored, 0))
        return out

    results = asyncio.run(run())
    for name, (applicable, ok, delta, residue) in results.items():
        assert applicable and ok, name
        assert delta >= MICRO.tau_vis, (name, delta)  # eq. 7
        assert residue == 0, (name, residue)


def test_micro_trajectory_is_deterministic_for_a_seed(pages, micro_traj, tmp_path):
    again = _generate(pages / "chess-club", MICRO, tmp_path / "other-cache")
    assert micro_traj.ok and again.ok, (micro_traj.reason, again.reason)
    a = json.loads((micro_traj.folder / "trajectory.json").read_text())
    b = json.loads((again.folder / "trajectory.json").read_text())
    assert a["steps"] == b["steps"]
    for t in range(MICRO.turns + 1):
        assert micro_traj.state(t) == again.state(t)
        assert micro_traj.render_path(t).read_bytes() == again.render_path(t).read_bytes()
    # A cache hit returns the same trajectory without generating.
    cached = _generate(pages / "chess-club", MICRO, micro_traj.folder.parent)
    assert cached.folder == micro_traj.folder and cached.steps == micro_traj.steps


def test_micro_defects_visible_located_and_independent(micro_traj):
    assert len(micro_traj.steps) == MICRO.turns
    for step in micro_traj.steps:
        assert len(step["ops"]) == MICRO.k_defects
        assert step["footprint_px"] >= MICRO.tau_vis
        for op in step["ops"]:
            assert op["delta_px"] >= MICRO.tau_vis  # eq. 7
            for key in ("box_before", "box_after"):  # located through the fingerprints on G and B
                assert op[key] and op[key][2] > 0 and op[key][3] > 0, (op, key)
    # No state the model sees carries a fingerprint; the reference of the last turn is H0.
    for t in range(MICRO.turns + 1):
        assert FP_ATTR not in micro_traj.state(t)["index.html"]

    async def relations():
        out = []
        async with BrowserPool(render_settings()) as pool:
            for step in micro_traj.steps:
                files = micro_traj.state(step["t"] - 1)
                async with open_files_page(pool, files, micro_traj.assets_dir) as session:
                    await assign_fingerprints(session.page)
                    await install_helpers(session.page)
                    ops = step["ops"]
                    for i in range(len(ops)):
                        for j in range(i + 1, len(ops)):
                            rel = await session.page.evaluate(
                                "([a, b]) => window.__w2c.relation(a, b)",
                                [ops[i]["locator_before"]["fps"][0], ops[j]["locator_before"]["fps"][0]])
                            out.append((rel, ops[i], ops[j]))
        return out

    for rel, a, b in asyncio.run(relations()):
        assert rel != "same"
        if rel is not None:  # eq. 6: related targets never share a dimension
            assert a["dimension"] != b["dimension"]
            assert a["op"] not in ("removal", "duplication") and b["op"] not in ("removal", "duplication")


def test_macro_anchors_and_regions(pages, tmp_path):
    traj = _generate(pages / "field-notes", MACRO, tmp_path)
    assert traj.ok, traj.reason
    for step in traj.steps:
        region = step["region"]
        assert region["tag"] in MACRO.semantic_tags
        assert region["box_before"][2] >= MACRO.tau_w  # eq. 4
        assert MACRO.tau_h_min <= region["box_before"][3] <= MACRO.tau_h_max
        assert region["anchors"]["prev"] or region["anchors"]["next"]  # eq. 5
        assert region["box_after"] and traj.crop_path(step["t"]).is_file()

    async def between():
        async with BrowserPool(render_settings()) as pool:
            out = []
            for step in traj.steps:
                t, region = step["t"], step["region"]
                for state in (t - 1, t):
                    async with open_files_page(pool, traj.state(state), traj.assets_dir) as session:
                        await assign_fingerprints(session.page)
                        await install_helpers(session.page)
                        loc = region["locator_between"]
                        out.append((state == t, region, await session.page.evaluate(
                            "(l) => window.__w2c.between(l.prev, l.next, l.parent)", loc)))
            return out

    for corrupted, region, found in asyncio.run(between()):
        assert found["found"], found  # the anchors survive the deletion and are found again
        if corrupted:
            assert found["count"] == 0  # nothing left between a- and a+
        else:
            assert found["count"] == 1
            assert [round(v) for v in found["box"]] == [round(v) for v in region["box_before"]]


def test_pages_that_cannot_yield_a_trajectory_say_why(pages, tmp_path):
    lonely = _generate(pages / "one-region", MACRO, tmp_path)
    assert not lonely.ok and "eq. 4" in lonely.reason and "no surviving sibling" in lonely.reason
    scripted = _generate(pages / "scripted", MICRO, tmp_path)
    assert not scripted.ok and "cannot be frozen" in scripted.reason and "px differently" in scripted.reason
    # A skip is cached like a success.
    assert _generate(pages / "one-region", MACRO, tmp_path).reason == lonely.reason


def test_reversal_maps_turns_to_steps():
    # eq. 2: the first repair turn undoes the last corruption step.
    assert [Trajectory.step_for_turn(5, j) for j in range(1, 6)] == [5, 4, 3, 2, 1]
