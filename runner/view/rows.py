"""The turn lists' data: one compact row per turn (the catalog's turn_row, plus the outcome, the people's
label and whether the judge disagrees with it), written as a script that sets a global, so a page exported
to a file reads it from file:// as well as from the app.

People's labels come from an annotation sample folder (runner/validity/sampling.py: key.jsonl says which run
dir and slot each blinded item is; labels.jsonl, runner/validity/labels.py, holds the annotators' labels).
An item's human reference is the majority of its annotators (EvoGenUI-Bench §4.4), none on a tie.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runner.turns.records import TurnRecord
from runner.validity.labels import LABELS_FILE, Label, majority, read_labels
from runner.validity.sampling import read_key
from runner.view.catalog import Catalog, ViewRun, turn_row

ROWS_GLOBAL = "GENUI_ROWS"
HumanLabels = dict[tuple[str, str, int], bool]  # (resolved run dir, task, turn) -> the majority's pass


def read_human_labels(sample_dir: Path) -> HumanLabels:
    """The majority label of every labelled item of a sample folder, by the slot its key names."""
    key = read_key(sample_dir)
    labels_path = Path(sample_dir) / LABELS_FILE
    by_item: dict[str, list[Label]] = {}
    for label in read_labels(labels_path) if labels_path.is_file() else []:
        by_item.setdefault(label.item, []).append(label)
    found: HumanLabels = {}
    for item, labels in by_item.items():
        entry = key.get(item)
        verdict = majority(labels)
        if entry is not None and verdict is not None:
            found[(str(Path(entry.run_dir).resolve()), entry.task_id, entry.turn)] = verdict
    return found


def outcome(record: TurnRecord) -> str:
    return "unassessed" if record.passed is None else ("pass" if record.passed else "fail")


def row(run: ViewRun, record: TurnRecord, human: HumanLabels) -> dict[str, Any]:
    base = turn_row(run, record)
    where = str(run.path.resolve()) if run.path is not None else ""
    label = human.get((where, record.task_id, record.turn))
    base.update({
        "outcome": outcome(record),
        "human": "" if label is None else ("pass" if label else "fail"),
        # Only an assessed turn can disagree: an unassessed one has no judge decision to compare.
        "disagree": label is not None and record.passed is not None and label != record.passed,
        "score": record.scores.get("score"),
    })
    base.pop("evidence", None)  # the pages link by slot, not by folder
    return base


def build_rows(catalog: Catalog, human: HumanLabels | None = None, run_id: str | None = None) -> list[dict[str, Any]]:
    """Every turn of every run (or of one run), in run order, then task and turn."""
    runs = [catalog.run(run_id)] if run_id is not None else list(catalog.runs.values())
    return [row(run, record, human or {}) for run in runs for record in run.data.records]


def rows_script(rows: list[dict[str, Any]]) -> str:
    """`window.GENUI_ROWS = [...]`: JSON with '<' escaped, so the text is inert even if pasted into a page."""
    data = json.dumps(rows, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")
    return f"window.{ROWS_GLOBAL} = {data};\n"


__all__ = ["HumanLabels", "ROWS_GLOBAL", "build_rows", "outcome", "read_human_labels", "row", "rows_script"]
