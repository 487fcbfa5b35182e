"""Generation strategies: single_pass makes one call and records it as one round."""

from __future__ import annotations

import asyncio

import pytest

from runner.generation import STRATEGIES, BuildCheck, SinglePass, build_strategy
from runner.models.base import ModelResponse


class NoBuilds:
    """GenerationTools for a strategy that must not build."""

    task_id = "t"
    turn = 1

    async def build(self, text: str) -> BuildCheck:
        raise AssertionError("single_pass builds nothing itself")


def test_single_pass_is_one_round_of_the_payload() -> None:
    seen: list[list[dict]] = []

    async def call(messages: list[dict]) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(text="answer", usage={"prompt_tokens": 3, "completion_tokens": 2})

    payload = [{"role": "user", "content": "build it"}]
    generation = asyncio.run(SinglePass().generate(payload, call, NoBuilds()))
    assert seen == [payload]
    assert generation.strategy == "single_pass" and [r.index for r in generation.rounds] == [1]
    assert generation.final.text == "answer" and generation.usage == {"prompt_tokens": 3, "completion_tokens": 2}
    assert generation.builds == []


def test_unknown_strategy_lists_the_choices() -> None:
    assert sorted(STRATEGIES) == ["self_repair", "single_pass"]  # self_repair: declared by runner.suites.iwebgen
    with pytest.raises(ValueError, match=r"unknown generation strategy 'nope'; choose from \['self_repair', 'single_pass'\]"):
        build_strategy("nope")


def test_a_declared_strategy_is_built_by_name() -> None:
    strategy = build_strategy("self_repair")
    assert strategy.name == "self_repair" and strategy.rounds == 5  # type: ignore[attr-defined]
