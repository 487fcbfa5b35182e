"""Per-turn harness overhead: the runner's pipeline in both sandboxes against a naive pipeline, stage by stage.

    .venv/bin/python bench/harness.py [--repeats 2] [--sandboxes local,docker[,local-fresh-page,local-cold-serve,...]]

Runner: the smoke suite's oracle run (9 React turns, rules judge, probe actor, tracking off, one episode at a
time), run in-process through the real engine once per sandbox (`sandbox=local`: bubblewrap; `sandbox=docker`:
pinned containers, its browser in the browser image). Stage seconds come from each turn record's `timings`, as
the engine measures them: build, serve (the sandboxed artifact server started and a browser page opened on it),
evidence, actor, checks (the rules judge's live contract checks), judge. The harness overhead of a turn is
build, serve, evidence and probe with the glue between them: `total - model - judge - checks`. The checks are
the judge's own work (the rules judge decides from them; a VLM judge runs none), and the naive pipeline has no
judge either; the bench also prints the overhead with the checks counted in.

`local-fresh-page` is `sandbox=local` with `browser.spare_page=false`: every session creates its context and
page when the turn needs them instead of taking the one the pool prepared while the turn built.
`local-cold-build` is `sandbox=local` with `+sandbox.local.spare_build=false`: every build starts its sandbox, Node
and Vite when it is asked for, instead of taking the one started ahead after the last build.
`local-cold-spare` is `sandbox=local` with `+sandbox.local.spare_build_warm_up=false`: the spare build loads Vite
but does not warm its bundler on a project of its own while it waits.
`local-cold-serve` is `sandbox=local` with `+sandbox.local.spare_server=false`: every serve starts its artifact
server's sandbox and Python when it is asked for, instead of taking the one started ahead for its browser.
`local-full-browser` is `sandbox=local` rendering with the full Chromium (`/usr/bin/chromium`, in its headless
mode) instead of the headless shell every run launches by default.

Naive: the same reference artifacts, each with a fresh `npm install` and `vite build` in a copy of the
template, a new browser per turn and a plain HTTP server (no sandbox); evidence and the probe as the runner
does them.

Prints each stage's median per pipeline, the overhead medians and the ratios measured in this one run.
Goals: local median overhead <= 0.75 s per React turn; naive / local >= 6x; docker / local <= 2x.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.experiment import run_quietly  # noqa: E402
from runner.actors.base import ActorContext  # noqa: E402
from runner.actors.probe import ProbeActor, ProbeSettings  # noqa: E402
from runner.browser.capture import capture_evidence, write_visit_logs  # noqa: E402
from runner.browser.launch import BrowserPool, BrowserSettings  # noqa: E402
from runner.browser.launcher import FULL_CHROMIUM  # noqa: E402
from runner.sandbox.web_template import TEMPLATE_DIR, WORKSPACE_GUARD, ensure_template_modules  # noqa: E402
from runner.suites.native import load_native_tasks  # noqa: E402

STAGES = ("build", "serve", "evidence", "actor", "checks", "judge")
GOAL_LOCAL_S, GOAL_NAIVE_RATIO, GOAL_DOCKER_RATIO = 0.75, 6.0, 2.0


JUDGING = ("model", "judge", "checks")


def overhead(timings: dict[str, float], *, excluded: tuple[str, ...] = JUDGING) -> float:
    """A turn's harness seconds: all it took but the model call and the judge's work (checks and verdict)."""
    return timings.get("total", 0.0) - sum(timings.get(name, 0.0) for name in excluded)


PIPELINES = {"local": ["sandbox=local"], "docker": ["sandbox=docker"],
             "local-fresh-page": ["sandbox=local", "browser.spare_page=false"],
             "local-cold-build": ["sandbox=local", "+sandbox.local.spare_build=false"],
             "local-cold-spare": ["sandbox=local", "+sandbox.local.spare_build_warm_up=false"],
             "local-cold-serve": ["sandbox=local", "+sandbox.local.spare_server=false"],
             "local-full-browser": ["sandbox=local", f"browser.executable_path={FULL_CHROMIUM}"]}


# Each variant of the local pipeline and what its ratio to `local` measures.
VARIANT_SHARES = {"local-cold-build": "the spare build's share of the overhead",
                  "local-cold-spare": "the spare build's warm-up's share of the overhead",
                  "local-cold-serve": "the spare server's share of the overhead",
                  "local-fresh-page": "the prepared page's share of the overhead",
                  "local-full-browser": "the headless shell's share of the overhead"}


def runner_turns(pipeline: str, repeats: int, scratch: Path) -> list[dict[str, float]]:
    if pipeline not in PIPELINES:
        raise SystemExit(f"--sandboxes: unknown pipeline {pipeline!r} (known: {', '.join(PIPELINES)})")
    timings: list[dict[str, float]] = []
    for repeat in range(repeats):
        records = run_quietly(["model=oracle", "suite=smoke", "judge=rules", "actor=probe", *PIPELINES[pipeline],
                               "tracking=off", "concurrency.episodes=1"], scratch / f"{pipeline}-{repeat}")
        failed = [f"{r['task_id']}/{r['turn']}: {r['status']}" for r in records if r["status"] != "ok"]
        if failed:
            raise SystemExit(f"{pipeline}: turns did not pass, the figures would not be a React turn's: {failed}")
        timings += [r["timings"] for r in records]
    return timings


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep the benchmark's output readable
        pass


@asynccontextmanager
async def plain_http(directory: Path):  # noqa: ANN201
    handler = lambda *a, **k: _QuietHandler(*a, directory=str(directory), **k)  # noqa: E731
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


@contextmanager
def stage(timings: dict[str, float], name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - started


async def naive_turn(probe: ProbeActor, settings: BrowserSettings, task: Any, turn: Any, scratch: Path) -> dict[str, float]:
    timings: dict[str, float] = {}
    started = time.perf_counter()
    workspace = scratch / "naive"
    with stage(timings, "build"):
        shutil.copytree(TEMPLATE_DIR, workspace, ignore=shutil.ignore_patterns("node_modules", "dist"))
        shutil.copy2(WORKSPACE_GUARD, workspace / WORKSPACE_GUARD.name)  # the template's config imports it
        for path, content in turn.reference_files.items():
            (workspace / path).parent.mkdir(parents=True, exist_ok=True)
            (workspace / path).write_text(content)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=workspace, check=True, capture_output=True)
        subprocess.run(["npx", "vite", "build"], cwd=workspace, check=True, capture_output=True)
    pool = BrowserPool(settings)
    with stage(timings, "serve"):
        await pool.start()
    try:
        async with plain_http(workspace / "dist") as url:
            with stage(timings, "serve"):
                session_scope = pool.session(url)
                session = await session_scope.__aenter__()
            try:
                with stage(timings, "evidence"):
                    evidence = await capture_evidence(session, scratch)
                with stage(timings, "actor"):
                    await probe.act(session, ActorContext(task=task, turn=turn, evidence=evidence, out_dir=scratch,
                                                                    page_as_loaded=True))
                with stage(timings, "evidence"):
                    await write_visit_logs(session, scratch, evidence)
            finally:
                await session_scope.__aexit__(None, None, None)
    finally:
        await pool.aclose()
    timings["total"] = time.perf_counter() - started
    return timings


async def naive_turns(repeats: int) -> list[dict[str, float]]:
    ensure_template_modules()
    tasks = load_native_tasks(REPO / "tasks" / "smoke", suite="smoke")
    probe = ProbeActor(ProbeSettings(screenshots=True))
    timings = []
    for _ in range(repeats):
        for task in tasks:
            for turn in task.turns:
                with tempfile.TemporaryDirectory() as scratch:
                    timings.append(await naive_turn(probe, BrowserSettings(), task, turn, Path(scratch)))
    return timings


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def cell(value: float | None, width: int = 8) -> str:
    return f"{value:{width}.2f}" if value is not None else f"{'-':>{width}}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="runs of the smoke suite per pipeline")
    parser.add_argument("--sandboxes", default="local,docker", help="runner pipelines to measure")
    args = parser.parse_args()
    pipelines: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="genui-harness-") as scratch:
        for sandbox in args.sandboxes.split(","):
            pipelines[sandbox] = runner_turns(sandbox, args.repeats, Path(scratch))
            print(f"{sandbox}: {len(pipelines[sandbox])} turns measured", flush=True)
    pipelines["naive"] = asyncio.run(naive_turns(args.repeats))
    print(f"naive: {len(pipelines['naive'])} turns measured\n", flush=True)

    names = list(pipelines)
    width = max(9, *(len(name) + 1 for name in names))
    print("median seconds per turn " + "".join(f"{name:>{width}}" for name in names))
    for name in STAGES:
        print(f"  {name:<22}" + "".join(
            f" {cell(median([t[name] for t in pipelines[p] if name in t]), width - 1)}" for p in names))
    overheads = {p: median([overhead(t) for t in turns]) or 0.0 for p, turns in pipelines.items()}
    with_checks = {p: median([overhead(t, excluded=("model", "judge")) for t in turns]) for p, turns in pipelines.items()}
    print(f"  {'overhead':<22}" + "".join(f" {cell(overheads[p], width - 1)}" for p in names))
    print(f"  {'overhead + checks':<22}" + "".join(
        f" {cell(with_checks[p] if p != 'naive' else None, width - 1)}" for p in names))
    local = overheads.get("local")
    if local:
        print(f"\nlocal overhead median: {local:.2f} s (goal <= {GOAL_LOCAL_S} s)")
        print(f"naive / local: x{overheads['naive'] / local:.1f} (goal >= {GOAL_NAIVE_RATIO}x)")
        if "docker" in overheads:
            print(f"docker / local: x{overheads['docker'] / local:.2f} (goal <= {GOAL_DOCKER_RATIO}x)")
        for variant, what in VARIANT_SHARES.items():
            if variant in overheads:
                print(f"{variant} / local: x{overheads[variant] / local:.2f} ({what})")


if __name__ == "__main__":
    main()
