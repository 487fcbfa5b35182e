"""suite=iwebgen: I-WebGenBench, interactive scientific web apps generated from paper-derived specifications.

Registered by name only (this module imports nothing): the suite, and its rubric for `judge.options.rubric`.
"""

SUITES = {"iwebgen": "runner.suites.iwebgen.suite:SUITE_ENTRY"}
RUBRICS = {"iwebgen": "runner.suites.iwebgen.rubric:IWebGenRubric"}
