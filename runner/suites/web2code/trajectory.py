"""The Reverse-Corruption Trajectory Engine of MT-Web2Code (seed paper 003, §3.1-3.4).

Forward process (eq. 1): H_t = C_t(H_{t-1}), t = 1..T, on the golden page H_0 = H*, with the element
fingerprints of eq. 3 injected first (runner/suites/web2code/fingerprint.py):
- macro track (§3.3): C_t = {o_del} deletes one top-level semantic region r satisfying eq. 4
  (tag in T_sem, w(r) >= tau_w, tau_h_min <= h(r) <= tau_h_max, surviving siblings) and records its
  anchors a-, a+ (eq. 5: the nearest surviving rendered siblings) and its parent;
- micro track (§3.4): C_t = {o_1..o_K} injects K defects drawn from the nine operators of Table 2
  (runner/suites/web2code/operators.py), each on a target that respects topological independence (eq. 6)
  and accepted only if the rendered pixel difference it causes is >= tau_vis (eq. 7), else resampled.
  Bounding boxes are re-measured on the fully corrupted page H_t through the fingerprints.
Reversal (eq. 2): repair turn j = 1..T starts from H_{T-j+1} and its ground truth is H_{T-j}.

Everything is deterministic for (page content, track, seed, params): one `random.Random` seeded with
their digest drives every choice, and the browser renders deterministically (render.py). Results are cached
on disk under that key (trajectory.json, the stripped states, their renders and crops), so reruns only read.

Choices the paper leaves open (OURS, documented in docs/web2code.md):
- states are serialized from the live DOM (doctype + documentElement.outerHTML); CSS files are untouched
  (stylistic operators write one inline property) and every state the model sees has `data-fp` stripped;
- eq. 7's ||.||_px is the number of pixels whose channel-max difference exceeds `diff_tau` (0: any change),
  tau_vis = 100 px; eq. 4's bounds default to tau_w = 320 px, tau_h in [40, 1600] px;
- beyond eq. 6 (ancestor and descendant targets must differ in dimension), one element carries at most one
  defect per trajectory, structural operators never share a subtree with another target, and clones made by
  duplication are never targets;
- a page with scripts is skipped (its serialized DOM would run them twice), as is a page where fewer than
  T regions (macro) or K visible defects at some step (micro) can be found; the reason is recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import random
import shutil
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from runner.browser.launch import BrowserPool
from runner.browser.session import PageSession
from runner.suites.web2code.image import load_rgb, pixel_distance
from runner.suites.web2code.fingerprint import (
    FP_ATTR,
    SEMANTIC_TAGS,
    assign_fingerprints,
    strip_fingerprints,
    top_level_regions,
)
from runner.suites.web2code.freeze import FreezeError, freeze_page
from runner.suites.web2code.operators import OPERATORS, STRUCTURAL_OPERATORS, install_helpers
from runner.suites.web2code.render import RENDER_VIEWPORT, StaticSite, screenshot_png

log = logging.getLogger(__name__)

ENGINE_VERSION = "w2c-trajectory-2"  # bump when generation changes: old cache entries are ignored
STATE_SUFFIXES = (".html", ".htm", ".css")  # the files the model reads and rewrites
ENTRY = "index.html"


class TrajectoryParams(BaseModel):
    """Everything that changes a trajectory besides the page content (part of the cache key)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    track: str = Field(pattern="^(macro|micro)$")
    seed: int = 0
    turns: int = Field(5, ge=1, le=20)  # T (§4.1: 5 turns per task)
    k_defects: int = Field(3, ge=1, le=10)  # K (§4.1: 3 localized modifications per turn)
    tau_vis: int = Field(100, ge=1)  # eq. 7: minimum number of changed pixels
    diff_tau: int = Field(0, ge=0, le=254)  # per-pixel channel-max difference that counts as changed
    tau_w: float = Field(320, ge=0)  # eq. 4: minimum region width (px)
    tau_h_min: float = Field(40, ge=0)  # eq. 4: height bounds (px)
    tau_h_max: float = Field(1600, gt=0)
    semantic_tags: tuple[str, ...] = tuple(t for t in SEMANTIC_TAGS if t != "main")  # eq. 4's T_sem
    json_ld: Literal["keep", "drop"] = "keep"  # a frozen page's inert application/ld+json blocks (freeze.py)
    max_attempts: int = Field(60, ge=1)  # resampling budget per defect (eq. 7)


class TrajectoryError(RuntimeError):
    """The page cannot yield a valid trajectory; the message says why (the page is skipped)."""


@dataclass
class Trajectory:
    """A cached trajectory. `steps[t-1]` is the forward step C_t; states 0..T are stripped file sets."""

    page: str
    page_dir: Path
    folder: Path  # cache folder
    params: TrajectoryParams
    status: str  # ok | skipped
    reason: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    state_files: list[str] = field(default_factory=list)
    page_hash: str = ""
    assets: list[str] = field(default_factory=list)  # every media file of the page (micro's asset list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def assets_dir(self) -> Path:
        return self.folder / "assets"

    def state(self, t: int) -> dict[str, str]:
        """Stripped files of H_t (what the model sees / must produce)."""
        root = self.folder / "states" / f"H{t}"
        return {name: (root / name).read_text() for name in self.state_files}

    def render_path(self, t: int) -> Path:
        return self.folder / "renders" / f"H{t}.png"

    def crop_path(self, t: int) -> Path:
        return self.folder / "crops" / f"step{t}.png"

    def step(self, t: int) -> dict[str, Any]:
        return self.steps[t - 1]

    @staticmethod
    def step_for_turn(turns: int, turn: int) -> int:
        """eq. 2: repair turn j reverses forward step t = T - j + 1."""
        return turns - turn + 1


# --------------------------------------------------------------------------- page files and keys


def state_file_names(page_dir: Path) -> list[str]:
    names = sorted(
        p.relative_to(page_dir).as_posix()
        for p in page_dir.rglob("*")
        if p.is_file() and p.suffix.lower() in STATE_SUFFIXES and not any(s.startswith(".") for s in p.relative_to(page_dir).parts)
    )
    if ENTRY not in names:
        raise TrajectoryError(f"{page_dir}: no {ENTRY}")
    return names


def asset_file_names(page_dir: Path) -> list[str]:
    return sorted(
        p.relative_to(page_dir).as_posix()
        for p in page_dir.rglob("*")
        if p.is_file() and p.suffix.lower() not in STATE_SUFFIXES and not any(s.startswith(".") for s in p.relative_to(page_dir).parts)
    )


def page_content_hash(page_dir: Path) -> str:
    digest = hashlib.sha256()
    for p in sorted(x for x in page_dir.rglob("*") if x.is_file()):
        digest.update(p.relative_to(page_dir).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(p.read_bytes()).digest())
    return digest.hexdigest()


def cache_key(page_hash: str, params: TrajectoryParams) -> str:
    payload = json.dumps([ENGINE_VERSION, page_hash, params.model_dump(mode="json")], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def files_digest(files: Mapping[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return digest.hexdigest()


# --------------------------------------------------------------------------- rendering


@asynccontextmanager
async def open_files_page(pool: BrowserPool, files: Mapping[str, str], assets_dir: Path) -> AsyncIterator[PageSession]:
    """Serve `files` (entry index.html) over `assets_dir` on 127.0.0.1 and open them, ready to shoot.

    The one rendering path for golden states and model outputs alike, so the oracle's pixels match exactly
    (same waits as render.open_rendered_page).
    """
    site = StaticSite(assets_dir, dict(files), network=pool.network_namespace)
    await asyncio.to_thread(site.start)
    try:
        async with pool.session(site.url(ENTRY), viewport=RENDER_VIEWPORT) as session:
            await session.goto()
            await session.page.evaluate("() => document.fonts ? document.fonts.ready.then(() => true) : true")
            yield session
    finally:
        await asyncio.to_thread(site.close)


def changed_pixels(a: np.ndarray, b: np.ndarray, diff_tau: int) -> int:
    """eq. 7's ||R(H) - R(o(H))||_px: how many pixels differ by more than diff_tau (channel max)."""
    return int((pixel_distance(a, b) > diff_tau).sum())


# --------------------------------------------------------------------------- generation


async def load_or_generate(pool: BrowserPool, page_dir: Path, params: TrajectoryParams, cache_root: Path) -> Trajectory:
    """The trajectory of `page_dir` for `params`, from the cache or freshly generated (then cached)."""
    page_dir = Path(page_dir).resolve()
    page_hash = page_content_hash(page_dir)
    folder = Path(cache_root) / f"{page_dir.name}-{params.track}-{cache_key(page_hash, params)}"
    meta = folder / "trajectory.json"
    if meta.is_file():
        return _load(meta, page_dir, folder, params)
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}-{id(page_dir)}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        data = await _generate(pool, page_dir, params, tmp, page_hash)
    except TrajectoryError as error:
        data = {"status": "skipped", "reason": str(error)}
    except Exception:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    data.update(version=ENGINE_VERSION, page=page_dir.name, page_hash=page_hash, params=params.model_dump(mode="json"))
    (tmp / "trajectory.json").write_text(json.dumps(data, indent=1, sort_keys=True))
    if folder.exists():  # someone else finished first; theirs is identical
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        os.replace(tmp, folder)
    return _load(meta, page_dir, folder, params)


def _load(meta: Path, page_dir: Path, folder: Path, params: TrajectoryParams) -> Trajectory:
    data = json.loads(meta.read_text())
    return Trajectory(
        page=data["page"], page_dir=page_dir, folder=folder, params=params, status=data["status"],
        reason=data.get("reason", ""), steps=data.get("steps", []), state_files=data.get("state_files", []),
        page_hash=data.get("page_hash", ""), assets=data.get("assets", []),
    )


async def _shot(session: PageSession) -> np.ndarray:
    return load_rgb(await screenshot_png(session))


async def _generate(pool: BrowserPool, page_dir: Path, params: TrajectoryParams, out: Path, page_hash: str) -> dict[str, Any]:
    names = state_file_names(page_dir)
    originals = {n: (page_dir / n).read_text(errors="replace") for n in names}
    assets_dir = out / "assets"
    assets_dir.mkdir()
    asset_names = asset_file_names(page_dir)
    for name in asset_names:
        target = assets_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(page_dir / name, target)
    rng = random.Random(f"{ENGINE_VERSION}|{page_hash}|{params.track}|{params.seed}")

    # 0. A page that runs scripts is rendered, let settle and snapshotted without them (§3.2 "rendered in a
    #    local environment"); the snapshot is H0. A page that cannot be frozen is skipped, saying why.
    try:
        frozen = await freeze_page(lambda files: open_files_page(pool, files, assets_dir), originals,
                                   json_ld=params.json_ld, max_changed_px=params.tau_vis, diff_tau=params.diff_tau)
    except FreezeError as error:
        raise TrajectoryError(f"the page runs scripts and cannot be frozen: {error}") from None
    originals = frozen.files

    # 1. Forward corruption on the live DOM of H0 (fingerprinted), serializing H_0..H_T. After each step the
    #    eq. 3 ids every element would get on the stripped page are noted, so the stripped states can be
    #    measured (and model pages searched) through fingerprints alone.
    async with open_files_page(pool, originals, assets_dir) as session:
        page = session.page
        await install_helpers(page)
        if await page.evaluate("() => window.__w2c.scriptCount()"):
            raise TrajectoryError("the page still runs scripts after freezing; trajectories need a static DOM")
        if session.page_errors:
            raise TrajectoryError(f"the page throws errors: {session.page_errors[0][:200]}")
        await assign_fingerprints(page)
        fp_states = [await page.evaluate("() => window.__w2c.serialize()")]
        fresh = [await page.evaluate("() => window.__w2c.freshMap()")]
        steps: list[dict[str, Any]] = []
        used: set[str] = set()
        for t in range(1, params.turns + 1):
            if params.track == "macro":
                step = await _macro_step(page, params, rng, t, used)
            else:
                step = await _micro_step(session, params, rng, t, used)
            steps.append(step)
            fp_states.append(await page.evaluate("() => window.__w2c.serialize()"))
            fresh.append(await page.evaluate("() => window.__w2c.freshMap()"))
    _attach_locators(params, steps, fresh)

    # 2. Stripped states: what the model sees and must produce. Each is rendered once (the golden V(H_t))
    #    and measured on that same page through re-assigned fingerprints (§3.4 "re-measured").
    state_files = names
    (out / "renders").mkdir()
    (out / "crops").mkdir()
    renders: list[np.ndarray] = []
    for t, html in enumerate(fp_states):
        root = out / "states" / f"H{t}"
        stripped = {n: (strip_fingerprints(html) if n == ENTRY else originals[n]) for n in names}
        for name, content in stripped.items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        async with open_files_page(pool, stripped, assets_dir) as session:
            png = await screenshot_png(session)
            await assign_fingerprints(session.page)
            await install_helpers(session.page)
            await _measure_state(session.page, params, steps, t)
        (out / "renders" / f"H{t}.png").write_bytes(png)
        renders.append(load_rgb(png))

    # 3. Checks: every step visibly changes the page (eq. 9's footprint is never empty), every target located.
    for t in range(1, params.turns + 1):
        footprint = changed_pixels(renders[t - 1], renders[t], params.diff_tau)
        steps[t - 1]["footprint_px"] = footprint
        if footprint < params.tau_vis:
            raise TrajectoryError(f"step {t}: the corrupted page differs from its golden state in only {footprint} px")
        _check_located(steps[t - 1], t)
        if params.track == "macro":
            _save_crop(renders[t - 1], steps[t - 1]["region"]["box_before"], out / "crops" / f"step{t}.png")
    return {"status": "ok", "steps": steps, "state_files": state_files, "assets": asset_names, "freeze": frozen.report}


def _check_located(step: dict[str, Any], t: int) -> None:
    targets = [step["region"]] if "region" in step else step["ops"]
    for target in targets:
        for key in ("box_before", "box_after"):
            b = target.get(key)
            if not b or b[2] <= 0 or b[3] <= 0:
                what = target.get("op", "region")
                raise TrajectoryError(f"step {t}: target {what} on {target['fp']} could not be located ({key})")


def _save_crop(image: np.ndarray, b: list[float], path: Path) -> None:
    from PIL import Image

    x0, y0, x1, y1 = clamp_box(b, image.shape[1], image.shape[0])
    Image.fromarray(image[y0:y1, x0:x1]).save(path)


def clamp_box(b: list[float] | tuple[float, ...], width: int, height: int) -> tuple[int, int, int, int]:
    """A float [x, y, w, h] box as integer pixel bounds (x0, y0, x1, y1) inside an image."""
    x0 = max(0, min(width, int(np.floor(b[0]))))
    y0 = max(0, min(height, int(np.floor(b[1]))))
    x1 = max(x0, min(width, int(np.ceil(b[0] + b[2]))))
    y1 = max(y0, min(height, int(np.ceil(b[1] + b[3]))))
    return x0, y0, x1, y1


async def _macro_step(page, params: TrajectoryParams, rng: random.Random, t: int, used: set[str]) -> dict[str, Any]:
    regions = await top_level_regions(page)
    eligible = []
    why: list[str] = []
    for r in regions:
        x, y, w, h = r["box"]
        if r["tag"] not in params.semantic_tags:
            why.append(f"{r['tag']}: tag not in T_sem")
        elif w < params.tau_w:
            why.append(f"{r['tag']}: width {w:.0f} < tau_w {params.tau_w:.0f}")
        elif not params.tau_h_min <= h <= params.tau_h_max:
            why.append(f"{r['tag']}: height {h:.0f} outside [{params.tau_h_min:.0f}, {params.tau_h_max:.0f}]")
        elif not await page.evaluate("(fp) => window.__w2c.hasSurvivingSiblings(fp)", r["fp"]):
            why.append(f"{r['tag']}: no surviving sibling")
        else:
            eligible.append(r)
    if not eligible:
        found = len(regions)
        raise TrajectoryError(
            f"step {t}: no top-level region satisfies eq. 4 ({found} top-level region(s) left; "
            f"{'; '.join(why[:6]) or 'none found'}); the page needs {params.turns} deletable regions"
        )
    region = rng.choice(eligible)
    assets = await page.evaluate("(fp) => window.__w2c.assetsOf(fp)", region["fp"])
    text = await page.evaluate(
        "(fp) => { const el = document.querySelector('[data-fp=\"' + CSS.escape(fp) + '\"]');"
        " return (el.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 1500); }",
        region["fp"],
    )
    anchors = await page.evaluate("(fp) => window.__w2c.removeRegion(fp)", region["fp"])
    used.add(region["fp"])
    return {
        "t": t,
        "region": {"fp": region["fp"], "tag": region["tag"], "id": region.get("id"), "assets": assets,
                   "text": text, "anchors": anchors, "box_golden": region["box"]},
    }


async def _micro_step(session: PageSession, params: TrajectoryParams, rng: random.Random, t: int, used: set[str]) -> dict[str, Any]:
    page = session.page
    before = await _shot(session)
    accepted: list[dict[str, Any]] = []
    rejected = 0
    for k in range(params.k_defects):
        chosen = None
        for _ in range(params.max_attempts):
            op = rng.choice(OPERATORS)
            spec = {"name": op.name, "dimension": op.dimension, "structural": op.name in STRUCTURAL_OPERATORS}
            chosen_so_far = [{"fp": a["fp"], "dimension": a["dimension"], "structural": a["op"] in STRUCTURAL_OPERATORS,
                              "ancestors": a["ancestors"]} for a in accepted]
            candidates = await page.evaluate("([o, acc, used]) => window.__w2c.candidates(o, acc, used)",
                                             [spec, chosen_so_far, sorted(used)])
            if not candidates:
                rejected += 1
                continue
            target = rng.choice(candidates)
            param = rng.randrange(1 << 20)
            result = await page.evaluate("([o, fp, p]) => window.__w2c.apply(o, fp, p)", [op.name, target["fp"], param])
            if not result["ok"]:
                rejected += 1
                continue
            after = await _shot(session)
            delta = changed_pixels(before, after, params.diff_tau)
            if delta >= params.tau_vis:  # eq. 7: accepted only if visibly evident
                await page.evaluate("() => window.__w2c.commit()")
                before = after
                chosen = {"op": op.name, "dimension": op.dimension, "type": op.kind, "fp": target["fp"],
                          "tag": target["tag"], "param": param, "detail": result["detail"], "delta_px": delta,
                          "neighbours": result["neighbours"], "ancestors": result["ancestors"]}
                break
            await page.evaluate("() => window.__w2c.undo()")  # imperceptible: resample
            rejected += 1
        if chosen is None:
            raise TrajectoryError(
                f"step {t}: found only {k} of K={params.k_defects} visible, independent defects "
                f"after {params.max_attempts} attempts (tau_vis={params.tau_vis} px)"
            )
        accepted.append(chosen)
        used.add(chosen["fp"])
    return {"t": t, "ops": accepted, "resampled": rejected}


def _attach_locators(params: TrajectoryParams, steps: list[dict[str, Any]], fresh: list[dict[str, str]]) -> None:
    """Locators of every target in fresh eq. 3 ids: `locator_before` on H_{t-1}, `locator_after` on H_t.

    A fresh id is what an element gets when a page WITHOUT data-fp is fingerprinted again, so the same
    locator finds the target on the stripped golden state and on a model's page (chain mode, macro scoring).
    """

    def ids(t: int, loc: dict[str, Any]) -> dict[str, Any]:
        m = fresh[t]
        if loc["kind"] == "element":
            return {"kind": "element", "fps": [m[f] for f in loc["fps"] if f in m]}
        return {"kind": loc["kind"], **{k: m.get(loc[k]) if loc.get(k) else None for k in ("prev", "next", "parent")}}

    for step in steps:
        t = step["t"]
        if params.track == "macro":
            r = step["region"]
            r["locator_before"] = ids(t - 1, {"kind": "element", "fps": [r["fp"]]})
            r["locator_between"] = ids(t - 1, {"kind": "between", **r["anchors"]})
            r["locator_after"] = ids(t, {"kind": "gap", **r["anchors"]})
            r["anchor_locators"] = {k: ids(t, {"kind": "element", "fps": [v] if v else []}) for k, v in r["anchors"].items()}
            continue
        for o in step["ops"]:
            n = o["neighbours"]
            o["locator_before"] = ids(t - 1, {"kind": "element", "fps": [o["fp"]]})
            if o["op"] == "removal":
                o["locator_after"] = ids(t, {"kind": "gap", **n})
            elif o["op"] == "duplication":
                o["locator_after"] = ids(t, {"kind": "element", "fps": [o["fp"], o["fp"] + "~dup"]})
            else:
                o["locator_after"] = ids(t, {"kind": "element", "fps": [o["fp"]]})
            o["anchor_locators"] = {
                "target": None if o["op"] == "removal" else ids(t, {"kind": "element", "fps": [o["fp"]]}),
                **{k: ids(t, {"kind": "element", "fps": [v] if v else []}) for k, v in n.items()},
            }


async def _measure_state(page, params: TrajectoryParams, steps: list[dict[str, Any]], t: int) -> None:
    """On the stripped H_t, fingerprinted afresh: boxes after step t, boxes before step t+1, descriptions."""

    async def locate(loc: dict[str, Any] | None) -> list[float] | None:
        return await page.evaluate("(l) => window.__w2c.locate(l)", loc) if loc else None

    async def describe(loc: dict[str, Any] | None) -> str | None:
        if not loc or not loc.get("fps"):
            return None
        return await page.evaluate("(fp) => window.__w2c.describe(fp)", loc["fps"][0])

    def targets(step: dict[str, Any]) -> list[dict[str, Any]]:
        return [step["region"]] if "region" in step else step["ops"]

    if t >= 1:  # H_t is the page after step t: where its targets are now (what the model is shown)
        for target in targets(steps[t - 1]):
            target["box_after"] = await locate(target["locator_after"])
            target["describe_after"] = {k: await describe(v) for k, v in target["anchor_locators"].items()}
    if t + 1 <= len(steps):  # H_t is the golden page before step t+1: where its targets were
        for target in targets(steps[t]):
            target["box_before"] = await locate(target["locator_before"])


# --------------------------------------------------------------------------- observations on any page


async def locate_on_files(pool: BrowserPool, files: Mapping[str, str], assets_dir: Path,
                          locators: list[dict[str, Any]]) -> tuple[bytes, list[dict[str, Any]]]:
    """Render a (stripped) page, fingerprint it afresh (eq. 3) and locate `locators` on it.

    Returns the full-page PNG and, per locator, {"box": [x, y, w, h] or None} plus, for a `between`
    locator, "between": {found, why, box, count} (the region bracketed by the anchors).
    """
    async with open_files_page(pool, files, assets_dir) as session:
        png = await screenshot_png(session)
        await assign_fingerprints(session.page)
        await install_helpers(session.page)
        results = []
        for loc in locators:
            entry: dict[str, Any] = {"box": await session.page.evaluate("(l) => window.__w2c.locate(l)", loc)}
            if loc.get("kind") == "between":
                entry["between"] = await session.page.evaluate(
                    "(l) => window.__w2c.between(l.prev, l.next, l.parent)", loc)
            results.append(entry)
    return png, results


__all__ = [
    "ENGINE_VERSION", "FP_ATTR", "Trajectory", "TrajectoryError", "TrajectoryParams", "changed_pixels", "clamp_box",
    "files_digest", "load_or_generate", "locate_on_files", "open_files_page", "page_content_hash",
]
