"""I-WebGenBench: interactive scientific web applications generated from specifications."""

GENERATION_STRATEGIES = {"self_repair": "runner.suites.iwebgen.repair:SelfRepair"}
