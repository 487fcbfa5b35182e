"""`python -m runner.prepare`: one-time preparation and a self-check (runner/run/prepare.py, whose docstring gives the usage).

The command keeps its short name; the code lives with its owner."""

import runpy

if __name__ == "__main__":
    runpy.run_module("runner.run.prepare", run_name="__main__", alter_sys=True)
