"""suite=webgen: WebGen-Bench's published test.jsonl (registered by string map; this module imports nothing)."""

SUITES = {"webgen": "runner.suites.webgen.suite:SUITE_ENTRY"}
