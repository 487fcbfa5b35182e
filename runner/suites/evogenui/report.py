"""EvoGenUI-Bench's report sections (runner/report/sections.py): the Table 2 shape on the leaderboard, and
Table 2 and Table 6's slot accounting in the end-of-run printout.

Both read summaries only (`table2`, or the shared episode metrics under `reliability`), so any suite whose
summary has them gets them.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table as RichTable

from runner.report.collect import RunData
from runner.report.tables import Table, column, with_ci
from runner.suites.evogenui.table2 import SUB_SUITE_ORDER

GROUP_TITLES = {"presentation": "Presentation", "interaction": "Interaction", "tool_grounded": "Tool-grounded",
                "overall": "Overall"}
METRICS = ("turn_pass", "tp_at_k", "cpt", "apr")


# --------------------------------------------------------------------------- leaderboard


def reliability_groups(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """group -> {"turn_pass", "tp_at_k", "cpt", "apr": (value, ci)} plus APR terms, from `table2` or
    `reliability` (smoke and other suites with episode metrics)."""
    groups: dict[str, dict[str, Any]] = {}
    reliability = summary.get("reliability") or {}
    table = summary.get("table2") or {}
    names = list(table.get("order") or []) or [name for name in reliability if isinstance(reliability.get(name), dict)]
    for name in names:
        row = (table.get("rows") or {}).get(name)
        source = reliability.get(name) or {}
        if row is None and not source.get("n_tasks"):
            continue
        entry: dict[str, Any] = {"n_tasks": (row or source).get("n_tasks")}
        for metric in METRICS:
            key = metric
            if metric == "tp_at_k":
                key = next((k for k in (row or source) if k.startswith("tp_at_") and not k.endswith("_ci")), "")
                entry["k"] = key[len("tp_at_"):] if key else ""
            if row is not None:
                entry[metric] = with_ci(row.get(key), row.get(f"{key}_ci"))
            else:
                entry[metric] = with_ci(source.get(key), (source.get("ci") or {}).get(key))
        entry["apr_terms"] = (source.get("apr_retained"), source.get("apr_eligible"))
        groups[name] = entry
    return groups


def table2_table(runs: list[RunData]) -> Table | None:
    """EvoGenUI-Bench Table 2: per sub-suite and Overall TP / TP@N / CPT / APR with task-bootstrap CIs, models
    ordered by overall TP, and the caption's Aggregate row (macro-average of model rows for TP, TP@N, CPT;
    eligible transitions pooled for APR)."""
    per_run = [(run, reliability_groups(run.summary)) for run in runs]
    per_run = [(run, groups) for run, groups in per_run if groups]
    if not per_run:
        return None
    seen = {name for _, groups in per_run for name in groups}
    order = [n for n in SUB_SUITE_ORDER if n in seen] + sorted(seen - set(SUB_SUITE_ORDER) - {"overall"})
    order += ["overall"] if "overall" in seen else []
    ks = {groups[name].get("k") for _, groups in per_run for name in groups}
    k = ks.pop() if len(ks) == 1 else "N"
    columns = [column("run", "model / judge / actor")]
    for name in order:
        title = GROUP_TITLES.get(name, name)
        columns += [column(f"{name}.turn_pass", f"{title} TP", "pct_ci"),
                    column(f"{name}.tp_at_k", f"{title} TP@{k}", "pct_ci"),
                    column(f"{name}.cpt", f"{title} CPT", "num_ci"), column(f"{name}.apr", f"{title} APR", "pct_ci")]
    rows = []
    for run, groups in per_run:
        row: dict[str, Any] = {"run": run.label}
        for name in order:
            for metric in METRICS:
                row[f"{name}.{metric}"] = (groups.get(name) or {}).get(metric)
        rows.append(row)
    rows.sort(key=lambda row: -((row.get("overall.turn_pass") or {}).get("value", -1.0)))
    if len(per_run) > 1:
        rows.append(_aggregate_row(per_run, order))
    return {"id": "table2", "title": "EvoGenUI-Bench Table 2 shape", "columns": columns, "rows": rows,
            "caption": "Models ordered by overall TP. TP: turn pass rate (%); TP@N: episodes whose N turns all pass (%); "
                       "CPT: mean initial run of passed turns; APR: adjacent pass retention (%). Brackets: 95% task-level "
                       "bootstrap interval (Appendix C.2). Aggregate: macro-average of model rows for TP, TP@N and CPT; "
                       "eligible transitions pooled for APR (EvoGenUI-Bench Table 2 caption)."}


def table2_tables(runs: list[RunData]) -> list[Table]:
    """REPORT_TABLES entry: the Table 2 shape where the runs have episode metrics."""
    table = table2_table(runs)
    return [table] if table is not None else []


def _aggregate_row(per_run: list[tuple[RunData, dict[str, Any]]], order: list[str]) -> dict[str, Any]:
    row: dict[str, Any] = {"run": "Aggregate"}
    for name in order:
        present = [groups[name] for _, groups in per_run if name in groups]
        for metric in ("turn_pass", "tp_at_k", "cpt"):
            values = [g[metric]["value"] for g in present if g.get(metric)]
            row[f"{name}.{metric}"] = {"value": sum(values) / len(values), "ci": [None, None]} if values else None
        terms = [g["apr_terms"] for g in present if None not in g["apr_terms"]]
        eligible = sum(e for _, e in terms)
        row[f"{name}.apr"] = {"value": sum(r for r, _ in terms) / eligible, "ci": [None, None]} if eligible else None
    return row


# --------------------------------------------------------------------------- console


def _value(value: Any, *, percent: bool) -> str:
    if value is None:
        return "-"
    return f"{value * 100:.1f}" if percent else f"{value:.2f}"


def _interval(interval: Any, *, percent: bool) -> str:
    if not isinstance(interval, (list, tuple)) or len(interval) != 2 or None in interval:
        return "-"
    return f"{_value(interval[0], percent=percent)}-{_value(interval[1], percent=percent)}"


def table2_rows(table: dict[str, Any]) -> list[list[str]]:
    """The printed cells of a summary's `table2`: per table row a line of values, then a line of its confidence
    intervals (TP, TP@N and APR in percent, CPT in turns, as in the paper)."""
    rows = []
    for name in table.get("order", []):
        row = table["rows"][name]
        values = [GROUP_TITLES.get(name, name), str(row.get("n_tasks", ""))]
        intervals = ["", ""]
        for metric in table["columns"]:
            percent = metric != "cpt"
            values.append(_value(row.get(metric), percent=percent))
            intervals.append(_interval(row.get(f"{metric}_ci"), percent=percent))
        rows += [values, intervals]
    return rows


def print_table2(console: Console, table: dict[str, Any], *, title: str = "") -> None:
    level = table.get("ci_level", 0.95)
    grid = RichTable(title=title or f"EvoGenUI results (Table 2 shape; CI rows: {level:.0%} task bootstrap)",
                     box=box.SIMPLE_HEAD, pad_edge=False)
    grid.add_column("suite")
    grid.add_column("n", justify="right")  # tasks
    labels = table.get("labels", {})
    for metric in table.get("columns", []):
        unit = "" if metric == "cpt" else " %"
        grid.add_column(labels.get(metric, metric) + unit, justify="right")
    for position, cells in enumerate(table2_rows(table)):
        grid.add_row(*cells, style="dim" if position % 2 else None)
    console.print(grid)


def print_slot_accounting(console: Console, accounting: dict[str, Any]) -> None:
    """EvoGenUI-Bench Table 6's requested-slot accounting: executed slots, blocked ones by upstream cause."""
    table = RichTable(title="requested-slot accounting (Table 6 shape)", show_lines=False)
    for name in ("slot category", "count", "share"):
        table.add_column(name, justify="left" if name == "slot category" else "right")
    total = accounting.get("total") or 0
    rows = [("executed slots", accounting.get("executed", 0))]
    rows += [(f"blocked after earlier {cause.replace('_', ' ')}", n)
             for cause, n in (accounting.get("blocked_after") or {}).items()]
    if accounting.get("missing"):
        rows.append(("never recorded", accounting["missing"]))
    for name, count in rows + [("total requested slots", total)]:
        table.add_row(name, str(count), f"{100 * count / total:.1f}%" if total else "-")
    console.print(table)


def print_table2_section(console: Console, summary: dict[str, Any]) -> None:
    """CONSOLE_SECTIONS entry: a summary's `table2`, where it has one."""
    if summary.get("table2"):
        print_table2(console, summary["table2"])


def print_slot_accounting_section(console: Console, summary: dict[str, Any]) -> None:
    """CONSOLE_SECTIONS entry: a summary's `slot_accounting`, where it has one."""
    if summary.get("slot_accounting"):
        print_slot_accounting(console, summary["slot_accounting"])


__all__ = ["print_slot_accounting", "print_table2", "reliability_groups", "table2_rows", "table2_table",
           "table2_tables"]
