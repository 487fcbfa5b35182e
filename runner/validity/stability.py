"""Regeneration stability (EvoGenUI-Bench Table 8): repeated runs of one configuration, mean and SD.

    python -m runner.validity.stability RUN_DIR RUN_DIR [RUN_DIR ...] [--json FILE]

Each run dir is one repeat: a run of the same configuration with its own `repeat` index (`python -m runner -m
... repeat=0,1,2`; each repeat gets model answers of its own from the response cache), ordered by that index
(dirs whose config.yaml names none: in the order given); two dirs of one index are refused. Per suite and overall, each repeat gives its
turn pass rate (passed slots over requested slots: requested-slot accounting) and the mean of each verdict
dimension over the slots that scored it (unassessed scores are left out, never counted as 0); the summary
row is the mean and the sample standard deviation across repeats (Table 8's "Mean ± SD": 60.0, 55.2, 62.0
give 59.1 ± 3.5, so SD has n - 1 degrees of freedom). The repeats must be of one suite, model, judge and
actor; their summary.json numbers are summarised the same way.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from runner.errors import UserError
from runner.turns.records import RunDirectory, TurnRecord
from runner.validity.labels import LabelsError

__all__ = ["OVERALL", "mean_sd", "repeat_figures", "stability_report"]

OVERALL = "overall"


def mean_sd(values: list[float]) -> dict[str, float | None]:
    """Mean and sample SD (n - 1, Table 8); SD is None for one value."""
    if not values:
        return {"mean": None, "sd": None, "n": 0}
    return {"mean": statistics.fmean(values), "sd": statistics.stdev(values) if len(values) > 1 else None,
            "n": len(values)}


def repeat_figures(records: list[TurnRecord]) -> dict[str, dict[str, float]]:
    """group -> {turn_pass, dim_<name>: mean score} for one repeat."""
    groups: dict[str, list[TurnRecord]] = {OVERALL: list(records)}
    for record in records:
        groups.setdefault(record.sub_suite or record.suite, []).append(record)
    figures: dict[str, dict[str, float]] = {}
    for group, members in groups.items():
        row: dict[str, float] = {"turn_pass": sum(1 for r in members if r.passed is True) / len(members)}
        scores: dict[str, list[float]] = {}
        for record in members:
            for name, dimension in (record.verdict.dimensions.items() if record.verdict else []):
                if dimension.score is not None:
                    scores.setdefault(name, []).append(dimension.score)
        row.update({f"dim_{name}": statistics.fmean(values) for name, values in sorted(scores.items())})
        figures[group] = row
    return figures


def _summary_numbers(run_dir: Path) -> dict[str, float]:
    try:
        summary = json.loads((run_dir / RunDirectory.SUMMARY).read_text())
    except (OSError, ValueError):
        return {}
    return {key: float(value) for key, value in summary.items()
            if isinstance(value, (int, float)) and not isinstance(value, bool)}


def repeat_index(run_dir: Path) -> int | None:
    """The run's `repeat` (its config.yaml); None for a dir whose config does not say."""
    try:
        config = yaml.safe_load((Path(run_dir) / RunDirectory.CONFIG).read_text()) or {}
    except OSError:
        return None
    value = config.get("repeat")
    return None if value is None else int(value)


def stability_report(run_dirs: list[Path]) -> dict[str, Any]:
    repeats: list[dict[str, Any]] = []
    configurations = set()
    indices = [repeat_index(run_dir) for run_dir in run_dirs]
    known = [index for index in indices if index is not None]
    if len(set(known)) < len(known):
        raise LabelsError(f"two run dirs share a repeat index ({dict(zip(map(str, run_dirs), indices))}): "
                          "give each repeat its own `repeat=N`")
    ordered = list(zip(indices, run_dirs))
    if len(known) == len(indices):  # every dir says its index: in repeat order (else in the order given)
        ordered.sort(key=lambda pair: pair[0])
    for index, run_dir in ordered:
        records = RunDirectory(run_dir).load_records()
        if not records:
            raise LabelsError(f"{run_dir}: no turns.jsonl records; pass the dir of a finished run")
        configurations.add(tuple(sorted({(r.suite, r.model, r.judge, r.actor) for r in records})))
        repeats.append({"run_dir": str(run_dir), "repeat": index, "groups": repeat_figures(records),
                        "summary": _summary_numbers(Path(run_dir))})
    if len(configurations) > 1:
        raise LabelsError(f"the repeats are of different configurations (suite, model, judge, actor): "
                          f"{sorted(configurations)}")
    groups = sorted({g for repeat in repeats for g in repeat["groups"]} - {OVERALL}) + [OVERALL]
    summary: dict[str, dict[str, Any]] = {}
    for group in groups:
        names = sorted({name for repeat in repeats for name in repeat["groups"].get(group, {})})
        summary[group] = {name: mean_sd([repeat["groups"][group][name] for repeat in repeats
                                         if name in repeat["groups"].get(group, {})]) for name in names}
    summary_names = sorted({name for repeat in repeats for name in repeat["summary"]})
    return {"repeats": repeats, "groups": summary,
            "summary": {name: mean_sd([r["summary"][name] for r in repeats if name in r["summary"]])
                        for name in summary_names}}


def _print(console: Console, report: dict[str, Any]) -> None:
    for group, figures in report["groups"].items():
        table = Table(title=f"{group}: {len(report['repeats'])} repeat(s) (EvoGenUI-Bench Table 8)")
        table.add_column("run")
        for name in figures:
            table.add_column(name)
        for index, repeat in enumerate(report["repeats"], start=1):
            row = repeat["groups"].get(group, {})
            table.add_row(f"R{index}", *(f"{row[name]:.3f}" if name in row else "-" for name in figures))
        table.add_row("mean ± SD", *(f"{f['mean']:.3f} ± {f['sd']:.3f}" if f["sd"] is not None else f"{f['mean']:.3f}"
                                     for f in figures.values()))
        console.print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.validity.stability", description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", nargs="+", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    try:
        report = stability_report(args.run_dirs)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    _print(Console(), report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
