"""FlowEval: reference-based evaluation of generated UIs by interaction flows. What the package adds
(runner/kinds.py)."""

SUITES = {"floweval": "runner.suites.floweval.suite:SUITE_ENTRY"}
REPORT_RUN_TABLES = {"floweval_slots": "runner.suites.floweval.report:floweval_slots",
                     "floweval": "runner.suites.floweval.report:floweval_table"}
WEB_TEMPLATES = {"floweval": "runner.suites.floweval.web_template:TEMPLATE"}
