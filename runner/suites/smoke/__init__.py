"""suite=smoke: the project's quick multi-turn tasks. What the package adds (runner/kinds.py)."""

SUITES = {"smoke": "runner.suites.smoke.suite:SUITE_ENTRY"}
