"""Print a summary's `table2` (EvoGenUI-Bench Table 2 shape): rows = sub-suites + Overall, columns TP,
TP@N, CPT, APR with 95% CIs. TP, TP@N and APR in percent and CPT in turns, as in the paper."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

_TITLES = {"presentation": "Presentation", "interaction": "Interaction", "tool_grounded": "Tool-grounded",
           "overall": "Overall"}


def _value(value: Any, *, percent: bool) -> str:
    if value is None:
        return "-"
    return f"{value * 100:.1f}" if percent else f"{value:.2f}"


def _interval(interval: Any, *, percent: bool) -> str:
    if not isinstance(interval, (list, tuple)) or len(interval) != 2 or None in interval:
        return "-"
    return f"{_value(interval[0], percent=percent)}-{_value(interval[1], percent=percent)}"


def table2_rows(table: dict[str, Any]) -> list[list[str]]:
    """The printed cells: per table row a line of values, then a line of its confidence intervals."""
    rows = []
    for name in table.get("order", []):
        row = table["rows"][name]
        values = [_TITLES.get(name, name), str(row.get("n_tasks", ""))]
        intervals = ["", ""]
        for column in table["columns"]:
            percent = column != "cpt"
            values.append(_value(row.get(column), percent=percent))
            intervals.append(_interval(row.get(f"{column}_ci"), percent=percent))
        rows += [values, intervals]
    return rows


def print_table2(console: Console, table: dict[str, Any], *, title: str = "") -> None:
    level = table.get("ci_level", 0.95)
    grid = Table(title=title or f"EvoGenUI results (Table 2 shape; CI rows: {level:.0%} task bootstrap)",
                 box=box.SIMPLE_HEAD, pad_edge=False)
    grid.add_column("suite")
    grid.add_column("n", justify="right")  # tasks
    labels = table.get("labels", {})
    for column in table.get("columns", []):
        unit = "" if column == "cpt" else " %"
        grid.add_column(labels.get(column, column) + unit, justify="right")
    for position, cells in enumerate(table2_rows(table)):
        grid.add_row(*cells, style="dim" if position % 2 else None)
    console.print(grid)
