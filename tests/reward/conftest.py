"""One full smoke run shared by the API and HTTP tests: the answers and the scores the service must reproduce."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.reward.runs import full_run

# The smoke suite's counter task (three chained turns) under the rules judge's live checks.
SMOKE = ("suite=smoke", "suite.task_ids=[smoke-counter]", "judge=rules", "actor=none", "browser.memory_mb=1024")


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    run_dir = tmp_path_factory.mktemp("reward-smoke") / "run"
    return run_dir, full_run(run_dir, *SMOKE, "model=oracle")
