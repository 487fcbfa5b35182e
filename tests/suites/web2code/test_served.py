"""MT-Web2Code macro (regional reconstruction, §3.3) with every model role served for real: the judge
(`judge=qwen2.5-vl-7b`: eq. 8's rubric in the box and the §3.5 out-of-box judge block by block) and the §5.1
caption model (`suite.caption=true +model@roles.caption=qwen2.5-vl-7b`), on the vLLM server (CPU build) that the
run starts, on a tiny random vision-language model, with the shipped configs' server arguments (4 images per
prompt): the two configs name the same weights and flags, so the roles share one server (runner/run/roles.py). The generator is the oracle. Micro is scored on pixels and needs no judge.

One page, two turns: every slot is scored from the served judge's schema-constrained answers, and the caption
server answered the golden crops.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.turns.evidence_folder import EvidenceFolder
from tests.support.served_runs import assert_completed, run_served
from tests.support.tiny_models import NO_VLLM_REASON, READY_TIMEOUT_S, VLLM_PYTHON, served_overrides, tiny_model_dir

pytestmark = [pytest.mark.vllm, pytest.mark.served, pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=NO_VLLM_REASON)]


@pytest.mark.timeout(READY_TIMEOUT_S * 2 + 1800)
def test_macro_with_served_judge_and_served_caption_model(tmp_path: Path) -> None:
    """On the Unigram tiny VLM (MT-Web2Code Table 3's preset runs on the BPE one), whose free-text answer is empty
    (it ends its text at once): each slot's evidence names the empty caption it was shown, with what came back."""
    model_dir = tiny_model_dir("vlm-unigram")
    run = run_served(["suite=macro", "model=oracle", "judge=qwen2.5-vl-7b", "suite.caption=true",
                      "+model@roles.caption=qwen2.5-vl-7b", "suite.limit=1", "suite.turns=2",
                      f"suite.cache_dir={tmp_path / 'cache'}", *served_overrides("judge.options.model", model_dir),
                      *served_overrides("roles.caption", model_dir)], tmp_path / "run", timeout_s=1800)
    # The caption model and the judge are one model with the same flags: one server (the caption role, which
    # runs first as the pages load, starts it under its name), which answers both roles.
    assert_completed(run, requested=2, servers=["qwen2.5-vl-7b"], listed=("judge",))
    assert run.logs_of("qwen2.5-vl-7b-instruct") == [], sorted(run.server_logs)
    for record in run.records:
        assert record["status"] == "ok", record["error"]
        verdict = record["verdict"]
        # In the box eq. 8's rubric, out of it §3.5's block ratings: both the served judge's, no SSIM fallback.
        assert verdict["summary"].startswith("[rubric]"), verdict["summary"]
        assert verdict["raw"]["outbox"]["method"] == "judge", verdict["raw"]["outbox"]["note"]
        calls = EvidenceFolder(run.run_dir / record["evidence_dir"]).read_failed_calls(judging=False)
        assert [(call["role"], call["outcome"]) for call in calls] == [("caption", "empty")], calls
        assert calls[0]["attempts"][0]["finish_reason"] == "stop" and calls[0]["attempts"][0]["text"] == ""
