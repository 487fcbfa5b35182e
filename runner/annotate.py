"""`python -m runner.annotate`: the local annotation page (runner/validity/annotate.py, whose docstring gives the usage).

The command keeps its short name; the code lives with its owner."""

import runpy

if __name__ == "__main__":
    runpy.run_module("runner.validity.annotate", run_name="__main__", alter_sys=True)
