"""Which Chromium build renders cheaper: the CPU and wall time of a visit in the headless shell and the full browser.

    .venv/bin/python bench/browser_build.py [--visits 12] [--rounds 2]

A visit is what a run does in its browser for a turn, less the actor: a context and page of their own (the runner's
init script, harness world, request filter and listeners; no prepared spare page), a load of the smoke counter
(built once in the local sandbox, 220 kB of React, served by bench/harness.py's plain loopback server), the
settle window and a read of the text, then the close. Each build (`HEADLESS_SHELL`, the default `browser.executable_path`, and
`FULL_CHROMIUM`) launches once through the runner's BrowserPool (its launcher and feature switches, unconfined) and
makes `--visits` visits after three to warm up; the rounds alternate the builds. The CPU is every Chromium process
of this process's tree (user + system, with the children each has reaped: the renderers that ended), before and
after, per visit. Prints both builds' medians over the rounds and the full browser's ratio to the shell.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.experiment import build_smoke_counter, compose_config  # noqa: E402
from bench.harness import plain_http  # noqa: E402
from bench.proc_memory import descendants, process_table  # noqa: E402
from runner.browser.launch import BrowserPool, BrowserSettings  # noqa: E402
from runner.browser.launcher import FULL_CHROMIUM, HEADLESS_SHELL  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
WARM_VISITS = 3


def chromium_cpu_s(root: int) -> float:
    """CPU seconds of the Chromium processes under `root`, each with what its reaped children spent."""
    parents, _ = process_table()
    total = 0
    for pid in descendants(root, parents):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue  # ended since the table was read
        if "chrom" in stat[stat.find("(") + 1:stat.rfind(")")]:
            total += sum(int(value) for value in stat[stat.rfind(")") + 2:].split()[11:15])
    return total / TICKS


async def build_counter(scratch: Path) -> Path:
    from runner.sandbox.registry import build_sandbox

    sandbox = build_sandbox(compose_config(["suite=smoke", "sandbox=local", "tracking=off"]))
    try:
        return await build_smoke_counter(sandbox, scratch / "workspace")
    finally:
        await sandbox.aclose()


async def visits(executable: str, url: str, count: int) -> tuple[float, float]:
    """(CPU s, wall s) per visit of `count` visits on one browser of `executable`."""
    settings = BrowserSettings(executable_path=executable, spare_page=False)
    async with BrowserPool(settings) as pool:
        async def visit() -> None:
            async with pool.session(url) as session:
                await session.goto()
                await session.visible_text()

        for _ in range(WARM_VISITS):
            await visit()
        cpu, started = chromium_cpu_s(os.getpid()), time.perf_counter()
        for _ in range(count):
            await visit()
        wall = time.perf_counter() - started
        await asyncio.sleep(0.3)  # the last context's close, in the background
        return (chromium_cpu_s(os.getpid()) - cpu) / count, wall / count


async def main_async(count: int, rounds: int) -> None:
    builds = {"headless shell": HEADLESS_SHELL, "full browser": FULL_CHROMIUM}
    missing = [path for path in builds.values() if not Path(path).exists()]
    if missing:
        raise SystemExit(f"no Chromium at {', '.join(missing)} (bash scripts/setup.sh installs both)")
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in builds}
    with tempfile.TemporaryDirectory(prefix="genui-browser-build-") as scratch:
        async with plain_http(await build_counter(Path(scratch))) as url:
            for round_ in range(rounds):
                order = list(builds) if round_ % 2 == 0 else list(reversed(builds))
                for name in order:
                    figures[name].append(await visits(builds[name], url, count))
    load = os.getloadavg()
    print(f"{count} visits x {rounds} round(s) per build, load average {load[0]:.1f} {load[1]:.1f}")
    medians = {name: (statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs))
               for name, runs in figures.items()}
    for name, (cpu, wall) in medians.items():
        print(f"  {name:<15} Chromium CPU {cpu:.3f} s a visit, wall {wall:.3f} s a visit ({builds[name]})")
    shell, full = medians["headless shell"], medians["full browser"]
    print(f"full browser / headless shell: CPU x{full[0] / shell[0]:.2f}, wall x{full[1] / shell[1]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--visits", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main_async(args.visits, args.rounds))


if __name__ == "__main__":
    main()
