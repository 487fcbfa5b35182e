"""What the benches share: compose a run's configuration from conf/ as the CLI does, run it in-process, and build
the smoke counter app a visit loads."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def compose_config(overrides: list[str]):  # noqa: ANN201 (runner.config.RunnerConfig, imported lazily)
    """The validated configuration `python -m runner OVERRIDES...` would run (relative paths from the repo)."""
    from runner.run.validation import compose_config as compose_validated

    return compose_validated(overrides, project_root=REPO)


def run_quietly(overrides: list[str], run_dir: Path) -> list[dict[str, Any]]:
    """Run the experiment into run_dir (console output discarded) and return its turn records."""
    from rich.console import Console

    from runner.run.experiment import run_experiment

    config = compose_config(overrides)
    asyncio.run(run_experiment(config, run_dir, console=Console(file=io.StringIO(), width=120)))
    return [json.loads(line) for line in (run_dir / "turns.jsonl").read_text().splitlines()]


async def build_smoke_counter(sandbox: Any, workspace: Path) -> Path:
    """The smoke suite's counter app (turn 1's reference files, 220 kB of React) built by `sandbox` in `workspace`;
    its dist folder."""
    from runner.suites.native import load_native_tasks

    task = next(t for t in load_native_tasks(REPO / "tasks" / "smoke", suite="smoke") if t.id == "smoke-counter")
    build = await sandbox.build(dict(task.turns[0].reference_files), workspace)
    if not build.ok or build.dist_dir is None:
        raise SystemExit(f"the counter app did not build:\n{build.log[-2000:]}")
    return build.dist_dir
