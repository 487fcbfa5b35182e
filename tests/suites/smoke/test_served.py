"""suite=smoke with every model role served for real: the LLM judge (`judge=qwen2.5-vl-7b`) and the LLM actor
(`actor=llm`, EvoGenUI-Bench §4.1's blind browser agent) each on its own vLLM server (CPU build) that the run
starts, both on the tiny random vision-language model. The actor's shipped config points at an endpoint of the
user's; here it is `provider: vllm` with the shipped judges' server arguments (4 images per prompt, their
context length), as docs/llm-judge.md describes.

Each slot's actor steps are the served model's schema-constrained actions (random weights: their aim is
random); its verdict is the served judge's. One run, one task (three turns), two servers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.served_runs import assert_completed, run_served
from tests.support.tiny_models import NO_VLLM_REASON, READY_TIMEOUT_S, VLLM_PYTHON, served_overrides, tiny_model_dir

pytestmark = [pytest.mark.vllm, pytest.mark.served, pytest.mark.slow, pytest.mark.browser, pytest.mark.build,
              pytest.mark.sandbox, pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=NO_VLLM_REASON)]

ACTOR_LOG = "local-actor"  # conf/actor/llm.yaml's model name
JUDGE_LOG = "qwen2.5-vl-7b-instruct"


def actor_served_by_vllm(model_dir: Path) -> list[str]:
    """conf/actor/llm.yaml's model as `provider: vllm` (no endpoint URL: the run starts the server)."""
    key = "actor.options.model"
    return ["actor=llm", f"++{key}.provider=vllm", f"~{key}.base_url", f"~{key}.model",
            f"++{key}.server.limit_mm_per_prompt={{image:4}}", f"++{key}.server.max_model_len=32768",
            *served_overrides(key, model_dir)]


@pytest.mark.timeout(READY_TIMEOUT_S * 2 + 1800)
def test_smoke_with_served_judge_and_served_llm_actor(tmp_path: Path) -> None:
    model_dir = tiny_model_dir("vlm")
    run = run_served(["suite=smoke", "model=oracle", "judge=qwen2.5-vl-7b", "suite.limit=1",
                      "actor.options.max_steps=3", *actor_served_by_vllm(model_dir),
                      *served_overrides("judge.options.model", model_dir)], tmp_path / "run", timeout_s=1800)
    assert_completed(run, requested=3, servers=[JUDGE_LOG, ACTOR_LOG], listed=("judge", "actor"))
    for record in run.records:
        assert record["status"] == "ok", record["error"]
        trace = json.loads((run.run_dir / record["evidence_dir"] / "trace.json").read_text())
        assert trace["actor"] == "llm" and trace["steps"], trace["summary"]  # the model's actions, executed
        assert trace["summary"]["stop_reason"] != "the model returned no valid action", trace["summary"]
        assert not trace["summary"]["stop_reason"].startswith("actor model failed"), trace["summary"]
        raw = record["verdict"]["raw"]
        assert raw["response"] and raw["evidence"]["trace_steps"] == len(trace["steps"]), raw
