"""suite=evogenui: EvoGenUI-Bench. What the package adds (runner/run/plugins.py)."""

SUITES = {"evogenui": "runner.suites.evogenui.suite:SUITE_ENTRY"}
RUBRICS = {"evogenui": "runner.suites.evogenui.rubric:EvoGenUIRubric"}
