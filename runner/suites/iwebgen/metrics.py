"""I-WebGenBench's rule-based metrics (§3.2) and the 100-point score table (B.1, Tables 2 and 3).

Per app (one requested slot per specification):
- built: the slot's final build succeeded (`extra.build_status == "ok"`). A slot with no record, no answer,
  an unparsable answer or a failed build is an app that does not build.
- built first pass: the first generated round built (`extra.generation.builds[0]`, recorded by a multi-round
  strategy such as self-repair, C.3), else the slot's own build outcome (single pass).
- IR(p) = (1/|A_p|) * sum_a Delta_DOM(a, p) (§3.2, B.1), the probe's `interaction_rate`, for a built app the
  probe ran on; `ir_actions` / `ir_responsive` are |A_p| and the responsive count.

Aggregates: BSR = built apps / requested apps (§3.2), first-pass BSR likewise; IR = the mean of IR(p) over the
apps with a probe result (Table 2 reports IR only where apps built); pooled IR = all responsive actions / all
executed actions. The score (B.1) per app = V + I + T + C + R; an app that does not build scores 0 on every
dimension (C.3); a built app whose judged dimensions were not assessed (judge=rules) leaves V, I, T, C and the
total None, never 0 or full. A column's mean is None when any built app in it is unassessed. Rows per domain
like Table 2, columns V / I / T / C / R like Table 3.
"""

from __future__ import annotations

from collections.abc import Iterable
from statistics import mean
from typing import Any

from runner.turns.records import TurnRecord
from runner.turns.tasks import Task

__all__ = ["COLUMNS", "DIMENSION_OF_COLUMN", "app_row", "iwebgen_summary", "table"]

# Table 3's columns and the dimension (verdict key) each reports.
DIMENSION_OF_COLUMN: dict[str, str] = {"V": "visual", "I": "interaction", "T": "topic", "C": "clarity", "R": "rule"}
COLUMNS: tuple[str, ...] = tuple(DIMENSION_OF_COLUMN)


def _built(record: TurnRecord | None) -> bool:
    return record is not None and record.extra.get("build_status") == "ok"


def _built_first_pass(record: TurnRecord | None) -> bool:
    if record is None:
        return False
    builds = (record.extra.get("generation") or {}).get("builds") or []
    return bool(builds[0]) if builds else _built(record)


def _dimension(record: TurnRecord | None, built: bool, name: str) -> float | None:
    if not built:
        return 0.0  # C.3: an app that does not build scores 0 on every dimension
    if record is None or record.verdict is None or name not in record.verdict.dimensions:
        return None
    return record.verdict.dimensions[name].score


def app_row(task: Task, record: TurnRecord | None) -> dict[str, Any]:
    """One app's numbers: build outcomes, IR and the five dimensions with their total (None: unassessed)."""
    built = _built(record)
    row: dict[str, Any] = {
        "task_id": task.id,
        "domain": task.domain,
        "status": str(record.status) if record is not None else "missing",
        "built": built,
        "built_first_pass": _built_first_pass(record),
        "ir": record.scores.get("interaction_rate") if built and record is not None else None,
        "ir_actions": record.scores.get("ir_actions") if built and record is not None else None,
        "ir_responsive": record.scores.get("ir_responsive") if built and record is not None else None,
    }
    for column, name in DIMENSION_OF_COLUMN.items():
        row[column] = _dimension(record, built, name)
    values = [row[column] for column in COLUMNS]
    row["score"] = None if any(v is None for v in values) else float(sum(values))
    return row


def _mean_or_none(values: list[float | None]) -> float | None:
    """The mean when every value is known, else None (an unassessed app is never averaged as 0)."""
    if not values or any(value is None for value in values):
        return None
    return mean(values)


def table(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """BSR, first-pass BSR, IR (mean and pooled), the score and V / I / T / C / R over some apps."""
    rows = list(rows)
    n = len(rows)
    probed = [row for row in rows if row["ir"] is not None]
    actions = sum(row["ir_actions"] or 0 for row in probed)
    responsive = sum(row["ir_responsive"] or 0 for row in probed)
    return {
        "apps": n,
        "built": sum(1 for row in rows if row["built"]),
        "bsr": sum(1 for row in rows if row["built"]) / n if n else 0.0,
        "bsr_first_pass": sum(1 for row in rows if row["built_first_pass"]) / n if n else 0.0,
        "ir": mean(row["ir"] for row in probed) if probed else None,
        "ir_pooled": responsive / actions if actions else None,
        "ir_apps": len(probed),
        "score": _mean_or_none([row["score"] for row in rows]),
        **{column: _mean_or_none([row[column] for row in rows]) for column in COLUMNS},
    }


def iwebgen_summary(records: list[TurnRecord], tasks: list[Task]) -> dict[str, Any]:
    """The suite's summary: overall numbers, per-domain rows (Table 2) and per-app rows; every requested
    task is an app, recorded or not."""
    by_task = {record.task_id: record for record in records}
    rows = [app_row(task, by_task.get(task.id)) for task in sorted(tasks, key=lambda t: t.id)]
    overall = table(rows)
    dimensions = {column: overall.pop(column) for column in COLUMNS}
    domains = sorted({row["domain"] for row in rows})
    return {
        **overall,
        "dimensions": dimensions,
        "domains": {domain: table(row for row in rows if row["domain"] == domain) for domain in domains},
        "apps_table": rows,
    }
