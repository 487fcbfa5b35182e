"""Per-turn harness overhead on the smoke artifacts: the runner's pipeline against a naive one.

    .venv/bin/python bench/harness.py [--repeats 1]

Runner pipeline: the shared read-only template node_modules, one warm browser, a fresh context per
artifact, bubblewrap build + sandboxed server. Naive pipeline: a fresh `npm install` per turn and a new
browser per turn (no sandbox). Both build, serve, capture evidence and run the probe on the same reference
artifacts; the model and the judge are excluded. Prints medians and the ratio measured in this one run.
Target: runner median <= 2 s per turn here, and >= 3x faster than naive.
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
from contextlib import asynccontextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner.actors.base import ActorContext  # noqa: E402
from runner.actors.probe import ProbeActor, ProbeSettings  # noqa: E402
from runner.browser.evidence import capture_evidence  # noqa: E402
from runner.browser.launch import BrowserPool, BrowserSettings  # noqa: E402
from runner.sandbox.local import LocalSandbox, LocalSandboxSettings  # noqa: E402
from runner.sandbox.web_template import TEMPLATE_DIR, ensure_template_modules  # noqa: E402
from runner.suites.native import load_native_tasks  # noqa: E402


def smoke_artifacts() -> list[tuple[object, object]]:
    tasks = load_native_tasks(REPO / "tasks" / "smoke", suite="smoke")
    return [(task, turn) for task in tasks for turn in task.turns]


async def runner_turn(sandbox: LocalSandbox, pool: BrowserPool, probe: ProbeActor, task, turn, scratch: Path) -> float:
    started = time.perf_counter()
    build = await sandbox.build(turn.reference_files, scratch / "workspace")
    assert build.ok, build.log[-500:]
    async with sandbox.serve(build.dist_dir) as served, pool.session(served.url) as session:
        evidence = await capture_evidence(session, scratch)
        await probe.act(session, ActorContext(task=task, turn=turn, evidence=evidence, out_dir=scratch))
    return time.perf_counter() - started


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep the benchmark's output readable
        pass


@asynccontextmanager
async def plain_http(directory: Path):
    handler = lambda *a, **k: _QuietHandler(*a, directory=str(directory), **k)  # noqa: E731
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


async def naive_turn(probe: ProbeActor, settings: BrowserSettings, task, turn, scratch: Path) -> float:
    started = time.perf_counter()
    workspace = scratch / "naive"
    shutil.copytree(TEMPLATE_DIR, workspace, ignore=shutil.ignore_patterns("node_modules", "dist"))
    for path, content in turn.reference_files.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(content)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=workspace, check=True, capture_output=True)
    subprocess.run(["npx", "vite", "build"], cwd=workspace, check=True, capture_output=True)
    pool = BrowserPool(settings)
    await pool.start()
    try:
        async with plain_http(workspace / "dist") as url, pool.session(url) as session:
            evidence = await capture_evidence(session, scratch)
            await probe.act(session, ActorContext(task=task, turn=turn, evidence=evidence, out_dir=scratch))
    finally:
        await pool.aclose()
    return time.perf_counter() - started


async def main(repeats: int) -> None:
    ensure_template_modules()
    artifacts = smoke_artifacts() * repeats
    probe = ProbeActor(ProbeSettings(screenshots=True))
    settings = BrowserSettings()
    sandbox = LocalSandbox(LocalSandboxSettings())
    pool = BrowserPool(settings)
    await pool.start()
    fast, naive = [], []
    try:
        for task, turn in artifacts:
            with tempfile.TemporaryDirectory() as scratch:
                fast.append(await runner_turn(sandbox, pool, probe, task, turn, Path(scratch)))
            with tempfile.TemporaryDirectory() as scratch:
                naive.append(await naive_turn(probe, settings, task, turn, Path(scratch)))
    finally:
        await pool.aclose()
        await sandbox.aclose()
    fast_median, naive_median = statistics.median(fast), statistics.median(naive)
    print(f"turns measured:          {len(fast)}")
    print(f"runner median per turn:  {fast_median:.2f} s   (target <= 2.0 s)")
    print(f"naive median per turn:   {naive_median:.2f} s")
    print(f"speed-up (naive/runner): {naive_median / fast_median:.1f}x   (target >= 3x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=1)
    asyncio.run(main(parser.parse_args().repeats))
