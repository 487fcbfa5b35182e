"""Every structured request's schema, sent to a REAL vLLM server (the CPU build, xgrammar decoding with the
runner's compact-JSON setting) serving a tiny random Llama: each answer the constrained decoder writes is
accepted by the request's own parser on the first attempt.

Random weights pick arbitrary tokens among those the grammar allows, so what this exercises is the decoder's
handling of each constraint (required keys, bounds, lengths, enums of numbers, requirement-keyed objects, the
actions' tagged union): a constraint vLLM refuses is an HTTP 400, one it ignores an answer the parser refuses.
One server for the module (tests/models/test_vllm_server.py makes the model and knows the venv).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

from runner.actors.llm import ActionAnswer, validate_action
from runner.models.registry import build_model
from runner.models.structured import ask_structured
from runner.models.vllm_provider import VLLMModel
from runner.suites.evogenui.rubric import EvoGenUIRubric
from runner.suites.floweval.pairwise import PairwiseRubric
from runner.suites.iwebgen.blocks import BlockPlan
from runner.suites.iwebgen.rubric import IWebGenRubric
from runner.suites.web2code.rubric import OutboxRubric, RegionRubric
from tests.models.test_vllm_server import _server_block, loop, pytestmark, tiny_model_dir  # noqa: F401 (marks, fixtures)

SAMPLES = 2  # answers per schema (sampled, seeded: different answers, the same on every run)


def _requests() -> list[tuple[str, Any, Callable[[Any], Any]]]:
    """(name, the validator the request sends the schema of, the parser its answer goes through)."""
    cases: list[tuple[str, Any, Callable[[Any], Any]]] = []
    for ids in (["r1", "r2"], ["initial-readout", "slider-bounds", "kelvin"]):
        cases.append((f"evogenui{ids}", EvoGenUIRubric().answer_model(ids),
                      lambda data, ids=ids: EvoGenUIRubric().parse(data, ids)))
    cases.append(("iwebgen", IWebGenRubric().answer_model([]), lambda data: IWebGenRubric().parse(data, [])))
    cases.append(("web2code-region", RegionRubric().answer_model([]), lambda data: RegionRubric().parse(data, [])))
    names = ["above", "below", "beside"]
    cases.append(("web2code-outbox", OutboxRubric().answer_model(names), lambda data: OutboxRubric().parse(data, names)))
    cases.append(("floweval-pairwise", PairwiseRubric.answer_model, PairwiseRubric().parse))
    cases.append(("actor-action", ActionAnswer, validate_action))
    cases.append(("iwebgen-block-plan", BlockPlan, BlockPlan.model_validate))
    return cases


REQUESTS = _requests()


@pytest.fixture(scope="module")
def served(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory,  # noqa: F811
           loop: asyncio.AbstractEventLoop) -> Iterator[tuple[VLLMModel, Path]]:
    log_dir = tmp_path_factory.mktemp("vllm-logs")
    model = build_model({
        "name": "tiny-structured", "provider": "vllm", "max_tokens": 3000, "temperature": 1.0, "seed": 7,
        "timeout_s": 300, "max_retries": 0, "cache": False,
        "server": _server_block(tiny_model_dir, f"tiny-structured-{uuid.uuid4().hex[:8]}", log_dir),
    })
    assert isinstance(model, VLLMModel)
    loop.run_until_complete(model.start())
    try:
        yield model, log_dir
    finally:
        loop.run_until_complete(model.aclose())


@pytest.mark.parametrize(("name", "answer", "parse"), REQUESTS, ids=[case[0] for case in REQUESTS])
def test_the_served_decoder_writes_only_answers_the_parser_accepts(
    served: tuple[VLLMModel, Path], loop: asyncio.AbstractEventLoop, name: str, answer: Any, parse: Callable
) -> None:
    model, _ = served
    for sample in range(SAMPLES):
        messages = [{"role": "user", "content": f"Answer {name} #{sample} as JSON."}]
        result = loop.run_until_complete(ask_structured(
            model, messages=messages, answer=answer, validate=parse, name="answer",
            max_attempts=1, task_id=f"{name}-{sample}",
        ))  # max_attempts=1: StructuredOutputError when the first constrained answer does not parse
        assert result.attempts == 1 and result.value is not None


def test_no_request_was_refused(served: tuple[VLLMModel, Path]) -> None:
    _, log_dir = served
    text = "\n".join(path.read_text(errors="replace") for path in log_dir.glob("*.log"))
    assert "Application startup complete" in text
    assert " 400 Bad Request" not in text and "not supported by xgrammar" not in text
