"""suite=macro and suite=micro: MT-Web2Code's two tracks. What the package adds (runner/kinds.py)."""

SUITES = {
    "macro": "runner.suites.web2code.suite:MACRO_ENTRY",
    "micro": "runner.suites.web2code.suite:MICRO_ENTRY",
}
REPORT_TABLES = {"table3": "runner.suites.web2code.report:table3_tables"}
REPORT_PLOTS = {"chain_vs_independent": "runner.suites.web2code.report:chain_vs_independent"}
