"""A cut structured answer is named and never re-sent unchanged; every attempt's raw text is kept.

The model here is a scripted `Model` (a list of responses, each with its own `finish_reason`): the behaviour
under test is `ask_structured`'s, and the served proof of the same rules is tests/test_decoding_served.py.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from runner.models.base import GenerationRequest, ModelBase, ModelResponse
from runner.models.structured import (MAX_KEPT_CHARS, StructuredOutputError, TruncatedAnswer, ask_structured,
                                      failed_call_record)


class Verdict(BaseModel):
    reason: str
    score: int


class Scripted(ModelBase):
    """Answers in order; records each request it was sent."""

    name = "scripted"

    def __init__(self, *responses: ModelResponse) -> None:
        self.responses = list(responses)
        self.requests: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        self.requests.append(request)
        return self.responses.pop(0)


def cut(text: str, *, tokens: int = 64, reasoning: str = "", reasoning_tokens: int = 0) -> ModelResponse:
    usage = {"prompt_tokens": 10, "completion_tokens": tokens}
    if reasoning_tokens:
        usage["reasoning_tokens"] = reasoning_tokens
    return ModelResponse(text=text, usage=usage, finish_reason="length", reasoning=reasoning, max_tokens=tokens)


def done(text: str) -> ModelResponse:
    return ModelResponse(text=text, usage={"prompt_tokens": 10, "completion_tokens": 5}, finish_reason="stop",
                         max_tokens=64)


def ask(model: Scripted, attempts: int = 3):
    return asyncio.run(ask_structured(model, messages=[{"role": "user", "content": "judge"}], answer=Verdict,
                                      max_attempts=attempts, role="judge", name="verdict"))


LOOP = '{"reason"' + "\t" * 60


def test_a_cut_answer_is_re_asked_once_changed_then_named_truncated_with_tokens_and_cap() -> None:
    model = Scripted(cut(LOOP), cut(LOOP), done('{"reason":"x","score":1}'))
    with pytest.raises(TruncatedAnswer) as caught:
        ask(model)
    error = caught.value
    assert len(model.requests) == 2  # a third would spend the cap again: not asked, and the record says why
    first, second = (request.messages for request in model.requests)
    assert second != first and "cut off at the 64-token output limit" in second[-1]["content"]
    assert second[-2] == {"role": "assistant", "content": '{"reason"'}  # the echo, its whitespace run dropped
    assert error.cut == {"finish_reason": "length", "in": "answer", "completion_tokens": 64, "reasoning_tokens": 0,
                         "answer_tokens": 64, "max_tokens": 64}
    assert "judge answer truncated: cut at the output cap in the answer (64 of 64 tokens)" in str(error)
    assert [attempt["text"] for attempt in error.attempts] == [LOOP, LOOP]  # what the model wrote, whole
    assert error.attempts[0]["next"].startswith("asked again, changed")
    assert error.attempts[1]["next"].startswith("not asked again: a second answer was cut too")


def test_a_cut_answer_whose_changed_re_ask_validates_is_accepted_and_its_cut_attempt_kept() -> None:
    result = ask(Scripted(cut(LOOP), done('{"reason":"ok","score":4}')))
    assert result.value == Verdict(reason="ok", score=4) and result.attempts == 2
    assert [attempt["finish_reason"] for attempt in result.attempt_records] == ["length", "stop"]
    assert result.rejected == result.attempt_records[:1] and result.rejected[0]["cut"]["in"] == "answer"
    record = failed_call_record(result, role="judge", task_id="t", turn=2)
    assert record["outcome"] == "recovered" and record["attempts"][0]["text"] == LOOP


def test_one_attempt_allowed_says_why_it_was_not_asked_again() -> None:
    with pytest.raises(TruncatedAnswer) as caught:
        ask(Scripted(cut(LOOP)), attempts=1)
    assert caught.value.attempts[-1]["next"] == "not asked again: 1 attempt(s) allowed (max_attempts)"


def test_a_verdict_cut_inside_the_reasoning_is_truncated_there_with_the_reasoning_kept() -> None:
    thinking = "Let me look at the page. " * 40
    model = Scripted(cut("", tokens=128, reasoning=thinking, reasoning_tokens=128),
                     cut("", tokens=128, reasoning=thinking, reasoning_tokens=128))
    with pytest.raises(TruncatedAnswer) as caught:
        ask(model)
    assert caught.value.cut is not None and caught.value.cut["in"] == "reasoning"
    assert caught.value.cut["reasoning_tokens"] == 128 and caught.value.cut["answer_tokens"] == 0
    assert "inside the reasoning, before any answer" in str(caught.value)
    assert "Think briefly" in model.requests[1].messages[-1]["content"]
    assert caught.value.attempts[0]["reasoning"] == thinking and caught.value.attempts[0]["text"] == ""
    record = failed_call_record(caught.value, role="judge")
    assert record["outcome"] == "truncated" and record["cut"]["in"] == "reasoning"


def test_the_whitespace_bound_is_a_cut_of_its_own_and_re_asked_for_compact_json() -> None:
    stopped = ModelResponse(text=LOOP, usage={"completion_tokens": 61}, finish_reason="whitespace_run", max_tokens=8192)
    model = Scripted(stopped, done('{"reason":"","score":1}'))
    result = ask(model)
    assert result.value.score == 1
    assert "wrote whitespace between JSON tokens without end" in model.requests[1].messages[-1]["content"]
    assert result.rejected[0]["cut"]["finish_reason"] == "whitespace_run"


def test_malformed_answers_are_not_a_cut_and_keep_their_raw_text() -> None:
    with pytest.raises(StructuredOutputError) as caught:
        ask(Scripted(done("no json"), done('{"reason": 3}'), done("{")))
    error = caught.value
    assert not isinstance(error, TruncatedAnswer) and error.cut is None
    assert [attempt["text"] for attempt in error.attempts] == ["no json", '{"reason": 3}', "{"]
    record = failed_call_record(error, role="actor", step=4)
    assert record["outcome"] == "malformed" and record["step"] == 4 and record["role"] == "actor"
    json.dumps(record)  # a JSONL line of the evidence


def test_a_huge_answer_is_kept_clipped_with_its_length() -> None:
    huge = "x" * (MAX_KEPT_CHARS + 10)
    with pytest.raises(StructuredOutputError) as caught:
        ask(Scripted(done(huge)), attempts=1)
    attempt = caught.value.attempts[0]
    assert attempt["chars"] == len(huge) and attempt["text"].endswith("[10 more characters not kept]")
