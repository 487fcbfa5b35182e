"""What the benches share: compose a run's configuration from conf/ as the CLI does, and run it in-process."""

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
