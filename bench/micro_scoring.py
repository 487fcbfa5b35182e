"""MT-Web2Code micro scoring time: the median of the per-turn `judge` timing of one oracle run.

    .venv/bin/python bench/micro_scoring.py [--turns 60] [--browsers 2] [--keep DIR]

Runs `suite=micro model=oracle tracking=off` on the project's golden pages (tasks/web2code/pages, five
turns each: `--turns` selects the first ceil(turns / 5) pages and cuts to `--turns` turns in all) and reads
turns.jsonl. The `judge` timing of a turn (TurnRecord.timings) is the time its verdict took in the judging
phase: pixel alignment (eqs. 9-12) over the renders the execution phase froze with the run's shared
browsers. Printed: the number of judged turns, the median, the 90th percentile and the maximum, and
whether the median is within the goal (1.5 s). Trajectories and renders come from the usual cache
(.cache/web2code), as in any run.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TURNS_PER_PAGE = 5  # conf/suite/micro.yaml: T
GOAL_S = 1.5


def run(turns: int, browsers: int, run_dir: Path) -> list[dict]:
    pages = math.ceil(turns / TURNS_PER_PAGE)
    command = [sys.executable, "-m", "runner", "suite=micro", "model=oracle", "tracking=off",
               f"suite.limit={pages}", f"concurrency.browsers={browsers}", f"hydra.run.dir={run_dir}"]
    subprocess.run(command, cwd=REPO, check=True)
    records = [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines() if line.strip()]
    records.sort(key=lambda record: (record["task_id"], record["turn"]))
    return records[:turns] if len(records) > turns else records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--browsers", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="run dir to keep (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="micro-scoring-") as scratch:
        run_dir = args.keep or Path(scratch) / "run"
        records = run(args.turns, args.browsers, run_dir)
    timings = sorted(record["timings"]["judge"] for record in records if "judge" in record.get("timings", {}))
    if not timings:
        sys.exit("no judged turn in the run")
    median = statistics.median(timings)
    p90 = timings[min(len(timings) - 1, math.ceil(0.9 * len(timings)) - 1)]
    print(f"judged turns: {len(timings)} of {len(records)}")
    print(f"judge timing: median {median:.3f} s, p90 {p90:.3f} s, max {timings[-1]:.3f} s")
    print(f"goal: median <= {GOAL_S} s: {'met' if median <= GOAL_S else 'NOT met'}")


if __name__ == "__main__":
    main()
