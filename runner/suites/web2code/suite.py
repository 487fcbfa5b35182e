"""suite=macro and suite=micro: MT-Web2Code (seed paper 003) on a folder of golden pages.

One task per page (`artifact_kind = "static"`). Its T turns reverse a cached Reverse-Corruption trajectory
(trajectory.py, eq. 2): turn j starts from H_{T-j+1} and its ground truth (TurnSpec.reference_files, what
model=oracle answers) is H_{T-j}. `mode=chain` starts each turn from the model's own previous output (the
default, §3.1), `independent` from the golden previous state (§5.3), `both` runs each page in both modes
(task ids `<page>.chain` / `<page>.independent`) so one run gives the chain-vs-independent curve of Fig. 4.

Scoring (judge_turn; scoring.py for the pixels, rubric.py for the judge's rubrics) renders the model's files
deterministically and fills Verdict.scores with s_inbox, s_outbox, score (eq. 12) and the per-dimension numbers. The paper defines no pass/fail for this
benchmark, so Verdict.passed is always None ("unassessed") and summarize() reports scores, with turn_pass
set to None rather than a misleading 0.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from runner import progress
from runner.browser.launch import BrowserPool
from runner.metrics.basic import basic_summary
from runner.turns.evidence_folder import EvidenceFolder
from runner.suites.web2code.image import (
    JND_DELTA_E, REFLOW_TOLERANCE_PX, RUBRIC_DIMENSIONS, PerceptualColour, final_score, load_rgb, png_bytes,
)
from runner.models.base import GenerationRequest, ModelResponse
from runner.models.fitting import fit_for_model
from runner.turns.records import DimensionScore, FailureBucket, TurnRecord, Verdict, write_json_atomic
from runner.judges.base import Judge, JudgeInput
from runner.suites.base import NO_REWARD, ArtifactKind, EpisodeState, RunFacts, SuiteBase, SuiteSettings, select_tasks
from runner.suites.web2code import observation, rubric, scoring
from runner.suites.web2code.trajectory import (
    Trajectory,
    TrajectoryParams,
    files_digest,
    load_or_generate,
    locate_on_files,
)
from runner.turns.tasks import Task, TurnSpec

log = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parents[3]
TABLE_COLUMNS = (*RUBRIC_DIMENSIONS, "overall", "s_inbox", "s_outbox", "score")
CAPTION_PROMPT = ("Describe this web page region precisely so that a front-end developer could rebuild it without "
                  "seeing it: its layout, every element, all visible text, colours, sizes and spacing.")


class Web2CodeSuiteSettings(SuiteSettings):
    pages_path: str = "tasks/web2code/pages"  # a folder of page folders, each with an index.html
    seed: int = 0
    turns: int | None = Field(5, ge=1, le=20)  # T: turns per page (§4.1)
    k_defects: int = Field(3, ge=1, le=10)  # K: defects per micro turn (§4.1)
    tau: int = Field(0, ge=0, le=254)  # eq. 9 footprint threshold (and eq. 7's per-pixel threshold)
    # eq. 11 as written (every pixel of Ω̄), or only pixels whose SSIM window lies wholly outside Ω.
    outbox_mask: Literal["eq11", "guard_band"] = "eq11"
    # S_outbox's colour penalty (§3.5 gives no formula; image.py): "perceptual" counts visible recolouring only
    # (CIE76 ΔE*ab over color_delta_e, reflow of up to color_shift_px tolerated); "any_pixel" counts every pixel
    # that differs by more than tau (the earlier reading).
    color_penalty: Literal["perceptual", "any_pixel"] = "perceptual"
    color_delta_e: float = Field(JND_DELTA_E, ge=0)  # the just-noticeable difference (Mahy et al. 1994)
    color_shift_px: int = Field(REFLOW_TOLERANCE_PX, ge=0, le=8)
    # Macro S_outbox: the judge block by block, region masked, SSIM the reference and fallback (§3.5); or SSIM only.
    macro_outbox: Literal["judge", "ssim"] = "judge"
    # Golden pages that run scripts are frozen (freeze.py); their application/ld+json blocks kept or dropped.
    json_ld: Literal["keep", "drop"] = "keep"
    tau_vis: int = Field(100, ge=1)  # eq. 7: minimum changed pixels for a defect to count as visible
    tau_w: float = Field(320, ge=0)  # eq. 4 region bounds (px)
    tau_h_min: float = Field(40, ge=0)
    tau_h_max: float = Field(1600, gt=0)
    caption: bool = False  # §5.1 ablation: a caption of the golden crop by the run's `caption` role (macro only)
    mode: Literal["chain", "independent", "both"] = "chain"  # §5.3
    text_only: bool | None = None  # None: from the generator's declared `vision` (text-only unless it declares true)
    cache_dir: str = ".cache/web2code"  # trajectories and renders, keyed by content
    generation_workers: int = Field(2, ge=1, le=8)  # pages generated at once


class Web2CodeSuite(SuiteBase):
    """Renders (trajectories, observations, scoring material) use the browsers of the suite's context."""

    @property
    def perceptual_colour(self) -> PerceptualColour | None:
        """What S_outbox's colour penalty counts (suite.color_penalty); None: any pixel over tau."""
        s = self.settings
        if s.color_penalty == "any_pixel":
            return None
        return PerceptualColour(delta_e=s.color_delta_e, shift_px=s.color_shift_px)

    artifact_kind: ArtifactKind = "static"
    prompt_version = observation.PROMPT_VERSION  # recorded in lineage.json
    paper_tasks = 102  # MT-Web2Code, abstract: "102 tasks spanning 16 vertical domains"
    reads_page_files = False  # scoring and observations render the page themselves (prepare_judging, _observe)

    def __init__(self, settings: Web2CodeSuiteSettings, *, project_root: Path, track: str) -> None:
        self.settings = settings
        self.project_root = Path(project_root)
        self.track = track
        self.name = track
        self.vision = True
        self.skipped: list[dict[str, str]] = []
        self._trajectories: dict[str, Trajectory] = {}
        self._inputs: dict[tuple[str, int], Path] = {}  # (task, turn) -> render of the page the turn started from

    # -- configuration ------------------------------------------------------------------------------

    def configure_run(self, facts: RunFacts) -> None:
        """Learn the generator's declared vision (text-only payloads for a model without it, `suite.text_only`
        unset): the paper's generator sees the page (§3), so a model config used here declares `vision: true`."""
        self.vision = facts.generator.vision

    @property
    def uses_judge(self) -> bool:
        """Micro is scored on pixels (eqs. 9-12) and never calls the judge; macro asks it for the rubric (eq. 8)."""
        return self.track == "macro"

    @property
    def required_roles(self) -> tuple[str, ...]:
        """The §5.1 caption ablation calls a model role of its own, `roles.caption` (runner/run/roles.py)."""
        return ("caption",) if self.track == "macro" and self.settings.caption else ()

    def check_task_sources(self) -> list[str]:
        """Preflight: the page folders exist and the selected ids name pages, without generating trajectories."""
        try:
            dirs = self.page_dirs()
        except FileNotFoundError as error:
            return [str(error)]
        if not dirs:
            return [f"suite.pages_path: {self._path(self.settings.pages_path)} holds no page folder with an index.html"]
        names = {d.name for d in dirs}
        unknown = sorted({i for i in self.settings.task_ids if i.split(".")[0] not in names})
        return [f"suite.task_ids: unknown page(s) {unknown}; known: {sorted(names)}"] if unknown else []

    @property
    def text_only(self) -> bool:
        return self.settings.text_only if self.settings.text_only is not None else not self.vision

    def _path(self, value: str) -> Path:
        path = Path(value)
        return path if path.is_absolute() else self.project_root / path

    @property
    def task_source(self) -> Path:
        return self._path(self.settings.pages_path)

    @property
    def cache_root(self) -> Path:
        return self._path(self.settings.cache_dir)

    def params(self) -> TrajectoryParams:
        s = self.settings
        return TrajectoryParams(track=self.track, seed=s.seed, turns=s.turns or 5, k_defects=s.k_defects,
                                tau_vis=s.tau_vis, diff_tau=s.tau, tau_w=s.tau_w, tau_h_min=s.tau_h_min,
                                tau_h_max=s.tau_h_max, json_ld=s.json_ld)

    def rubric_versions(self) -> dict[str, str]:
        """The judge rubrics this track asks (recorded in lineage.json); micro is scored by pixels alone."""
        if self.track != "macro":
            return {}
        return {rubric.RegionRubric.name: rubric.RegionRubric.version, rubric.OutboxRubric.name: rubric.OutboxRubric.version}

    # -- plan ---------------------------------------------------------------------------------------

    async def planned_tasks(self) -> list[Task]:
        """Stand-ins of the tasks load_tasks would select (one per page and mode, `turns` turns each), found
        without generating trajectories in a browser; a page that yields no trajectory is still counted."""
        modes = ["chain", "independent"] if self.settings.mode == "both" else [self.settings.mode]
        dirs = self.page_dirs()
        if self.settings.task_ids:
            wanted = {i.split(".")[0] for i in self.settings.task_ids}
            dirs = [d for d in dirs if d.name in wanted] or dirs
        turns = self.params().turns
        stand_ins = [Task(id=self._task_id(d.name, mode, single=len(modes) == 1), suite=self.track, sub_suite=mode,
                          title=d.name, turns=[TurnSpec(index=j, prompt="") for j in range(1, turns + 1)])
                     for d in dirs for mode in modes]
        return select_tasks(stand_ins, self.settings)

    def call_bounds(self, tasks: list[Task], per_use: Mapping[str, int]) -> dict[str, int | None]:
        """One generator call per slot; macro: the eq. 8 rubric and the block-by-block S_outbox (§3.5), each
        asked at most rubric.ATTEMPTS times per slot, and with captions (§5.1) one caption per turn."""
        bounds = super().call_bounds(tasks, per_use)
        slots = sum(len(task.turns) for task in tasks)
        if self.uses_judge and "judge" in per_use:
            asks = 2 if self.settings.macro_outbox == "judge" else 1
            bounds["judge"] = slots * asks * rubric.ATTEMPTS
        if "caption" in self.required_roles:
            bounds["caption"] = slots
        return bounds

    # -- tasks --------------------------------------------------------------------------------------

    def page_dirs(self) -> list[Path]:
        root = self._path(self.settings.pages_path)
        if not root.is_dir():
            raise FileNotFoundError(f"suite.pages_path: {root} is not a folder")
        if (root / "index.html").is_file():  # a single page given directly
            return [root]
        return sorted(p for p in root.iterdir() if p.is_dir() and (p / "index.html").is_file())

    async def load_tasks(self) -> list[Task]:
        params = self.params()
        dirs = self.page_dirs()
        if self.settings.task_ids:
            wanted = {i.split(".")[0] for i in self.settings.task_ids}
            dirs = [d for d in dirs if d.name in wanted] or dirs
        modes = ["chain", "independent"] if self.settings.mode == "both" else [self.settings.mode]
        tasks: list[Task] = []
        for traj in await self._prepare_trajectories(dirs, params, modes):
            if not traj.ok:
                self.skipped.append({"page": traj.page, "reason": traj.reason})
                log.warning("web2code: page %s skipped: %s", traj.page, traj.reason)
                continue
            if self.track == "macro" and self.settings.caption:
                await self._captions(traj)
            for mode in modes:
                task = self._task(traj, mode, single=len(modes) == 1)
                self._trajectories[task.id] = traj
                tasks.append(task)
        if not tasks:
            reasons = "; ".join(f"{s['page']}: {s['reason']}" for s in self.skipped) or "no page folders"
            raise ValueError(f"suite {self.track}: no page yields a trajectory ({reasons})")
        return select_tasks(tasks, self.settings)

    async def _prepare_trajectories(self, dirs: list[Path], params: TrajectoryParams, modes: list[str]) -> list[Trajectory]:
        """The pages' trajectories. Under `suite.limit=N` only the pages whose tasks can be among the first N
        task ids (select_tasks' order) get one: pages in order of their first task id, in rounds until N usable
        tasks are known and no page left could come before the N-th (a skipped page lets the next one in).
        `suite.task_ids` has already chosen the pages."""
        limit = self.settings.limit
        if limit is None or self.settings.task_ids:
            return await self._generate(dirs, params)
        single = len(modes) == 1

        def ids(page: str) -> list[str]:
            return sorted(self._task_id(page, mode, single=single) for mode in modes)

        pending = sorted(dirs, key=lambda page_dir: ids(page_dir.name)[0])
        done: list[Trajectory] = []
        while pending:
            usable = sorted(task_id for traj in done if traj.ok for task_id in ids(traj.page))
            if len(usable) >= limit:
                batch = [d for d in pending if ids(d.name)[0] < usable[limit - 1]]  # a prefix of `pending`
                if not batch:
                    break
            else:
                batch = pending[: -(-(limit - len(usable)) // len(modes))]
            pending = pending[len(batch):]
            done += await self._generate(batch, params)
        return done

    async def _generate(self, dirs: list[Path], params: TrajectoryParams) -> list[Trajectory]:
        """Load (from the cache) or generate these pages' trajectories, `generation_workers` at a time."""
        limit = asyncio.Semaphore(self.settings.generation_workers)
        with progress.step(f"MT-Web2Code {self.track} trajectories (cached ones load at once)", total=len(dirs),
                           key=f"web2code-{self.track}-trajectories") as shown:

            async def one(pool: BrowserPool, page_dir: Path) -> Trajectory:
                async with limit:
                    trajectory = await load_or_generate(pool, page_dir, params, self.cache_root)
                shown.advance(detail=page_dir.name)
                return trajectory

            async with self.context.browsers.checkout() as pool:
                return list(await asyncio.gather(*(one(pool, d) for d in dirs)))

    @staticmethod
    def _task_id(page: str, mode: str, *, single: bool) -> str:
        return page if single else f"{page}.{mode}"

    def _task(self, traj: Trajectory, mode: str, *, single: bool) -> Task:
        T = traj.params.turns
        turns = []
        for j in range(1, T + 1):
            t = Trajectory.step_for_turn(T, j)
            instruction = observation.MACRO_INSTRUCTION if self.track == "macro" else observation.MICRO_INSTRUCTION
            turns.append(TurnSpec(
                index=j,
                prompt=instruction,
                reference_files=traj.state(t - 1),
                reference_text=f"Repaired step {t} of the trajectory.",
                requires_previous_artifact=(mode == "chain"),
                extra={"step": t},
            ))
        return Task(
            id=self._task_id(traj.page, mode, single=single),
            suite=self.track,
            sub_suite=mode,
            title=traj.page,
            context=f"MT-Web2Code {self.track}-level repair of the page '{traj.page}'.",
            turns=turns,
            source_path=str(traj.page_dir),
            extra={"trajectory": str(traj.folder), "mode": mode, "page": traj.page},
        )

    async def _captions(self, traj: Trajectory) -> None:
        """§5.1 ablation: one caption per golden crop, by the run's caption role, cached beside the trajectory
        (keyed by the model's name and the crop: conf/model names one configuration each). A caption that came
        back empty or cut at the output cap is named beside it (`.call.json`: what the model wrote, how it ended),
        and each slot that shows it keeps that record in its failed_calls.jsonl (`prepare_judging`)."""
        model = self.context.roles.get("caption")
        if model is None:
            raise ValueError("suite.caption=true: the run's context holds no `caption` model role (roles.caption)")
        for step in traj.steps:
            t = step["t"]
            png = traj.crop_path(t).read_bytes()
            key = hashlib.sha256(model.name.encode() + b"|" + png).hexdigest()[:16]
            path = traj.folder / "captions" / f"step{t}-{key}.txt"
            if not path.exists():
                messages = [{"role": "user", "content": [
                    {"type": "text", "text": CAPTION_PROMPT},
                    {"type": "image_url", "image_url": {"url": observation.data_url(png)}},
                ]}]
                fitted = fit_for_model(model, messages)  # one image; RequestTooLarge if its context is too small
                response = await model.generate(GenerationRequest(task_id=f"caption:{traj.page}", turn=t,
                                                                  messages=fitted.messages))
                path.parent.mkdir(parents=True, exist_ok=True)
                if response.cut or not response.text.strip():
                    write_json_atomic(path.with_suffix(".call.json"), caption_call_record(response, model.name,
                                                                                         traj.page, t))
                path.write_text(response.text.strip())
            step["region"]["caption"] = path.read_text()
            call = path.with_suffix(".call.json")
            if call.is_file():
                step["region"]["caption_call"] = json.loads(call.read_text())

    def trajectory(self, task: Task) -> Trajectory:
        return self._trajectories[task.id]

    def artifact_assets(self, task: Task, turn: TurnSpec) -> Path | None:
        return self.trajectory(task).assets_dir

    # -- observation --------------------------------------------------------------------------------

    def _targets(self, traj: Trajectory, t: int) -> list[dict[str, Any]]:
        step = traj.step(t)
        return [step["region"]] if "region" in step else step["ops"]

    def _render_cache(self, traj: Trajectory, files: dict[str, str]) -> tuple[Path, Path]:
        key = hashlib.sha256((files_digest(files) + "|" + traj.folder.name).encode()).hexdigest()[:24]
        root = self.cache_root / "renders"
        return root / f"{key}.png", root / f"{key}.json"

    @staticmethod
    def _loc_key(loc: dict[str, Any]) -> str:
        return json.dumps(loc, sort_keys=True)

    async def _observe(self, traj: Trajectory, files: dict[str, str],
                       locators: list[dict[str, Any]]) -> tuple[Path, list[dict[str, Any]]]:
        """Render `files`, locate `locators` on the page (fresh eq. 3 ids); both cached by content, and
        only a cache miss checks out one of the run's browsers."""
        png_path, meta_path = self._render_cache(traj, files)
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {"located": {}}
        missing = [loc for loc in locators if self._loc_key(loc) not in meta["located"]]
        if not png_path.exists() or missing:
            async with self.context.browsers.checkout() as pool:
                png, results = await locate_on_files(pool, files, traj.assets_dir, locators)
            png_path.parent.mkdir(parents=True, exist_ok=True)
            png_path.write_bytes(png)
            for loc, result in zip(locators, results):
                meta["located"][self._loc_key(loc)] = result
            write_json_atomic(meta_path, meta)
        return png_path, [meta["located"][self._loc_key(loc)] for loc in locators]

    async def messages(self, task: Task, turn: TurnSpec, episode: EpisodeState) -> list[dict[str, Any]]:
        traj = self.trajectory(task)
        t = turn.extra["step"]
        targets = self._targets(traj, t)
        chained = task.extra["mode"] == "chain" and turn.index > 1 and bool(episode.files)
        if chained:
            files = dict(episode.files)
            locators = [target["locator_after"] for target in targets]
            png_path, found = await self._observe(traj, files, locators)
            # A target the model's page no longer has keeps its golden position.
            boxes = [f["box"] or target["box_after"] for f, target in zip(found, targets)]
        else:
            files = traj.state(t)
            png_path = traj.render_path(t)
            boxes = [target["box_after"] for target in targets]
        self._inputs[(task.id, turn.index)] = png_path
        region = targets[0] if self.track == "macro" else None
        return observation.build_messages(
            track=self.track, turn=turn.index, turns=len(task.turns), screenshot=png_path.read_bytes(),
            targets=targets, boxes=boxes, files=files,
            assets=region["assets"] if region else traj.assets, vision=not self.text_only,
            crop_png=traj.crop_path(t).read_bytes() if region else None,
            caption=region.get("caption") if region and self.settings.caption else None,
            region_text=region.get("text") if region else None,
        )

    # -- scoring ------------------------------------------------------------------------------------

    async def prepare_judging(self, task: Task, turn: TurnSpec, files: dict[str, str], out_dir: Path) -> dict[str, Any]:
        """Execution phase: render the model's page (and locate what scoring needs) into the evidence folder,
        so judging reads frozen images and never browses (runner/turns/packets.py)."""
        traj = self.trajectory(task)
        t = turn.extra["step"]
        locators: list[dict[str, Any]] = []
        if self.track == "macro":
            locators.append(self._targets(traj, t)[0]["locator_between"])
        if task.extra["mode"] == "chain" and t - 1 >= 1:  # warm the next turn's observation
            locators += [target["locator_after"] for target in self._targets(traj, t - 1)]
        png_path, located = await self._observe(traj, dict(files), locators)
        folder = EvidenceFolder(Path(out_dir))
        region = self._targets(traj, t)[0] if self.track == "macro" else None
        if region is not None and self.settings.caption and region.get("caption_call"):
            folder.append_failed_call(region["caption_call"], judging=False)  # the caption this slot was shown
        folder.write_bytes(folder.RENDER_MODEL, png_path.read_bytes())
        input_path = self._inputs.get((task.id, turn.index), traj.render_path(t))
        folder.write_bytes(folder.RENDER_INPUT, input_path.read_bytes())
        return {"render": folder.RENDER_MODEL, "input_render": folder.RENDER_INPUT, "located": located}

    async def judge_turn(self, judge: Judge, judge_input: JudgeInput) -> Verdict:
        task, turn = judge_input.task, judge_input.turn
        traj = self.trajectory(task)
        t = turn.extra["step"]
        judge_name = judge.name
        if not judge_input.build.ok:
            return Verdict(judge=judge_name, passed=None, scores={"s_inbox": 0.0, "s_outbox": 0.0, "score": 0.0},
                           summary=f"not renderable ({judge_input.build.status}): scored 0")
        targets = self._targets(traj, t)
        out = Path(judge_input.out_dir)
        folder = EvidenceFolder(out)
        frozen = judge_input.suite_context or await self.prepare_judging(
            task, turn, dict(judge_input.files), out)
        located = frozen["located"]
        png_path = out / frozen["render"]
        # Decoding and pixel scoring of a tall page take seconds of CPU: in a worker thread (numpy and Pillow
        # release the GIL), so the event loop keeps serving the other slots' browsers and model calls.
        model_img, golden_img = await asyncio.gather(asyncio.to_thread(load_rgb, png_path),
                                                     asyncio.to_thread(load_rgb, traj.render_path(t - 1)))
        folder.write_judge_image(folder.SCORED_RENDER, png_path.read_bytes())
        if self.track == "micro":
            input_img = await asyncio.to_thread(load_rgb, out / frozen["input_render"])
            result = await asyncio.to_thread(scoring.score_micro, golden_img, input_img, model_img, targets,
                                             self.settings.tau, outbox_mask=self.settings.outbox_mask,
                                             perceptual=self.perceptual_colour)
            return self._verdict(judge_name, result["s_inbox"], result["s_outbox"], result["dimensions"],
                                 result["overall"], method="pixel",
                                 extra={"footprint_px": float(result["footprint_px"])},
                                 summary=result.get("note", "pixel alignment (eqs. 9-12)"),
                                 raw={"per_defect": result["per_defect"]})
        return await self._judge_macro(judge, judge_name, traj, t, golden_img, model_img, located[0].get("between"), folder)

    async def _judge_macro(self, judge: Any, judge_name: str, traj: Trajectory, t: int, golden_img: np.ndarray,
                           model_img: np.ndarray, between: dict[str, Any] | None, folder: EvidenceFolder) -> Verdict:
        region = traj.step(t)["region"]
        golden_box = region["box_before"]
        golden_crop = scoring.crop(golden_img, golden_box)
        model_box = between["box"] if between and between.get("found") else None
        model_crop = scoring.crop(model_img, model_box)
        outbox = await rubric.score_macro_outbox(
            judge, golden_img, model_img, golden_box, model_box if model_crop is not None else None, self.settings.tau,
            use_judge=self.settings.macro_outbox == "judge", out_dir=folder.path, perceptual=self.perceptual_colour)
        s_out = outbox["s_outbox"]
        outbox_scores = {"s_outbox_ssim": float(outbox["s_outbox_ssim"])}
        outbox_raw = {"outbox": outbox}
        outbox_note = f"; S_outbox by {outbox['method']}" + (f" ({outbox['note']})" if outbox["note"] else "")
        if golden_crop is not None:
            folder.write_judge_image(folder.CROP_GOLDEN, png_bytes(golden_crop))
        if model_crop is None or golden_crop is None:
            why = (between or {}).get("why") or "the reconstructed region is collapsed or empty"
            if between and between.get("found") and not between.get("count"):
                why = "nothing was inserted between the anchors"
            return self._verdict(judge_name, 0.0, s_out, {}, None, method="collapsed", summary=f"in-box 0: {why}{outbox_note}",
                                 extra=outbox_scores, raw=outbox_raw, outbox_method=outbox["method"])
        golden_png, model_png = png_bytes(golden_crop), png_bytes(model_crop)
        folder.write_judge_image(folder.CROP_MODEL, model_png)
        ratings, problem = await rubric.rubric_scores(judge, golden_png, model_png, out_dir=folder.path)
        if ratings is not None:
            dims = {d: ratings[d] for d in RUBRIC_DIMENSIONS}
            return self._verdict(judge_name, ratings["s_inbox"], s_out, dims, ratings["overall"], method="rubric",
                                 summary=ratings.get("reason", "") + outbox_note, raw={**ratings, **outbox_raw},
                                 extra=outbox_scores, outbox_method=outbox["method"])
        s_in = scoring.crop_ssim(golden_crop, model_crop)
        return self._verdict(judge_name, s_in, s_out, {}, None, method="ssim", summary=problem + outbox_note,
                             extra=outbox_scores, raw=outbox_raw, outbox_method=outbox["method"])

    @staticmethod
    def _verdict(judge_name: str, s_in: float, s_out: float, dims: dict[str, float], overall: float | None, *,
                 method: str, summary: str = "", extra: dict[str, float] | None = None, raw: Any = None,
                 outbox_method: str = "") -> Verdict:
        s_in, s_out = min(1.0, max(0.0, float(s_in))), min(1.0, max(0.0, float(s_out)))  # float noise, negative SSIM
        scores = {"s_inbox": s_in, "s_outbox": s_out, "score": final_score(s_in, s_out)}
        scores.update({f"dim_{d}": float(v) for d, v in dims.items()})
        if overall is not None:
            scores["overall"] = float(overall)
        scores.update(extra or {})
        dimensions = {d: DimensionScore(score=dims.get(d), reason="" if d in dims else "not rated") for d in RUBRIC_DIMENSIONS}
        dimensions["overall"] = DimensionScore(score=overall)
        dimensions["s_inbox"] = DimensionScore(score=float(s_in), reason=method)
        dimensions["s_outbox"] = DimensionScore(score=float(s_out), reason=outbox_method or method)
        # No pass/fail exists in MT-Web2Code: passed stays None and the scores carry the result.
        return Verdict(judge=judge_name, passed=None, dimensions=dimensions, scores=scores,
                       summary=f"[{method}] {summary}".strip(), raw=raw)

    # -- summary ------------------------------------------------------------------------------------

    def summarize(self, records: list[TurnRecord], tasks: list[Task]) -> dict[str, Any]:
        summary = summarize_web2code(records, tasks, track=self.track, skipped=self.skipped)
        s = self.settings
        # What S_outbox's colour penalty counted (§3.5 gives no formula): every number says what it measured.
        summary["color_penalty"] = ({"mode": "perceptual", "delta_e": s.color_delta_e, "shift_px": s.color_shift_px}
                                    if s.color_penalty == "perceptual" else {"mode": "any_pixel", "tau": s.tau})
        return summary

    def turn_reward(self, record: TurnRecord) -> float | None:
        """The turn's score of eq. 12 (§3.6: dense per-turn scores as training signals); an unscored slot
        counts 0 as in Table 3 (`_table`), unless the harness, not the answer, failed."""
        if record.status in NO_REWARD:
            return None
        return slot_scores(record).get("score", 0.0)


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def slot_scores(record: TurnRecord) -> dict[str, float]:
    """The scores a slot contributes: none unless its artifact ran (a runtime_error or any other failure
    bucket is unscored, whatever the deterministic re-render of its files gave), so status and score agree."""
    return dict(record.scores) if record.status is FailureBucket.OK else {}


def _table(records: list[TurnRecord]) -> dict[str, Any]:
    """Table 3's columns over requested slots: unscored slots count 0 for s_inbox, s_outbox and score;
    per-dimension and overall columns average the turns that have them."""
    row: dict[str, Any] = {}
    scored = [slot_scores(r) for r in records]
    for column in TABLE_COLUMNS:
        key = column if column in ("overall", "s_inbox", "s_outbox", "score") else f"dim_{column}"
        if column in ("s_inbox", "s_outbox", "score"):
            row[column] = _mean([scores.get(key, 0.0) for scores in scored])
        else:
            row[column] = _mean([scores[key] for scores in scored if key in scores])
    row["turns"] = len(records)
    row["scored_turns"] = sum(1 for scores in scored if "score" in scores)
    return row


def summarize_web2code(records: list[TurnRecord], tasks: list[Task], *, track: str,
                       skipped: list[dict[str, str]] | None = None) -> dict[str, Any]:
    requested = sum(len(task.turns) for task in tasks)
    summary = basic_summary(records, requested_slots=requested)
    # MT-Web2Code defines no pass/fail: report scores, never a turn pass rate of 0 that reads like failure.
    summary["turn_pass"] = None
    summary["passed"] = None
    summary["unassessed_turns"] = sum(1 for r in records if "score" not in slot_scores(r))
    summary["turn_pass_note"] = "MT-Web2Code has no pass/fail; see score, s_inbox, s_outbox (eq. 12)"
    overall = _table(records)
    summary["score"] = overall["score"]
    summary["s_inbox"] = overall["s_inbox"]
    summary["s_outbox"] = overall["s_outbox"]
    modes = sorted({task.sub_suite for task in tasks})
    by_mode = {m: [r for r in records if r.sub_suite == m] for m in modes}
    curves: dict[str, list[dict[str, Any]]] = {}
    for mode, recs in by_mode.items():
        turns = sorted({r.turn for r in recs})
        curves[mode] = [{"turn": j, **{k: v for k, v in _table([r for r in recs if r.turn == j]).items()
                                        if k in ("score", "s_inbox", "s_outbox", "turns")}} for j in turns]
    per_task = {}
    for task in tasks:
        recs = sorted((r for r in records if r.task_id == task.id), key=lambda r: r.turn)
        per_task[task.id] = {"mode": task.sub_suite, **{k: v for k, v in _table(recs).items() if k in ("score", "s_inbox", "s_outbox")},
                             "turn_scores": [slot_scores(r).get("score") for r in recs]}
    summary["web2code"] = {
        "track": track,
        "table3": {"overall": overall, **{m: _table(recs) for m, recs in by_mode.items()}},
        "per_turn": curves,
        "per_task": per_task,
        "skipped_pages": list(skipped or []),
    }
    if {"chain", "independent"} <= set(curves):
        ind = {row["turn"]: row["score"] for row in curves["independent"]}
        summary["web2code"]["chain_minus_independent"] = [
            {"turn": row["turn"], "gap": None if row["score"] is None or ind.get(row["turn"]) is None
             else row["score"] - ind[row["turn"]]} for row in curves["chain"]]
    return summary


def macro_suite(settings: Web2CodeSuiteSettings, *, project_root: Path) -> Web2CodeSuite:
    return Web2CodeSuite(settings, project_root=project_root, track="macro")


def micro_suite(settings: Web2CodeSuiteSettings, *, project_root: Path) -> Web2CodeSuite:
    return Web2CodeSuite(settings, project_root=project_root, track="micro")


MACRO_ENTRY = (Web2CodeSuiteSettings, macro_suite)
MICRO_ENTRY = (Web2CodeSuiteSettings, micro_suite)


def caption_call_record(response: ModelResponse, model: str, page: str, step: int) -> dict[str, Any]:
    """A caption call that gave no usable caption (empty, or cut at the output cap), as the failed-call records of
    runner/models/structured.py keep them: what the model wrote and how it ended."""
    cut = response.cut_record()
    attempt: dict[str, Any] = {"attempt": 1, "text": response.text, "chars": len(response.text),
                               "finish_reason": response.finish_reason, "usage": dict(response.usage),
                               "max_tokens": response.max_tokens, "cut": cut,
                               "error": "cut at the output cap" if cut else "empty caption"}
    if response.reasoning:
        attempt["reasoning"] = response.reasoning
    record: dict[str, Any] = {"role": "caption", "model": model, "task_id": f"caption:{page}", "step": step,
                              "outcome": "truncated" if cut else "empty", "error": attempt["error"],
                              "attempts": [attempt]}
    if cut:
        record["cut"] = cut
    return record
