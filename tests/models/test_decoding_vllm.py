"""Structured answers that cannot loop or vanish, on the tiny VLM that loops (tests/support/tiny_vlm_unigram.py),
served by the CPU vLLM build.

Where JSON admits whitespace between tokens this model writes `{"reason"` and then tabs until the output cap (the
failure public reports name for Gemma 4 31B, Qwen3.5-9B and Mistral 7B). Proved here on real servers:

- the loop itself, on a server started without the compact-JSON setting and read whole;
- such a server reached as an endpoint the runner does not set up (the whitespace bound streams the answer and
  stops it after 64 characters; the call is named truncated, re-asked once changed, and keeps what was written);
- Kimi-K2.6's shipped server flags (`judge=kimi`: kimi_k2 reasoning and tool parsers, the runner's compact JSON):
  no loop; the reasoning and the answer counted apart, the reasoning ended by the budget the config gives it; and
  a verdict cut inside the reasoning named `truncated`, with where it was cut, its tokens and the cap.

A model that keeps thinking is made with vLLM's `min_tokens` (end of text is masked until then): the tiny model's
own first choice is to stop at once, a real thinking model's is to think.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from runner.judges.base import JudgeTruncated, structured_judge_error
from runner.models.base import GenerationRequest
from runner.models.openai_provider import OpenAIModel
from runner.models.registry import build_model
from runner.models.structured import TruncatedAnswer, ask_structured
from runner.models.vllm_provider import VLLMModel
from runner.models.whitespace_guard import WhitespaceRun
from runner.suites.evogenui.rubric import EvoGenUIRubric
from tests.support.tiny_models import NO_VLLM_REASON, VLLM_PYTHON, served_server, tiny_model_dir

pytestmark = [pytest.mark.vllm, pytest.mark.served, pytest.mark.slow,
              pytest.mark.skipif(not VLLM_PYTHON.exists(), reason=NO_VLLM_REASON)]

REPO_ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [{"role": "system", "content": "You evaluate generated interfaces."},
            {"role": "user", "content": "Judge the page. Answer as JSON."}]
REQUIREMENTS = ["r1", "r2"]


class Verdict(BaseModel):
    reason: str
    score: int


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    event_loop = asyncio.new_event_loop()
    yield event_loop
    event_loop.close()


def _served(loop: asyncio.AbstractEventLoop, settings: dict[str, Any]) -> VLLMModel:
    model = build_model(settings)
    assert isinstance(model, VLLMModel)
    loop.run_until_complete(model.start())
    return model


@pytest.fixture(scope="module")
def loose(loop: asyncio.AbstractEventLoop, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMModel]:
    """The looping model on a server whose structured output admits whitespace (vLLM's default)."""
    server = {**served_server(tiny_model_dir("vlm-unigram")), "max_model_len": 16384,
              "structured_outputs": {"backend": "xgrammar"}, "log_dir": str(tmp_path_factory.mktemp("loose"))}
    model = _served(loop, {"name": "tiny-loose", "provider": "vllm", "temperature": 0.0, "max_tokens": 512,
                           "max_retries": 0, "cache": False, "server": server})
    yield model
    loop.run_until_complete(model.aclose())


@pytest.fixture(scope="module")
def kimi(loop: asyncio.AbstractEventLoop, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMModel]:
    """judge=kimi's model block as shipped (reasoning budget, server flags), its weights the looping tiny model."""
    settings = yaml.safe_load((REPO_ROOT / "conf" / "judge" / "kimi.yaml").read_text())["options"]["model"]
    settings["server"].update(served_server(tiny_model_dir("vlm-unigram")), tensor_parallel_size=1,
                              max_model_len=32768, log_dir=str(tmp_path_factory.mktemp("kimi")))
    assert settings["server"]["reasoning_parser"] == settings["server"]["tool_call_parser"] == "kimi_k2"
    assert settings["max_tokens"] == 8192 and settings["reasoning_budget_tokens"] == 16384
    model = _served(loop, settings)
    yield model
    loop.run_until_complete(model.aclose())


def _client(model: VLLMModel, **settings: Any) -> OpenAIModel:
    """Another client of `model`'s running server, with its own generation settings."""
    assert model.server.base_url is not None
    merged = model.settings.model_copy(update=settings)
    return OpenAIModel(merged.openai_settings(model.server.base_url).model_copy(update=settings))


def test_the_model_loops_on_json_whitespace_where_the_grammar_admits_it(loose: VLLMModel,
                                                                        loop: asyncio.AbstractEventLoop) -> None:
    reader = _client(loose, whitespace_run_limit=None, max_tokens=256)
    request = GenerationRequest("loop", 1, MESSAGES, response_format={"type": "json_schema", "json_schema": {
        "name": "v", "schema": {"type": "object", "properties": {"reason": {"type": "string"},
                                                               "score": {"type": "integer"}},
                                "required": ["reason", "score"], "additionalProperties": False}}})
    response = loop.run_until_complete(reader.generate(request))
    loop.run_until_complete(reader.aclose())
    assert response.finish_reason == "length" and response.usage["completion_tokens"] == 256
    assert response.text.startswith('{"reason"') and response.text[len('{"reason"'):].strip("\t") == ""


def test_an_endpoint_the_runner_does_not_set_up_is_bounded_and_named(loose: VLLMModel,
                                                                     loop: asyncio.AbstractEventLoop) -> None:
    assert not loose.settings.writes_compact_json  # so its answers are streamed under the bound
    with pytest.raises(TruncatedAnswer) as caught:
        loop.run_until_complete(ask_structured(loose, messages=MESSAGES, answer=Verdict, role="judge"))
    error = caught.value
    assert [attempt["finish_reason"] for attempt in error.attempts] == ["whitespace_run", "whitespace_run"]
    assert error.attempts[0]["next"].startswith("asked again, changed")  # never re-sent unchanged
    assert error.attempts[1]["next"].startswith("not asked again")  # and the record says why it stopped
    for attempt in error.attempts:  # what the model wrote, kept; a few dozen tokens, not the 512 cap
        assert attempt["text"].startswith('{"reason"') and attempt["text"].endswith("\t" * 65)
        assert attempt["usage"]["completion_tokens"] < 128
    assert error.cut is not None and error.cut["finish_reason"] == "whitespace_run"


def test_kimis_shipped_flags_decode_compact_json_without_a_loop(kimi: VLLMModel,
                                                                loop: asyncio.AbstractEventLoop) -> None:
    assert kimi.settings.writes_compact_json
    answerer = _client(kimi, reasoning_budget_tokens=None, extra_body={"chat_template_kwargs": {"thinking": False}})
    result = loop.run_until_complete(ask_structured(
        answerer, messages=MESSAGES, answer=EvoGenUIRubric().answer_model(REQUIREMENTS),
        validate=lambda data: EvoGenUIRubric().parse(data, REQUIREMENTS), role="judge", max_attempts=1))
    loop.run_until_complete(answerer.aclose())
    assert result.attempts == 1 and result.attempt_records[0]["finish_reason"] == "stop"
    guard = WhitespaceRun(1)
    guard.feed(result.text)
    assert guard.longest == 0, result.text  # not one whitespace character between JSON tokens


def test_the_reasoning_budget_ends_the_thinking_and_both_are_counted_apart(kimi: VLLMModel,
                                                                          loop: asyncio.AbstractEventLoop) -> None:
    thinker = _client(kimi, reasoning_budget_tokens=8,
                      extra_body={"chat_template_kwargs": {"thinking": True}, "min_tokens": 12})
    request = GenerationRequest("think", 1, MESSAGES, response_format={"type": "json_schema", "json_schema": {
        "name": "v", "schema": {"type": "object", "properties": {"reason": {"type": "string"},
                                                               "score": {"type": "integer"}},
                                "required": ["reason", "score"], "additionalProperties": False}}})
    response = loop.run_until_complete(thinker.generate(request))
    loop.run_until_complete(thinker.aclose())
    assert response.finish_reason == "stop" and Verdict.model_validate_json(response.text)
    assert response.reasoning and response.usage["reasoning_tokens"] == 8  # the budget, spent, then the answer
    assert response.usage["completion_tokens"] > response.usage["reasoning_tokens"]
    assert response.max_tokens == 8192 + 8  # the answer keeps App. D.1's 8,192 beside the budget


def test_a_verdict_cut_inside_the_reasoning_is_truncated_not_judge_error(kimi: VLLMModel,
                                                                         loop: asyncio.AbstractEventLoop) -> None:
    cap = 48
    thinker = _client(kimi, reasoning_budget_tokens=None, max_tokens=cap,
                      extra_body={"chat_template_kwargs": {"thinking": True}, "min_tokens": cap})
    with pytest.raises(TruncatedAnswer) as caught:
        loop.run_until_complete(ask_structured(
            thinker, messages=MESSAGES, answer=EvoGenUIRubric().answer_model(REQUIREMENTS),
            validate=lambda data: EvoGenUIRubric().parse(data, REQUIREMENTS), role="judge"))
    loop.run_until_complete(thinker.aclose())
    error = caught.value
    assert error.cut == {"finish_reason": "length", "in": "reasoning", "completion_tokens": cap,
                         "reasoning_tokens": cap, "answer_tokens": 0, "max_tokens": cap}
    assert len(error.attempts) == 2 and error.attempts[0]["reasoning"] and error.attempts[0]["text"] == ""
    judged = structured_judge_error(error, judge="kimi")
    assert isinstance(judged, JudgeTruncated) and judged.cut["role"] == "judge" and judged.cut["in"] == "reasoning"


def test_the_judge_names_a_looping_verdict_truncated_and_its_evidence_keeps_what_was_written(
        loose: VLLMModel, loop: asyncio.AbstractEventLoop, tmp_path: Path) -> None:
    """The LLM judge on the looping model behind an endpoint the runner does not set up: `truncated` (not
    judge_error), and the slot's judge_failed_calls.jsonl holds each attempt's raw text, as the viewer shows it."""
    from runner.judges.llm import LLMJudge
    from runner.judges.llm_settings import LLMJudgeSettings
    from runner.turns.evidence_folder import EvidenceFolder
    from tests.judges.test_llm import make_input

    judge = LLMJudge(LLMJudgeSettings(model={"name": "unused", "provider": "openai", "model": "m",
                                             "base_url": "http://127.0.0.1:9/v1", "vision": True}), model=loose)
    judge_input = make_input(tmp_path / "slot")
    with pytest.raises(JudgeTruncated) as caught:
        loop.run_until_complete(judge.score(judge_input))
    assert caught.value.cut["role"] == "judge" and caught.value.cut["finish_reason"] == "whitespace_run"
    [call] = EvidenceFolder(tmp_path / "slot").read_failed_calls(judging=True)
    assert call["outcome"] == "truncated" and call["role"] == "judge" and call["model"] == "tiny-loose"
    for attempt in call["attempts"]:
        assert attempt["text"].startswith('{"') and attempt["text"].endswith("\t" * 65)
