"""What a visit waiting on a model holds, and what a browser costs: memory by proportional set size (PSS).

    .venv/bin/python bench/visit_memory.py [--visits 16] [--browsers 1] [--sandbox local] [--override KEY=VALUE ...]

A run's visit is the smoke counter app built once in the sandbox, served by its own sandboxed artifact server in
the namespace of the browser that opens it, loaded in a context and page of its own on a shared browser and
captured (screenshot, DOM, text) as a turn's evidence is: then it waits, as a visit waits on an actor's model
step. The bench opens `--visits` such visits on `--browsers` browsers (launched as a run launches them:
confined by the local sandbox, no prepared spare page) and holds them all open. `--override` adds config overrides
(e.g. `browser.executable_path=/usr/bin/chromium`: the full browser instead of the headless shell).

Measured from /proc, in this process's tree only (other processes on a shared machine do not count):
- a browser: the PSS of the launched browser with no page (its browser, GPU-less utility and zygote processes
  and the Playwright driver);
- a waiting visit: the PSS added per open visit (its renderer, its share of the browser's bookkeeping, its
  artifact server and the server's sandbox), and the runner process's own RSS added per visit (its Playwright
  objects and listeners).
PSS divides each shared page among the processes that map it, so renderers that share Chromium's code are not
counted many times over (their RSS is printed beside it). Goal: <= 150 MiB per waiting visit.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.experiment import build_smoke_counter, compose_config  # noqa: E402
from bench.proc_memory import process_tree_pss, process_tree_rss  # noqa: E402

GOAL_VISIT_MIB = 150.0
MIB = 2**20


def tree(pid: int) -> tuple[int, int, int]:
    """(PSS of `pid`'s descendants, their RSS, the RSS of `pid` itself), bytes."""
    own, below = process_tree_rss(pid)
    return process_tree_pss(pid), below, own


async def measure(visits: int, browsers: int, sandbox_name: str, overrides: list[str]) -> dict[str, float]:
    from runner.browser.capture import capture_evidence
    from runner.browser.launch import BrowserPools, BrowserSettings
    from runner.sandbox.registry import build_sandbox

    config = compose_config(["suite=smoke", f"sandbox={sandbox_name}", "tracking=off", *overrides])
    sandbox = build_sandbox(config)
    pid = os.getpid()
    with tempfile.TemporaryDirectory(prefix="genui-visit-memory-") as scratch_name:
        scratch = Path(scratch_name)
        dist = await build_smoke_counter(sandbox, scratch / "workspace")
        base = BrowserSettings(**{**config.browser, "spare_page": False})
        settings = [await sandbox.browser_settings(base) for _ in range(browsers)]
        start_pss, _, start_own = tree(pid)
        pools = await BrowserPools.start(settings, visits=visits)
        try:
            for pool in pools:  # every browser up before the visits, so a visit's figure holds no launch
                await pool.start()
            await asyncio.sleep(1.0)
            browsers_pss, browsers_rss, browsers_own = tree(pid)
            async with AsyncExitStack() as stack:
                opened = 0
                for index in range(visits):
                    pool = await stack.enter_async_context(pools.checkout())
                    served = await stack.enter_async_context(sandbox.serve(dist,
                                                                          network=pool.network_namespace))
                    session = await stack.enter_async_context(pool.session(served.url))
                    out = scratch / f"visit-{index}"
                    out.mkdir()
                    evidence = await capture_evidence(session, out)
                    if evidence.load_error or evidence.blank:
                        raise SystemExit(f"visit {index}: the page did not load: {evidence.load_error or 'blank'}")
                    opened += 1
                await asyncio.sleep(2.0)  # renderers settle after their last capture
                open_pss, open_rss, open_own = tree(pid)
                per_browser = pools.peak_per_browser
        finally:
            await pools.aclose()
            await sandbox.aclose()
    return {
        "visits": opened, "browsers": browsers, "per_browser": per_browser,
        "browser_pss_mib": (browsers_pss - start_pss) / browsers / MIB,
        "browser_rss_mib": browsers_rss / browsers / MIB,
        "visit_pss_mib": (open_pss - browsers_pss) / opened / MIB,
        "visit_rss_mib": (open_rss - browsers_rss) / opened / MIB,
        "runner_per_visit_mib": (open_own - browsers_own) / opened / MIB,
        "runner_at_start_mib": start_own / MIB,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--visits", type=int, default=16)
    parser.add_argument("--browsers", type=int, default=1)
    parser.add_argument("--sandbox", default="local")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="a config override, as on the runner's command line (repeatable)")
    args = parser.parse_args()
    started = time.monotonic()
    r = asyncio.run(measure(args.visits, args.browsers, args.sandbox, args.override))
    load = os.getloadavg()
    waiting = r["visit_pss_mib"] + max(0.0, r["runner_per_visit_mib"])
    print(f"{r['visits']} waiting visits on {r['browsers']} browser(s) (at most {r['per_browser']} on one), "
          f"sandbox {args.sandbox}, {time.monotonic() - started:.0f} s, load average {load[0]:.1f} {load[1]:.1f}"
          + (f"; overrides {' '.join(args.override)}" if args.override else ""))
    print(f"  a browser with no page: PSS {r['browser_pss_mib']:.0f} MiB "
          f"(RSS of its processes {r['browser_rss_mib']:.0f} MiB)")
    print(f"  a waiting visit: PSS {r['visit_pss_mib']:.1f} MiB in its renderer, artifact server and their sandboxes "
          f"(RSS {r['visit_rss_mib']:.1f} MiB), plus {r['runner_per_visit_mib']:.1f} MiB of the runner process")
    print(f"  per waiting visit, all told: {waiting:.1f} MiB (goal <= {GOAL_VISIT_MIB:g} MiB: "
          f"{'met' if waiting <= GOAL_VISIT_MIB else 'NOT met'})")


if __name__ == "__main__":
    main()
