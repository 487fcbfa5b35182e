"""Through the command line: model=oracle on two reference apps, built, probed and scored under judge=rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_main import _records, _run

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]


def test_oracle_builds_and_interacts_and_leaves_judged_points_unassessed(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = _run("suite=iwebgen", "model=oracle", "judge=rules", "actor=probe", "tracking=off", "suite.limit=2",
                  f"hydra.run.dir={run_dir}", timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    records = _records(run_dir)
    assert len(records) == 2 and {r["status"] for r in records} == {"ok"}, [(r["task_id"], r["error"][:200]) for r in records]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["bsr"] == 1.0 and summary["bsr_first_pass"] == 1.0
    assert summary["ir"] > 0 and summary["ir_pooled"] > 0
    assert summary["dimensions"]["R"] == 5.0  # computed: clean reference apps keep all five points
    assert {summary["dimensions"][c] for c in "VITC"} == {None} and summary["score"] is None
    for record in records:
        dims = record["verdict"]["dimensions"]
        assert dims["rule"]["score"] == 5.0 and dims["interaction"]["score"] is None
        assert record["scores"]["ir_actions"] >= 3  # every reference app exposes its interactive modules
        trace = json.loads((run_dir / record["evidence_dir"] / "trace.json").read_text())
        assert trace["summary"]["observer"] == ["childList", "subtree", "attributes"]  # I-WebGenBench B.1
        assert all(step["screenshot_before"] and step["screenshot_after"] for step in trace["steps"])
    assert set(summary["domains"]) == {"Biology", "Chemistry"}
