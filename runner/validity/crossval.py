"""Judge cross-validation (MT-Web2Code Table 5): two judges' scores on the same frozen packets.

    python -m runner.validity.crossval REFERENCE_RUN OTHER_RUN [OTHER_RUN ...] [--score overall] [--full-mark 1]

The runs are re-judgings of one run (`python -m runner.rejudge`), so their slots are the same generations.
Per judge, over the slots both judges scored: the mean score difference from the reference judge (Table 5's
"Δmean", other minus reference), the full-mark rate (the share of slots given the top score, `--full-mark`,
default 1.0: MT-Web2Code's top rubric band) and the correlation with the reference's scores (Pearson, scipy;
the paper names no coefficient). `--score NAME` reads `TurnRecord.scores[NAME]`, else the verdict's dimension
NAME; a slot a judge did not score is left out, never counted as 0.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from scipy.stats import pearsonr

from runner.errors import UserError
from runner.turns.records import RunDirectory, TurnRecord
from runner.validity.labels import LabelsError

__all__ = ["cross_validate", "slot_scores"]


def _score(record: TurnRecord, name: str) -> float | None:
    if name in record.scores:
        return float(record.scores[name])
    if record.verdict is not None and name in record.verdict.dimensions:
        return record.verdict.dimensions[name].score
    return None


def slot_scores(run_dir: Path, name: str) -> tuple[str, dict[tuple[str, int], float]]:
    records = RunDirectory(run_dir).load_records()
    if not records:
        raise LabelsError(f"{run_dir}: no turns.jsonl records; pass the dir of a finished run")
    scores = {record.slot: score for record in records if (score := _score(record, name)) is not None}
    return records[0].judge, scores


def _full_mark_rate(values: list[float], full_mark: float) -> float:
    return sum(1 for value in values if math.isclose(value, full_mark)) / len(values)


def cross_validate(reference: Path, others: list[Path], *, score: str = "overall",
                   full_mark: float = 1.0) -> dict[str, Any]:
    reference_judge, reference_scores = slot_scores(reference, score)
    if not reference_scores:
        raise LabelsError(f"{reference}: no slot has a score {score!r} (give --score)")
    rows = [{"judge": reference_judge, "run_dir": str(reference), "reference": True, "slots": len(reference_scores),
             "delta_mean": None, "full_mark": _full_mark_rate(list(reference_scores.values()), full_mark),
             "correlation": 1.0}]
    for other in others:
        judge, scores = slot_scores(other, score)
        common = sorted(set(scores) & set(reference_scores))
        row: dict[str, Any] = {"judge": judge, "run_dir": str(other), "reference": False, "slots": len(common),
                               "delta_mean": None, "full_mark": None, "correlation": None}
        if common:
            ours = [scores[slot] for slot in common]
            theirs = [reference_scores[slot] for slot in common]
            row["delta_mean"] = statistics.fmean(a - b for a, b in zip(ours, theirs))
            row["full_mark"] = _full_mark_rate(ours, full_mark)
            if len(common) > 1 and len(set(ours)) > 1 and len(set(theirs)) > 1:  # constant scores: undefined
                row["correlation"] = float(pearsonr(ours, theirs).statistic)
        rows.append(row)
    return {"score": score, "full_mark_value": full_mark, "judges": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.validity.crossval", description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", type=Path)
    parser.add_argument("others", nargs="+", type=Path)
    parser.add_argument("--score", default="overall")
    parser.add_argument("--full-mark", type=float, default=1.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    try:
        report = cross_validate(args.reference, args.others, score=args.score, full_mark=args.full_mark)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    table = Table(title=f"judge cross-validation on {args.score!r} (MT-Web2Code Table 5)")
    for column in ("judge", "slots", "Δmean", "full-mark %", "corr."):
        table.add_column(column)
    for row in report["judges"]:
        table.add_row(row["judge"] + (" (ref.)" if row["reference"] else ""), str(row["slots"]),
                      "-" if row["delta_mean"] is None else f"{row['delta_mean']:+.3f}",
                      "-" if row["full_mark"] is None else f"{100 * row['full_mark']:.1f}",
                      "-" if row["correlation"] is None else f"{row['correlation']:.3f}")
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
