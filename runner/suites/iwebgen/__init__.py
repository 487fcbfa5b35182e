"""suite=iwebgen: I-WebGenBench, interactive scientific web apps generated from paper-derived specifications.

Registered by name only (this module imports nothing): the suite, its rubric for `judge.options.rubric`,
the self-repair generation strategy (C.3) for `suite.generation`, and its report sections.
"""

SUITES = {"iwebgen": "runner.suites.iwebgen.suite:SUITE_ENTRY"}
RUBRICS = {"iwebgen": "runner.suites.iwebgen.rubric:IWebGenRubric"}
GENERATION_STRATEGIES = {"self_repair": "runner.suites.iwebgen.repair:SelfRepair"}
REPORT_TABLES = {"per_domain": "runner.suites.iwebgen.report:per_domain_tables"}
REPORT_PLOTS = {"bsr_vs_ir": "runner.suites.iwebgen.report:bsr_vs_ir"}
