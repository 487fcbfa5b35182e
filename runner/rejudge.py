"""`python -m runner.rejudge`: score a finished run's evidence with another judge (runner/run/rejudge.py, whose docstring gives the usage).

The command keeps its short name; the code lives with its owner."""

import runpy

if __name__ == "__main__":
    runpy.run_module("runner.run.rejudge", run_name="__main__", alter_sys=True)
