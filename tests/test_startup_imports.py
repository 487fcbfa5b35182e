"""A runner start imports no heavy optional library: every CLI call (and every test that spawns one) pays for
what the entry point imports, and torch alone costs seconds."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO_ROOT

HEAVY = ("torch", "sklearn", "ot", "sentence_transformers", "transformers", "statsmodels", "pypdf")


def test_the_entry_points_import_no_heavy_library() -> None:
    code = ("import sys, runner.__main__, runner.run.experiment, runner.rejudge, runner.suites.registry; "
            f"print(sorted(name for name in {HEAVY!r} if name in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]", f"imported at start-up: {result.stdout.strip()}"
