"""What the runs list and the comparison show of one run: who ran it (model, suite, judge, actor, sandbox,
commit) and its suite's headline metrics with their confidence intervals, taken from the report's own tables
(runner.report.leaderboard's overview and the tables suites declare, runner/report/sections.py), so the viewer
shows the leaderboard's numbers and never recomputes them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from runner.report.collect import RunData
from runner.report.leaderboard import format_cell, overview_table
from runner.report.sections import table_sections
from runner.report.tables import Table, number

NUMERIC_KINDS = {"pct", "pct_ci", "num", "num_ci", "score100"}
_OVERVIEW = (("turn_pass", "turn pass %"), ("bsr", "BSR %"), ("ir", "IR %"), ("score", "score"))


@dataclass(frozen=True)
class Metric:
    label: str
    value: Any  # a number, or {"value", "ci": [lo, hi]} for kinds *_ci
    kind: str

    @property
    def text(self) -> str:
        return format_cell(self.value, self.kind)


def run_facts(run: RunData) -> dict[str, str]:
    """model, agent, suite, judge, actor, sandbox, the commit the run was made at (lineage.json) and its task set."""
    summary_run = run.summary.get("run") or {}
    sandbox = str(summary_run.get("sandbox") or (run.config.get("sandbox") or {}).get("name") or "")
    commit = ""
    if run.path is not None:
        try:
            lineage = json.loads((run.path / "lineage.json").read_text())
        except (OSError, ValueError):
            lineage = {}
        commit = str(lineage.get("git_commit") or "")[:10]
        if commit and str(lineage.get("git_dirty")).lower() == "true":
            commit += "+dirty"
    return {"model": run.model, "agent": run.agent, "suite": run.suite, "judge": run.judge, "actor": run.actor,
            "sandbox": sandbox,
            "commit": commit, "task set": task_set_fact(run.summary.get("task_set"))}


def task_set_fact(record: dict[str, Any] | None) -> str:
    """The task set in a few words: `paper 150/150`, `project 9 (paper: 150)`, `-` for a run that recorded none."""
    if not record:
        return "-"
    name, run, paper = record.get("name"), record.get("tasks_run"), record.get("paper_tasks")
    if paper is None:
        return f"{name} {run}"
    return f"{name} {run}/{paper}" if name == "paper" else f"{name} {run} (paper: {paper})"


def _headline_row(table: Table) -> dict[str, Any] | None:
    """The row of a one-run table that holds the run's overall numbers (MT-Web2Code: the "overall" mode)."""
    for row in table["rows"]:
        if row.get("run") == "Aggregate":
            continue
        if row.get("mode", "overall") == "overall":
            return row
    return None


def _table_metrics(table: Table) -> list[Metric]:
    row = _headline_row(table)
    if row is None:
        return []
    columns = [c for c in table["columns"] if c["kind"] in NUMERIC_KINDS]
    overall = [c for c in columns if c["key"].startswith("overall.")]
    chosen = overall or columns  # a table by sub-suite or domain: only its Overall columns
    # The overview already shows turn pass, BSR, IR and score.
    skip = {"overall.turn_pass", "overall.bsr", "overall.ir", "overall.score"}
    return [Metric(c["label"], row.get(c["key"]), c["kind"]) for c in chosen
            if c["key"] not in skip and row.get(c["key"]) is not None]


def headline(run: RunData) -> list[Metric]:
    """The run's overview numbers, then each suite table's overall numbers, then FlowEval's metric medians."""
    overview = overview_table([run])["rows"][0]
    metrics = [Metric(label, overview.get(key), {"turn_pass": "pct_ci", "score": "score100"}.get(key, "pct"))
               for key, label in _OVERVIEW if overview.get(key) is not None]
    for section in table_sections():
        for table in section([run]):
            metrics += _table_metrics(table)
    for name, entry in sorted((run.summary.get("floweval") or {}).items()):
        if isinstance(entry, dict) and number(entry.get("median")) is not None:  # FlowEval Appendix D: medians
            metrics.append(Metric(f"{name} (median)", number(entry["median"]), "num"))
        if isinstance(entry, dict) and isinstance(entry.get("incomplete_slots"), dict):  # beside DTW: who stopped
            metrics.append(Metric("slots with an incomplete flow", len(entry["incomplete_slots"]), "int"))
    seen: set[str] = set()
    unique = []
    for metric in metrics:  # the overview's "score" is MT-Web2Code Table 3's "Score": shown once
        if metric.label.lower() not in seen:
            seen.add(metric.label.lower())
            unique.append(metric)
    return unique


__all__ = ["Metric", "headline", "run_facts"]
