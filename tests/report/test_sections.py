"""The report's suite sections are found through the suite packages' string maps and load."""

from __future__ import annotations

from runner.report.sections import console_sections, plot_sections, run_table_sections, table_sections
from runner.kinds import KINDS


def test_every_declared_section_loads_in_package_order() -> None:
    assert list(KINDS.declared("report_table")) == ["table2", "per_domain", "table3"]
    assert list(KINDS.declared("report_run_table")) == ["floweval_slots", "floweval"]
    assert all(callable(section) for section in [*table_sections(), *run_table_sections()])
    assert list(plot_sections()) == ["pass_by_turn", "suite_difficulty", "failure_mechanisms", "bsr_vs_ir",
                                     "chain_vs_independent"]
    assert list(KINDS.declared("console_section")) == ["table2", "slot_accounting"]
    assert all(callable(section) for section in console_sections())


def test_a_section_without_its_data_adds_nothing() -> None:
    from runner.report.collect import RunData

    run = RunData(label="bare", config={}, summary={"run": {"suite": "smoke"}}, records=[])
    assert [table for section in table_sections() for table in section([run])] == []
    assert [section(run) for section in run_table_sections()] == [None, None]
