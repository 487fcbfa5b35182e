"""`python -m runner.merge`: merge the shards of one experiment (runner/run/merge.py, whose docstring gives the usage).

The command keeps its short name; the code lives with its owner."""

import runpy

if __name__ == "__main__":
    runpy.run_module("runner.run.merge", run_name="__main__", alter_sys=True)
