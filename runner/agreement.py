"""`python -m runner.agreement`: how well a run's judge agrees with people (runner/validity/agreement.py, whose docstring gives the usage).

The command keeps its short name; the code lives with its owner."""

import runpy

if __name__ == "__main__":
    runpy.run_module("runner.validity.agreement", run_name="__main__", alter_sys=True)
