"""What suites add to the report, found through the string maps of their packages (runner/kinds.py):

    REPORT_TABLES = {"table2": "runner.suites.evogenui.report:table2_tables"}          # over a suite's runs
    REPORT_RUN_TABLES = {"floweval": "runner.suites.floweval.report:floweval_table"}   # one per run, after them
    REPORT_PLOTS = {"pass_by_turn": "runner.suites.evogenui.figures:pass_by_turn"}     # <name>.png
    CONSOLE_SECTIONS = {"table2": "runner.suites.evogenui.report:print_table2_section"}  # end-of-run printout

Each section is offered every run (a table: each suite's runs together, or each of them in turn; a plot: all
runs) and adds nothing
where its data is absent, so a suite whose summaries carry another paper's data (smoke's episode metrics in
the Table 2 shape) gets that paper's shape too. Sections come in package order, then declaration order.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from runner.report.collect import RunData
from runner.report.tables import Table
from runner.kinds import KINDS

TableSection = Callable[[list[RunData]], list[Table]]  # one suite's runs -> its tables (none without data)
RunTableSection = Callable[[RunData], Table | None]  # one run -> its own table, or None without data
PlotSection = Callable[[list[RunData], Path], Path | None]  # all runs, the PNG path -> the path, or None
ConsoleSection = Callable[[Console, dict[str, Any]], None]  # prints its part of one run's summary, if any


def table_sections() -> list[TableSection]:
    return list(KINDS.members("report_table").values())


def run_table_sections() -> list[RunTableSection]:
    return list(KINDS.members("report_run_table").values())


def plot_sections() -> dict[str, PlotSection]:
    """plot name (its file is <name>.png) -> the function drawing it."""
    return dict(KINDS.members("report_plot"))


def console_sections() -> list[ConsoleSection]:
    return list(KINDS.members("console_section").values())


__all__ = ["ConsoleSection", "PlotSection", "RunTableSection", "TableSection", "console_sections", "plot_sections",
           "run_table_sections", "table_sections"]
