"""Through the command line: model=oracle on two reference apps, built, probed and scored under judge=rules;
then the same frozen packets re-judged by an LLM judge whose model answers from a script (the fault injected:
its answers), so the 100-point score is computed from the probe's screenshots without browsing again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fault_server import FaultServer, completion
from tests.test_main import _records, _run
from tests.run.test_rejudge import _cli

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.build, pytest.mark.sandbox]

ANSWER = {"topic": {"score": 13, "reason": "on topic"}, "visual": {"score": 24, "reason": "tidy"},
          "interaction": {"score": 35, "reason": "charts follow"}, "clarity": {"score": 8, "reason": "labelled"}}


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("iwebgen") / "run"
    result = _run("suite=iwebgen", "model=oracle", "judge=rules", "actor=probe", "tracking=off", "suite.limit=2",
                  f"hydra.run.dir={run_dir}", timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return run_dir


def test_oracle_builds_and_interacts_and_leaves_judged_points_unassessed(oracle_run: Path) -> None:
    records = _records(oracle_run)
    assert len(records) == 2 and {r["status"] for r in records} == {"ok"}, [(r["task_id"], r["error"][:200]) for r in records]
    summary = json.loads((oracle_run / "summary.json").read_text())
    assert summary["bsr"] == 1.0 and summary["bsr_first_pass"] == 1.0
    assert summary["ir"] > 0 and summary["ir_pooled"] > 0
    assert summary["dimensions"]["R"] == 5.0  # computed: clean reference apps keep all five points
    assert {summary["dimensions"][c] for c in "VITC"} == {None} and summary["score"] is None
    assert set(summary["domains"]) == {"Biology", "Chemistry"}
    for record in records:
        dims = record["verdict"]["dimensions"]
        assert dims["rule"]["score"] == 5.0 and dims["interaction"]["score"] is None
        assert record["scores"]["ir_actions"] >= 3  # every reference app exposes its interactive modules
        trace = json.loads((oracle_run / record["evidence_dir"] / "trace.json").read_text())
        assert trace["summary"]["observer"] == ["childList", "subtree", "attributes"]  # I-WebGenBench B.1
        assert all(step["screenshot_before"] and step["screenshot_after"] for step in trace["steps"])
    # §5: the structure of each app's source and the theme of its rendered background (the reference apps are light).
    apps = summary["structure"]["apps"]
    assert len(apps) == 2 and all(app["state_declarations"] >= 3 and app["click_handlers"] >= 1 for app in apps)
    assert [app["theme"] for app in apps] == ["light", "light"]
    assert sum(row["apps"] for row in summary["structure"]["table4_state"]) == 2


def test_llm_judge_scores_the_frozen_probe_screenshots(oracle_run: Path, tmp_path: Path) -> None:
    images: list[int] = []

    def answer(messages: list[dict]) -> tuple[int, str]:
        images.append(sum(1 for part in messages[0]["content"] if part.get("type") == "image_url"))
        return 200, completion(json.dumps(ANSWER))

    out = tmp_path / "rejudged"
    with FaultServer(answer) as server:
        result = _cli("runner.rejudge", str(oracle_run), "judge=local-llm", f"judge.options.model.base_url={server.base_url}",
                      "judge.options.model.limits.images_per_prompt=32",  # every frozen screenshot, none fitted
                      "tracking=off", f"hydra.run.dir={out}")
    assert result.returncode == 0, result.stderr[-3000:]
    probed = [len(json.loads((oracle_run / r["evidence_dir"] / "trace.json").read_text())["steps"])
              for r in _records(oracle_run)]
    assert sorted(images) == sorted(1 + 2 * min(n, 12) for n in probed)  # load view + before/after per action
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dimensions"] == {"V": 24.0, "I": 35.0, "T": 13.0, "C": 8.0, "R": 5.0}
    assert summary["score"] == 85.0 and summary["bsr"] == 1.0
