SUITES = {"floweval": "runner.suites.floweval.suite:SUITE_ENTRY"}
