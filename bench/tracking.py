"""MLflow tracking overhead: a real sqlite store, one job of 10 turns with their evidence, measured in one run.

    .venv/bin/python bench/tracking.py [--turns 10]

Prints the store's opening (migrations, by far the slowest part), the per-turn logging with evidence
uploads against without them (`tracking.log_evidence`), and their ratio. Target: 10 turns logged in under
10 s and a whole job (open, turns, summary, finish) in under 20 s on a busy 2-core machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from PIL import Image  # noqa: E402

from runner.turns.records import FailureBucket, RunDirectory, TurnRecord  # noqa: E402
from runner.tracking.tracker import Tracker, TrackingSettings  # noqa: E402


def _turns(run_dir: RunDirectory, count: int) -> list[TurnRecord]:
    records = []
    for turn in range(1, count + 1):
        evidence = run_dir.evidence_dir("bench", turn)
        Image.new("RGB", (1280, 800), (turn * 20 % 255, 40, 90)).save(evidence / "screenshot.png")
        (evidence / "dom.html").write_text("<html><body>" + "<div>x</div>" * 2000 + "</body></html>")
        records.append(TurnRecord(task_id="bench", suite="smoke", turn=turn, status=FailureBucket.OK, passed=True,
                                  model_responded=True, timings={"build": 1.0},
                                  evidence_dir=str(evidence.relative_to(run_dir.path))))
    return records


def _job(root: Path, turns: int, *, evidence: bool) -> dict[str, float]:
    run_dir = RunDirectory(root / ("with" if evidence else "without"))
    records = _turns(run_dir, turns)
    settings = TrackingSettings(run_name="bench", log_evidence=evidence)
    start = time.perf_counter()
    tracker = Tracker.open(settings, project_root=root, run_params={"suite": {"name": "smoke"}})
    opened = time.perf_counter()
    for record in records:
        tracker.log_turn(record, run_dir.path)
    logged = time.perf_counter()
    tracker.log_summary({"turn_pass": 1.0}, run_dir=run_dir.path)
    tracker.finish()
    done = time.perf_counter()
    return {"open": opened - start, "turns": logged - opened, "total": done - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="genui-bench-tracking-") as scratch:
        root = Path(scratch)
        with_evidence = _job(root, args.turns, evidence=True)  # first: it pays for creating the store
        without = _job(root, args.turns, evidence=False)
    print(f"store open (first job, migrations): {with_evidence['open']:.2f} s")
    print(f"{args.turns} turns with evidence: {with_evidence['turns']:.2f} s "
          f"({1000 * with_evidence['turns'] / args.turns:.0f} ms/turn), whole job {with_evidence['total']:.2f} s")
    print(f"{args.turns} turns without evidence: {without['turns']:.2f} s "
          f"({1000 * without['turns'] / args.turns:.0f} ms/turn)")
    print(f"evidence upload costs {with_evidence['turns'] / max(without['turns'], 1e-9):.1f}x the metrics alone")
    met = with_evidence["turns"] < 10 and with_evidence["total"] < 20
    print(f"target (10 turns < 10 s, job < 20 s): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
