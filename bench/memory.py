"""Memory: peak RSS of the runner and of its browsers on an MT-Web2Code run, and the scoring's own peak.

    .venv/bin/python bench/memory.py [--pages 8] [--episodes 8] [--model identity] [--height 4000] [--skip-run]

1. Scoring, in this process: the peak of Python-tracked allocations (tracemalloc; numpy reports its arrays)
   of one micro turn's score_micro on 1280 x `--height` renders whose model page differs everywhere (its
   content shifted by one pixel: the SSIM map's box is the whole page, the worst case), with the SSIM map
   computed in bands (runner.suites.web2code.image.SSIM_BAND_ROWS, as a run does) against one band over the whole
   box (how it was computed before), with the ratio measured here.
2. A run: `python -m runner suite=micro model=MODEL tracking=off suite.limit=PAGES
   concurrency.episodes=EPISODES` in a subprocess (`identity`, the default, answers each turn with its input
   page, so every scored page differs from the golden one where the defects are; `oracle` scores pages equal
   to the golden ones), sampled every 0.2 s from /proc: the peak RSS of the runner
   process alone and of its descendants (browsers, Playwright drivers, sandboxes) together. Goal: the
   runner at most 2.5 GB at 8 concurrent episodes. Trajectories come from the usual cache (.cache/web2code).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.proc_memory import process_tree_rss  # noqa: E402
from runner.suites.web2code import image  # noqa: E402
from runner.suites.web2code import scoring  # noqa: E402

GOAL_RUNNER_BYTES = 2.5e9


def pages(height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Golden, broken (one recoloured block) and model (golden shifted down a pixel) renders."""
    rng = np.random.default_rng(0)
    golden = np.repeat(rng.integers(0, 256, size=(height // 8, 1280 // 8, 3), dtype=np.uint8), 8, axis=0)
    golden = np.repeat(golden, 8, axis=1)
    broken = golden.copy()
    broken[height // 2 : height // 2 + 200, 100:600] = (200, 30, 30)
    model = np.vstack([np.full((1, 1280, 3), 255, dtype=np.uint8), golden[:-1]])
    return golden, broken, model


def scoring_peak(height: int, band_rows: int) -> tuple[int, dict]:
    golden, broken, model = pages(height)
    defect = {"op": "recolor", "dimension": "color", "box_before": [100, height // 2, 500, 200],
              "box_after": [100, height // 2, 500, 200]}
    saved, image.SSIM_BAND_ROWS = image.SSIM_BAND_ROWS, band_rows
    try:
        tracemalloc.start()
        result = scoring.score_micro(golden, broken, model, [defect])
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    finally:
        image.SSIM_BAND_ROWS = saved
    return peak, result


def run_peak(pages_n: int, episodes: int, model: str) -> tuple[int, int, float]:
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as scratch:
        command = [sys.executable, "-m", "runner", "suite=micro", f"model={model}", "tracking=off",
                   f"suite.limit={pages_n}", f"concurrency.episodes={episodes}",
                   f"hydra.run.dir={Path(scratch) / 'run'}"]
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL)
        peak_runner = peak_browsers = 0
        stop = threading.Event()

        def watch() -> None:
            nonlocal peak_runner, peak_browsers
            while not stop.is_set():
                own, below = process_tree_rss(process.pid)
                peak_runner, peak_browsers = max(peak_runner, own), max(peak_browsers, below)
                stop.wait(0.2)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        code = process.wait()
        stop.set()
        watcher.join()
        if code:
            sys.exit(f"the run failed (exit {code}): {' '.join(command)}")
        return peak_runner, peak_browsers, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--model", default="identity")
    parser.add_argument("--height", type=int, default=4000)
    parser.add_argument("--skip-run", action="store_true", help="only the in-process scoring measurement")
    args = parser.parse_args()
    banded, result_banded = scoring_peak(args.height, image.SSIM_BAND_ROWS)
    whole, result_whole = scoring_peak(args.height, args.height)
    assert abs(result_banded["score"] - result_whole["score"]) < 1e-9, (result_banded, result_whole)
    print(f"score_micro peak allocations on 1280 x {args.height}: {banded / 2**20:.0f} MiB in bands of "
          f"{image.SSIM_BAND_ROWS} rows, {whole / 2**20:.0f} MiB as one band ({whole / banded:.1f}x)")
    if args.skip_run:
        return
    runner, browsers, seconds = run_peak(args.pages, args.episodes, args.model)
    print(f"run of {args.pages} pages (model={args.model}) at {args.episodes} concurrent episodes ({seconds:.0f} s): "
          f"peak RSS of the runner {runner / 2**20:.0f} MiB, of its browsers and other children {browsers / 2**20:.0f} MiB")
    print(f"goal: runner <= {GOAL_RUNNER_BYTES / 1e9:g} GB: {'met' if runner <= GOAL_RUNNER_BYTES else 'NOT met'}")


if __name__ == "__main__":
    main()
