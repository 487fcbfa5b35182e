"""The presets end to end whose roles need no served model: MT-Web2Code Table 3 micro scores by pixels, so the
oracle generator alone runs it (the served presets: tests/test_presets_served.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_presets_served import RUN_S, records_of, run_preset

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]


@pytest.mark.timeout(RUN_S)
def test_web2code_table3_micro_three_runs(tmp_path: Path) -> None:
    run = run_preset(tmp_path, "web2code-table3-micro", f"suite.cache_dir={tmp_path / 'cache'}")
    assert run.returncode == 0, run.stderr[-4000:]
    for index in range(3):  # Table 3: three independent runs, five turns each
        records = records_of(run.run_dir / f"repeat-{index}")
        assert sorted(r["turn"] for r in records) == [1, 2, 3, 4, 5]
        assert all(r["status"] == "ok" for r in records), [r["error"] for r in records]
    report = json.loads((run.run_dir / "repeats.json").read_text())
    assert report["repeats"] == 3 and report["figures"]
