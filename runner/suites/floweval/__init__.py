"""suite=floweval: FlowEval, reference-based evaluation of generated UIs. What the package adds (runner/plugins.py)."""

SUITES = {"floweval": "runner.suites.floweval.suite:SUITE_ENTRY"}
