"""MT-Web2Code opens no browser of its own: trajectories, observations and scoring renders use the run's
browsers, so a whole run launches at most `concurrency.browsers` of them (each when a visit first needs it)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from runner.browser.launch import BrowserPool
from runner.run.experiment import run_experiment
from runner.compose import compose as compose_config
from runner.run.validation import validate_config
from tests.conftest import REPO_ROOT
from tests.suites.web2code.w2c_pages import write_two_pages

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.parametrize("browsers", [1, 2])
def test_a_micro_run_launches_no_more_than_its_configured_browsers(tmp_path: Path, browsers: int) -> None:
    pages = write_two_pages(tmp_path / "pages")
    raw = compose_config(["suite=micro", "model=oracle", "tracking=off", "actor=none", f"suite.pages_path={pages}",
                          "suite.turns=2", f"suite.cache_dir={tmp_path / 'cache'}",  # fresh: trajectories render
                          f"concurrency.browsers={browsers}"])
    raw["project_root"] = str(REPO_ROOT)
    config = validate_config(raw)
    before = BrowserPool.launched_in_process
    asyncio.run(run_experiment(config, tmp_path / "run"))
    assert 1 <= BrowserPool.launched_in_process - before <= browsers
    records = [json.loads(line) for line in (tmp_path / "run" / "turns.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r["scores"]["score"] == pytest.approx(1.0) for r in records)
    rounds = json.loads((tmp_path / "run" / records[0]["evidence_dir"] / "generation.json").read_text())
    assert rounds["strategy"] == "single_pass" and [r["round"] for r in rounds["rounds"]] == [1]
