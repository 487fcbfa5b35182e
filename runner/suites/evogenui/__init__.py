"""suite=evogenui: EvoGenUI-Bench. What the package adds (runner/kinds.py)."""

SUITES = {"evogenui": "runner.suites.evogenui.suite:SUITE_ENTRY"}
RUBRICS = {"evogenui": "runner.suites.evogenui.rubric:EvoGenUIRubric"}
REPORT_TABLES = {"table2": "runner.suites.evogenui.report:table2_tables"}
REPORT_PLOTS = {
    "pass_by_turn": "runner.suites.evogenui.figures:pass_by_turn",
    "suite_difficulty": "runner.suites.evogenui.figures:suite_difficulty",
    "failure_mechanisms": "runner.suites.evogenui.figures:failure_mechanisms",
}
CONSOLE_SECTIONS = {
    "table2": "runner.suites.evogenui.report:print_table2_section",
    "slot_accounting": "runner.suites.evogenui.report:print_slot_accounting_section",
}
WEB_TEMPLATES = {"evogenui": "runner.suites.evogenui.web_template:TEMPLATE"}
ANNOTATION_CODEBOOKS = {"slot": "runner.suites.evogenui.annotation:CODEBOOK"}
