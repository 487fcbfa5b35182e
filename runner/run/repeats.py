"""Independent runs of one configuration, and the one summary over them (`repeats: N`).

MT-Web2Code reports every Table 3 number "averaged over three independent runs"; EvoGenUI-Bench's Table 8 gives
three regenerations with "Mean ± SD". With `repeats: N` (its presets set it) one command runs the configuration N
times, run i as `repeat=i` (its model calls get answers of their own from the response cache) in
`<run dir>/repeat-<i>/`, each a complete run dir of its own (resumable, re-judgeable, mergeable). Then
`<run dir>/repeats.json` puts each run's figures side by side with their mean and sample standard deviation
(n - 1, as Table 8's "Mean ± SD": 60.0, 55.2, 62.0 give 59.1 ± 3.5): every number of each run's summary.json,
by its dotted key (`turn_pass`, `by_sub_suite.interaction.apr`, ...).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from runner.config import RunnerConfig
from runner.models import server_keep
from runner.turns.records import RunDirectory, write_json_atomic
from runner.validity.stability import mean_sd

__all__ = ["REPEATS_FILE", "aggregate_repeats", "repeat_dir", "run_repeats", "summary_figures"]

REPEATS_FILE = "repeats.json"
_NOT_FIGURES = ("run", "task_set")  # summary.json's description of what ran and on which tasks, not results


def repeat_dir(run_dir: Path, index: int) -> Path:
    return Path(run_dir) / f"repeat-{index}"


def summary_figures(summary: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """Every number of a summary.json by its dotted key (booleans and lists are not figures)."""
    figures: dict[str, float] = {}
    for key, value in summary.items():
        if not prefix and key in _NOT_FIGURES:
            continue
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            figures.update(summary_figures(value, f"{name}."))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            figures[name] = float(value)
    return figures


def aggregate_repeats(run_dirs: list[Path]) -> dict[str, Any]:
    """{"repeats": N, "runs": [{repeat, run_dir}], "figures": {key: {values, mean, sd, n}}} over finished runs.

    `values` has one entry per run, in run order (None where a run's summary has no such figure); mean and SD are
    over the runs that have it."""
    runs: list[dict[str, Any]] = []
    per_run: list[dict[str, float]] = []
    for index, run_dir in enumerate(run_dirs):
        path = Path(run_dir) / RunDirectory.SUMMARY
        if not path.is_file():
            raise FileNotFoundError(f"{run_dir}: no {RunDirectory.SUMMARY}; repeat {index} did not finish")
        per_run.append(summary_figures(json.loads(path.read_text())))
        runs.append({"repeat": index, "run_dir": str(run_dir)})
    names = sorted({name for figures in per_run for name in figures})
    table: dict[str, dict[str, Any]] = {}
    for name in names:
        values = [figures.get(name) for figures in per_run]
        table[name] = {"values": values, **mean_sd([value for value in values if value is not None])}
    return {"repeats": len(run_dirs), "runs": runs, "figures": table}


def print_repeats(console: Console, report: dict[str, Any]) -> None:
    table = Table(title=f"{report['repeats']} independent runs: each run, mean ± SD ({REPEATS_FILE})")
    table.add_column("figure")
    for run in report["runs"]:
        table.add_column(f"R{run['repeat'] + 1}")
    table.add_column("mean ± SD")
    for name, figure in report["figures"].items():
        cells = ["-" if value is None else f"{value:.4g}" for value in figure["values"]]
        spread = f"{figure['mean']:.4g}" + (f" ± {figure['sd']:.2g}" if figure["sd"] is not None else "")
        table.add_row(name, *cells, spread)
    console.print(table)


RunOne = Callable[[RunnerConfig, Path], Awaitable[Any]]


async def run_repeats(config: RunnerConfig, run_dir: Path, run_one: RunOne, *,
                      console: Console | None = None) -> dict[str, Any]:
    """Run `config` `config.repeats` times (run i: repeat=i in repeat-<i>/) with `run_one`, then write and print
    repeats.json. A run stage that stops before judging (`run.stage=generate`) writes no summary to aggregate."""
    run_dir = Path(run_dir)
    dirs = [repeat_dir(run_dir, index) for index in range(config.repeats)]
    # The vLLM servers load once for all runs (runner/models/server_keep.py); a server's log is in the
    # servers/ folder of the run that started it.
    async with server_keep.kept_between_runs():
        for index, path in enumerate(dirs):
            path.mkdir(parents=True, exist_ok=True)
            # Each run is one run of its own (repeats 1): its dir resumes, re-judges and merges like any run dir.
            await run_one(config.model_copy(update={"repeat": index, "repeats": 1}), path)
    if config.run.stage == "generate":
        return {}
    report = aggregate_repeats(dirs)
    write_json_atomic(run_dir / REPEATS_FILE, report)
    print_repeats(console or Console(stderr=True), report)
    return report
