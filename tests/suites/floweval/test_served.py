"""FlowEval with every model role served for real: the CUA (`actor=ui-tars`, FlowEval §3.2) traces the flows on
its own vLLM server (CPU build) that the run starts, and the MLLM pairwise judge baseline (§4 "Baseline",
App. C; `python -m runner.floweval_table ... --pairwise-judge MODEL.yaml`) compares two runs' sites on its own
server, both on the tiny random vision-language model with the shipped configs' server arguments (UI-TARS'
5-image history and its limit; conf/model/qwen2.5-vl-7b.yaml's 4 images for the judge).

Run A is the oracle's site traced by UI-TARS (one site, one flow, one run, a few steps: random weights click at
random); run B the same prompt under a second model name, traced by the scripted actor (no model), so the
people's label file has two models to compare. Two servers, one after the other.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from runner.suites.floweval.pair_labels import PairwiseLabel, read_labels, write_labels
from tests.conftest import cli_env
from tests.support.served_runs import REPO_ROOT, REFUSED, assert_completed, run_served
from tests.support.tiny_models import (NO_VLLM_REASON, READY_TIMEOUT_S, VLLM_PYTHON, served_overrides, served_server,
                                       tiny_model_dir)

pytestmark = [pytest.mark.vllm, pytest.mark.served, pytest.mark.slow, pytest.mark.browser, pytest.mark.build,
              pytest.mark.sandbox, pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=NO_VLLM_REASON)]

SITE = ["suite=floweval", "model=oracle", "suite.task_ids=[shop]", "suite.limit=1", "suite.repeats=1",
        "suite.runs=1", "suite.flows=[checkout]", "suite.featurizer=pixels"]


def _pairwise_judge_settings(model_dir: Path, log_dir: Path, path: Path) -> Path:
    """conf/model/qwen2.5-vl-7b.yaml with the tiny model's weights and the CPU settings, as a MODEL.yaml."""
    settings = yaml.safe_load((REPO_ROOT / "conf" / "model" / "qwen2.5-vl-7b.yaml").read_text())
    settings["server"].update(served_server(model_dir), log_dir=str(log_dir))
    path.write_text(yaml.safe_dump(settings))
    return path


@pytest.mark.timeout(READY_TIMEOUT_S * 2 + 2400)
def test_floweval_ui_tars_traces_and_pairwise_judge_served(tmp_path: Path) -> None:
    model_dir = tiny_model_dir("vlm")
    cua = run_served([*SITE, "actor=ui-tars", "actor.options.max_steps=3",
                      *served_overrides("actor.options.model", model_dir)], tmp_path / "cua", timeout_s=1800)
    assert_completed(cua, requested=1, servers=["ui-tars-1.5-7b"])
    (record,) = cua.records
    assert record["status"] == "ok", record["error"]
    scripted = run_served([*SITE, "model.name=oracle-b", "actor=scripted"], tmp_path / "scripted", timeout_s=900)
    assert_completed(scripted, requested=1, servers=[])

    labels = tmp_path / "labels.jsonl"
    write_labels(labels, [PairwiseLabel(prompt_id="shop", model_a="oracle", model_b="oracle-b", winner="a",
                                        rater="person-1")])
    logs = tmp_path / "judge-servers"
    decided = tmp_path / "judge.jsonl"
    command = [sys.executable, "-m", "runner.floweval_table", str(cua.run_dir), str(scripted.run_dir),
               "--labels", str(labels), "--judge-labels", str(decided),
               "--pairwise-judge", str(_pairwise_judge_settings(model_dir, logs, tmp_path / "judge.yaml"))]
    result = subprocess.run(command, cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True,
                            timeout=READY_TIMEOUT_S + 900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "judge: unassessed" not in result.stderr, result.stderr[-3000:]  # decided from the served answer
    (label,) = read_labels(decided)
    assert label.rater.startswith("mllm:") and label.winner in ("a", "b", "tie")
    (log,) = [path.read_text(errors="replace") for path in logs.glob("*.log")]
    assert '/v1/chat/completions HTTP/1.1" 200' in log
    assert not [line for line in log.splitlines() if REFUSED.search(line)]
