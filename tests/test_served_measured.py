"""A measured command of the shipped small judge, `judge=qwen2.5-vl-7b`, served for real: the runner starts the
judge's vLLM server (CPU build) on a tiny random vision-language model of the SmolVLM architecture, with the
shipped config's server arguments (4 images per prompt, its context length, decoding under the rubric's schema);
only where the weights come from and the CPU settings are overridden.

    python -m runner suite=smoke model=oracle judge=qwen2.5-vl-7b      (three 3-turn tasks, EvoGenUI P/E/A)

Every slot must end with a verdict parsed from the served model's schema-constrained answer: no `judge_error`,
no `infra`, and no request the server refused (HTTP 4xx in its log, which the run keeps under servers/).
Random weights score at random; what is checked is that every request fits the server and every answer the
schema admits is one the parser accepts. The I-WebGenBench command (`suite=iwebgen`, the five reference apps and
the 100-point judge) runs through its Table 2 preset in tests/test_presets_served.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.served_runs import assert_completed, run_served
from tests.support.tiny_models import NO_VLLM_REASON, READY_TIMEOUT_S, VLLM_PYTHON, served_overrides, tiny_model_dir

pytestmark = [pytest.mark.vllm, pytest.mark.served, pytest.mark.slow, pytest.mark.browser, pytest.mark.build,
              pytest.mark.sandbox, pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=NO_VLLM_REASON)]

JUDGE = "qwen2.5-vl-7b"
JUDGE_LOG = "qwen2.5-vl-7b-instruct"  # the server log is named after the model config's name


@pytest.fixture(scope="module")
def tiny_vlm() -> Path:
    return tiny_model_dir("vlm")


def _assert_judged_by_the_served_model(records: list[dict]) -> None:
    """Every evaluable slot's verdict came from the model (not the §4.3 gate), and says what its request held."""
    judged = [r for r in records if r["verdict"] and r["verdict"]["raw"].get("model_called", True)]
    assert judged, [r["status"] for r in records]
    for record in judged:
        raw = record["verdict"]["raw"]
        assert raw["response"] and raw["attempts"] >= 1, raw
        assert raw["evidence"], raw  # what the judge request held


@pytest.mark.timeout(READY_TIMEOUT_S + 1800)
def test_smoke_judged_by_the_served_judge(tiny_vlm: Path, tmp_path: Path) -> None:
    run = run_served(["suite=smoke", "model=oracle", f"judge={JUDGE}",
                      *served_overrides("judge.options.model", tiny_vlm)], tmp_path / "run", timeout_s=1800)
    assert_completed(run, requested=9, servers=[JUDGE_LOG], listed=("judge",))
    _assert_judged_by_the_served_model(run.records)
