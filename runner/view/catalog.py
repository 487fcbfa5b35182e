"""What the viewer knows about the runs it was given: each run's RunData under a stable, URL-safe id, and one
compact row per turn for the lists (loaded once; evidence files are read only when a page asks for them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.report.collect import RunData, load_runs
from runner.turns.records import TurnRecord

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def url_id(label: str) -> str:
    """A label as one URL path segment (letters, digits, '.', '_', '-')."""
    return _UNSAFE.sub("_", label).strip("._") or "run"


@dataclass
class ViewRun:
    id: str
    data: RunData
    records: dict[tuple[str, int], TurnRecord] = field(default_factory=dict)

    @property
    def path(self) -> Path | None:
        return self.data.path


class UnknownRun(LookupError):
    pass


class Catalog:
    """The runs the viewer shows, by id, in the order given."""

    def __init__(self, runs: list[RunData]) -> None:
        self.runs: dict[str, ViewRun] = {}
        for data in runs:
            run_id = url_id(data.label)
            while run_id in self.runs:
                run_id += "_"
            self.runs[run_id] = ViewRun(run_id, data, {record.slot: record for record in data.records})

    @classmethod
    def from_paths(cls, paths: list[Path]) -> Catalog:
        return cls(load_runs([Path(p) for p in paths]))

    def run(self, run_id: str) -> ViewRun:
        try:
            return self.runs[run_id]
        except KeyError:
            raise UnknownRun(f"no run {run_id!r} in this viewer (runs: {', '.join(self.runs) or 'none'})") from None

    def record(self, run_id: str, task_id: str, turn: int) -> TurnRecord:
        run = self.run(run_id)
        try:
            return run.records[(task_id, turn)]
        except KeyError:
            raise UnknownRun(f"run {run_id!r} has no turn {turn} of task {task_id!r}") from None

    def evidence_file(self, run_id: str, relative: str) -> Path:
        """A file inside a run dir, refusing any path that leaves it (.., absolute paths, symlinks out)."""
        run = self.run(run_id)
        if run.path is None:
            raise UnknownRun(f"run {run_id!r} has no run dir on this machine (loaded from MLflow metrics only)")
        root = run.path.resolve()
        target = (root / relative).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            raise UnknownRun(f"run {run_id!r} has no file {relative!r}")
        return target

    def rows(self) -> list[dict[str, Any]]:
        """One compact row per turn of every run, for the lists' client-side filters."""
        out: list[dict[str, Any]] = []
        for run in self.runs.values():
            for record in run.data.records:
                out.append(turn_row(run, record))
        return out


def turn_row(run: ViewRun, record: TurnRecord) -> dict[str, Any]:
    verdict = record.verdict
    return {
        "run": run.id, "model": run.data.model or record.model, "suite": record.suite,
        "sub_suite": record.sub_suite, "task": record.task_id, "turn": record.turn,
        "bucket": record.status.value, "passed": record.passed,
        "mechanism": (verdict.mechanism or "") if verdict is not None else "",
        "evidence": record.evidence_dir,
    }
