"""`python -m runner.floweval_table`: FlowEval's Table 1 (runner/suites/floweval/table_command.py, whose docstring gives the usage).

The command keeps its short name; the code lives with its owner."""

import runpy

if __name__ == "__main__":
    runpy.run_module("runner.suites.floweval.table_command", run_name="__main__", alter_sys=True)
