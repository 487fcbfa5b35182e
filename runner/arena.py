"""`python -m runner.arena`: FlowEval's arena page (runner/suites/floweval/arena/command.py, whose docstring gives the usage).

The command keeps its short name; the code lives with its owner."""

import runpy

if __name__ == "__main__":
    runpy.run_module("runner.suites.floweval.arena.command", run_name="__main__", alter_sys=True)
