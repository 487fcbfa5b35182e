"""Cost of `browser.record_trace`: the smoke suite (oracle model, probe actor) with and without Playwright's trace.

    .venv/bin/python bench/browser_trace.py [--repeats 2]

Runs the whole smoke suite in-process (sandbox=local, rules judge, tracking off, one episode at a time so the
turns do not share the CPUs) alternately without and with `browser.record_trace=true`, `--repeats` times each,
and prints per configuration the median turn time (`timings.total`) and the median of the browser part of a
turn (serve, evidence, actor, checks: where the trace is recorded and written), the ratio with/without, and the
size of the trace.zip files. The option stays off by default while the turn ratio is above 1.10.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.experiment import run_quietly  # noqa: E402

BROWSER_STAGES = ("serve", "evidence", "actor", "checks")
LIMIT = 1.10  # above it (more than 10% of a turn) the option stays off by default


def _suite(run_dir: Path, *, trace: bool) -> tuple[list[float], list[float], list[int]]:
    """Per-turn total and browser seconds of one smoke run, and its trace sizes in bytes."""
    records = run_quietly(["model=oracle", "suite=smoke", "judge=rules", "actor=probe", "sandbox=local",
                           "tracking=off", "concurrency.episodes=1", f"browser.record_trace={str(trace).lower()}"],
                          run_dir)
    failed = [f"{r['task_id']}/{r['turn']}: {r['status']}" for r in records if r["status"] != "ok"]
    if failed:
        raise SystemExit(f"turns did not pass, the figures would not be a full turn's: {failed}")
    totals = [r["timings"]["total"] for r in records]
    browser = [sum(r["timings"].get(stage, 0.0) for stage in BROWSER_STAGES) for r in records]
    sizes = [path.stat().st_size for path in (run_dir / "evidence").rglob("trace.zip")]
    if trace and len(sizes) != len(records):
        raise SystemExit(f"{len(sizes)} trace.zip files for {len(records)} turns")
    return totals, browser, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    figures: dict[bool, tuple[list[float], list[float], list[int]]] = {False: ([], [], []), True: ([], [], [])}
    with tempfile.TemporaryDirectory(prefix="bench-trace-") as scratch:
        for repeat in range(args.repeats):
            for trace in (False, True):  # alternated: a drift in the machine's load hits both alike
                result = _suite(Path(scratch) / f"{'with' if trace else 'without'}-{repeat}", trace=trace)
                for kept, new in zip(figures[trace], result):
                    kept += new
    off_total, off_browser = statistics.median(figures[False][0]), statistics.median(figures[False][1])
    on_total, on_browser = statistics.median(figures[True][0]), statistics.median(figures[True][1])
    sizes = figures[True][2]
    print(f"turns: {len(figures[False][0])} without, {len(figures[True][0])} with record_trace")
    print(f"per-turn median  without: {off_total:.2f} s (browser {off_browser:.2f} s)")
    print(f"per-turn median  with:    {on_total:.2f} s (browser {on_browser:.2f} s)")
    print(f"trace.zip: median {statistics.median(sizes) / 1024:.0f} KiB, max {max(sizes) / 1024:.0f} KiB")
    ratio = on_total / off_total
    print(f"ratio (turn time with / without): {ratio:.3f} ({(ratio - 1) * 100:+.1f}% of a turn); "
          f"browser part {on_browser / off_browser:.3f}")
    print("default: " + ("off (costs more than 10% of a turn)" if ratio > LIMIT else "could be on (within 10%)"))


if __name__ == "__main__":
    main()
