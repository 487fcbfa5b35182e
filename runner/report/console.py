"""The end-of-run summary table printed to the terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from runner.report.sections import console_sections
from runner.report.task_set import describe_task_set
from runner.turns.records import TurnRecord


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def print_summary(console: Console, summary: dict[str, Any], records: list[TurnRecord]) -> None:
    table = Table(title=f"{summary.get('run', {}).get('suite', '')} summary", show_lines=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        if isinstance(value, (int, float, str)) or value is None:
            table.add_row(key, _fmt(value))
    overall = summary.get("reliability", {}).get("overall", {})
    for key in ("tp_at_k", "cpt", "apr"):
        if key in overall:
            table.add_row(key, _fmt(overall[key]))
    left_out = overall.get("apr_unobserved") or {}
    if any(left_out.values()):  # EvoGenUI-Bench eq. 3: transitions into unobserved slots, beside APR
        table.add_row("apr:left out", ", ".join(f"{cause} {n}" for cause, n in left_out.items() if n))
    for bucket, count in summary.get("status_counts", {}).items():
        table.add_row(f"status:{bucket}", str(count))
    console.print(table)
    if summary.get("task_set"):  # which tasks these numbers are of (runner/run/task_set.py)
        console.print(describe_task_set(summary["task_set"]), markup=False, highlight=False, soft_wrap=True)

    turns = Table(title="turns", show_lines=False)
    for column in ("task", "turn", "status", "passed", "error"):
        turns.add_column(column)
    for record in sorted(records, key=lambda r: r.slot):
        turns.add_row(record.task_id, str(record.turn), str(record.status), _fmt(record.passed), record.error.splitlines()[0][:60] if record.error else "")
    console.print(turns)
    for section in console_sections():  # the suites' own tables (EvoGenUI-Bench Tables 2 and 6)
        section(console, summary)
