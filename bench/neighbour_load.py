"""How long a page takes to load beside a page that keeps its browser busy, with each renderer in a CPU
group of its own (`browser.renderer_cpu_groups`, the default) and with one group for the whole browser.

One browser as a run's visits share it: the local sandbox's confined Chromium (its own network namespace,
`browser.cpus` cores, a memory cap), or a docker sandbox's browser container. The busy neighbour is a page of 500
web workers spinning for ever, the hostile corpus's "web-workers" answer; beside it, the smoke counter (built once
in the local sandbox) is loaded `--visits` times, one visit after the other, each in a fresh session as a slot's
visit is, after the neighbour has spun for `--head-start` seconds. The same visits with no neighbour are the baseline. Prints each setting's median load
(`PageSession.goto`: until `load` plus the settle wait; inf: past `browser.nav_timeout_ms`, which records the slot as
the page's runtime_error), how many loads failed so, and the median's ratio to the baseline, measured in this run.

    .venv/bin/python bench/neighbour_load.py [--visits 8] [--head-start 5] [--sandbox local|docker]

`--sandbox docker`: the same visits in a browser container of the docker sandbox (`sandbox.options.browser_cpus`),
each setting in a container of its own; the renderer groups are then kept in the container's cpu cgroup, which
needs the engine on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.async_api import Error as PlaywrightError  # noqa: E402

from bench.experiment import build_smoke_counter, compose_config  # noqa: E402
from runner.browser.launch import BrowserPool, BrowserSettings  # noqa: E402
from runner.sandbox.registry import build_sandbox  # noqa: E402

WORKERS_PAGE = """<!doctype html><html><body><p>ready</p><script>
const spin = URL.createObjectURL(new Blob(['for (;;) {}'], { type: 'text/javascript' }));
window.busy = []; for (let i = 0; i < 500; i++) { try { window.busy.push(new Worker(spin)); } catch (e) {} }
</script></body></html>
"""


async def loads(sandbox, counter: Path, busy_site: Path, *, groups: bool, neighbour: bool, visits: int,
                head_start: float) -> list[float]:
    """Seconds each of `visits` loads of the counter took, beside the spinning page or alone."""
    settings = await sandbox.browser_settings(BrowserSettings(memory_mb=2048, renderer_cpu_groups=groups,
                                                              spare_page=False))
    async with BrowserPool(settings) as pool, AsyncExitStack() as stack:
        if neighbour:
            served = await stack.enter_async_context(sandbox.serve(busy_site, network=pool.network_namespace))
            busy = await stack.enter_async_context(pool.session(served.url))
            with contextlib.suppress(PlaywrightError):  # its own load may time out: it is busy
                await busy.goto()
            await asyncio.sleep(head_start)
        seconds = []
        for _ in range(visits):
            async with sandbox.serve(counter, network=pool.network_namespace) as served:
                async with pool.session(served.url) as session:
                    started = time.perf_counter()
                    try:
                        await session.goto()
                        seconds.append(time.perf_counter() - started)
                    except PlaywrightError:  # past the navigation timeout: the slot would be a runtime_error
                        seconds.append(math.inf)
        return seconds


async def main_async(visits: int, head_start: float, kind: str) -> None:
    builder = build_sandbox(compose_config(["suite=smoke", "sandbox=local", "tracking=off"]))
    sandbox = builder if kind == "local" else build_sandbox(compose_config(["suite=smoke", f"sandbox={kind}",
                                                                             "tracking=off"]))
    try:
        with tempfile.TemporaryDirectory(prefix="genui-bench-") as scratch:
            counter = await build_smoke_counter(builder, Path(scratch) / "workspace")
            print(f"sandbox={kind}, {visits} visits a setting, the busy page {head_start:g} s ahead", flush=True)
            busy_site = Path(scratch) / "busy"
            busy_site.mkdir()
            (busy_site / "index.html").write_text(WORKERS_PAGE)
            settings = [("alone", True, False), ("beside the busy page, a CPU group per renderer", True, True),
                        ("beside the busy page, one CPU group for the browser", False, True)]
            medians = {}
            for label, groups, neighbour in settings:
                seconds = await loads(sandbox, counter, busy_site, groups=groups, neighbour=neighbour,
                                      visits=visits, head_start=head_start)
                medians[label] = statistics.median(seconds)
                failed = sum(1 for s in seconds if s == math.inf)
                print(f"{label}: median {medians[label]:.2f} s, {failed} of {visits} past the navigation timeout "
                      f"({' '.join(f'{s:.2f}' for s in seconds)})", flush=True)
            alone = medians["alone"]
            for label, median in medians.items():
                print(f"  {label}: x{median / alone:.2f} of alone")
    finally:
        await sandbox.aclose()
        if builder is not sandbox:
            await builder.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--visits", type=int, default=8)
    parser.add_argument("--head-start", type=float, default=5.0, help="seconds the busy page spins first")
    parser.add_argument("--sandbox", choices=("local", "docker"), default="local")
    args = parser.parse_args()
    asyncio.run(main_async(args.visits, args.head_start, args.sandbox))


if __name__ == "__main__":
    main()
