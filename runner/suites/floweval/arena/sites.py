"""The generated sites an arena can show: one per recorded slot whose built site was kept.

A slot's built site is `evidence/<task>/<turn>/site/` (index.html and its assets, EvidenceFolder.SITE). The
model is the record's `model`, else the run's config.yaml `model.name`; the description shown is the task's
public prompt from the run's task library (tasks.json), never the private task list.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


from runner.errors import ConfigError
from runner.turns.evidence_folder import EvidenceFolder
from runner.turns.records import RunDirectory
from runner.report.collect import TASKS_FILE


@dataclass(frozen=True)
class ArenaSite:
    run_dir: Path
    task_id: str
    turn: int
    model: str
    folder: Path  # the built site: index.html and its assets
    description: str

    @property
    def site_id(self) -> str:
        """How labels name this site: `<run dir>::<task>::<turn>`."""
        return f"{self.run_dir}::{self.task_id}::{self.turn}"


def _descriptions(run_dir: Path) -> dict[tuple[str, int], str]:
    """(task, turn) -> the turn's public prompt, from tasks.json (empty when the run wrote none)."""
    path = run_dir / TASKS_FILE
    if not path.is_file():
        return {}
    try:
        library = json.loads(path.read_text())
    except ValueError as error:
        raise ConfigError(f"{path}: not JSON: {error}") from None
    return {(str(task["id"]), int(turn["index"])): str(turn.get("prompt") or task.get("title") or "")
            for task in library for turn in task.get("turns", [])}


def collect_sites(run_dirs: list[Path]) -> list[ArenaSite]:
    """Every slot with a built site in the given run dirs, sorted (task, model, run dir, turn)."""
    sites = []
    for run_dir in run_dirs:
        run_dir = Path(run_dir).resolve()
        if not (run_dir / RunDirectory.RECORDS).is_file():
            raise ConfigError(f"{run_dir}: not a run directory (no {RunDirectory.RECORDS})")
        default_model = RunDirectory(run_dir).model_name()
        descriptions = _descriptions(run_dir)
        for record in RunDirectory(run_dir).load_records():
            if not record.evidence_dir:
                continue
            folder = run_dir / record.evidence_dir / EvidenceFolder.SITE
            if not (folder / "index.html").is_file():
                continue
            model = record.model or default_model
            if not model:
                raise ConfigError(f"{run_dir}: slot {record.task_id} turn {record.turn} names no model "
                                  f"(turns.jsonl `model` and config.yaml `model.name` are empty)")
            description = descriptions.get((record.task_id, record.turn), "")
            sites.append(ArenaSite(run_dir, record.task_id, record.turn, model, folder, description))
    return sorted(sites, key=lambda s: (s.task_id, s.model, str(s.run_dir), s.turn))
