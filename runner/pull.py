"""`python -m runner.pull`: download pinned weights for offline runs (runner/run/pull.py, whose docstring gives the usage).

The command keeps its short name; the code lives with its owner."""

import runpy

if __name__ == "__main__":
    runpy.run_module("runner.run.pull", run_name="__main__", alter_sys=True)
