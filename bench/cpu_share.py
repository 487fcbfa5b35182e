"""One page's busy web workers against another slot's timings: the browsers' CPU shares at work.

    .venv/bin/python bench/cpu_share.py [--sandbox local|docker] [--workers 300] [--rounds 8] [--cpus 1.0]

Two browser workers of the chosen sandbox, each confined as a run confines it (local: its network namespace and
cgroups, with `browser.cpus` as its CPU share; docker: its browser container, `sandbox.options.browser_cpus`),
each with its own artifact server. The victim slot loads a page and captures its evidence (screenshots, DOM,
text: runner.browser.capture.capture_evidence) `--rounds` times:
1. quiet: the other worker idles;
2. hog: the other worker holds a page that started `--workers` web workers, each spinning forever.
Prints the median of each phase and their ratio, measured in this one run; the goal is a ratio under 2.
`--cpus 64` takes the share away (about the whole machine), for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runner.browser.capture import capture_evidence  # noqa: E402
from runner.browser.launch import BrowserPool, BrowserSettings  # noqa: E402

GOAL_RATIO = 2.0

VICTIM_PAGE = ("<!DOCTYPE html><html><head><title>victim</title></head><body><main id=app></main><script src=app.js>"
               "</script></body></html>")
# Some real work per load: a few thousand elements built and laid out.
VICTIM_SCRIPT = ("const app = document.getElementById('app');"
                 "for (let i = 0; i < 3000; i++) { const row = document.createElement('p');"
                 " row.textContent = 'row ' + i + ' ' + 'lorem ipsum '.repeat(3); app.append(row); }")
HOG_PAGE = ("<!DOCTYPE html><html><head><title>hog</title></head><body><p id=n>starting</p><script src=hog.js>"
            "</script></body></html>")
SPIN_WORKER = "for (;;) {}\n"


def _dist(root: Path, name: str, files: dict[str, str]) -> Path:
    dist = root / name / "dist"
    dist.mkdir(parents=True)
    for file, text in files.items():
        (dist / file).write_text(text)
    return dist


def _sandbox(kind: str, cpus: float):
    if kind == "local":
        from runner.sandbox.local import LocalSandbox

        return LocalSandbox(), {"cpus": cpus}
    from runner.sandbox.docker import DockerSandbox, DockerSandboxSettings

    return DockerSandbox(DockerSandboxSettings(browser_cpus=cpus, build_missing_images=False)), {}


async def _victim_rounds(pool: BrowserPool, url: str, out: Path, rounds: int) -> list[float]:
    seconds = []
    for index in range(rounds):
        async with pool.session(url) as session:
            started = time.perf_counter()
            evidence = await capture_evidence(session, out / f"round{index}")
            seconds.append(time.perf_counter() - started)
            if evidence.load_error:
                raise RuntimeError(f"the victim's page failed: {evidence.load_error}")
    return seconds


async def main(args: argparse.Namespace) -> None:
    sandbox, local_settings = _sandbox(args.sandbox, args.cpus)
    root = Path(tempfile.mkdtemp(prefix="genui-cpu-share-"))
    victim_dist = _dist(root, "victim", {"index.html": VICTIM_PAGE, "app.js": VICTIM_SCRIPT})
    hog_dist = _dist(root, "hog", {"index.html": HOG_PAGE, "spin.js": SPIN_WORKER, "hog.js": (
        f"const busy = []; for (let i = 0; i < {args.workers}; i++) busy.push(new Worker('spin.js'));"
        "document.getElementById('n').textContent = busy.length + ' workers';")})
    try:
        base = BrowserSettings(**local_settings, spare_page=False)
        victim_settings = await sandbox.browser_settings(base)
        hog_settings = await sandbox.browser_settings(base)
        async with BrowserPool(victim_settings) as victim, BrowserPool(hog_settings) as hog:
            async with sandbox.serve(victim_dist, network=victim.network_namespace) as victim_site, \
                    sandbox.serve(hog_dist, network=hog.network_namespace) as hog_site:
                await _victim_rounds(victim, victim_site.url, root / "warm", 2)  # first loads pay for caches
                quiet = await _victim_rounds(victim, victim_site.url, root / "quiet", args.rounds)
                async with hog.session(hog_site.url) as hog_session:
                    await hog_session.goto()
                    await asyncio.sleep(args.ramp_s)  # the workers start and take what they get
                    loaded = await _victim_rounds(victim, victim_site.url, root / "hog", args.rounds)
                    # Not read from the page: its own main thread gets little of the share its workers take.
    finally:
        await sandbox.aclose()
    quiet_s, hog_s = statistics.median(quiet), statistics.median(loaded)
    ratio = hog_s / quiet_s
    print(f"sandbox={args.sandbox} browser cpus={args.cpus:g}, the hog page started {args.workers} spinning workers")
    print(f"victim load + evidence, median of {args.rounds}: quiet {quiet_s:.3f} s, beside the hog {hog_s:.3f} s")
    print(f"ratio {ratio:.2f} (goal < {GOAL_RATIO:g}: {'met' if ratio < GOAL_RATIO else 'NOT met'})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sandbox", choices=("local", "docker"), default="local")
    parser.add_argument("--workers", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--cpus", type=float, default=1.0, help="each browser's CPU share in cores")
    parser.add_argument("--ramp-s", type=float, default=3.0)
    asyncio.run(main(parser.parse_args()))
