"""`python -m runner.specgen`: an I-WebGenBench specification drafted from a paper (runner/suites/iwebgen/specgen_command.py, whose docstring gives the usage).

The command keeps its short name; the code lives with its owner."""

import runpy

if __name__ == "__main__":
    runpy.run_module("runner.suites.iwebgen.specgen_command", run_name="__main__", alter_sys=True)
