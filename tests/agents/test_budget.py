"""A slot's budget as the proxy spends it: which part refuses the next call first, and what is said of it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from runner.agents.budget import AgentBudget, BudgetMeter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_part_refuses_once_it_is_spent_and_the_first_one_is_kept() -> None:
    clock = Clock()
    meter = BudgetMeter(AgentBudget(steps=3, tokens=100, wall_clock_s=10), clock=clock)
    assert meter.refusal() is None and meter.tokens_left == 100 and meter.seconds_left == 10
    meter.spend({"prompt_tokens": 60, "completion_tokens": 45})
    assert meter.refusal() == "tokens" and meter.tokens_left == 0
    meter.spend({})
    meter.spend({})
    clock.now += 11
    assert meter.refusal() == "tokens"  # the first part spent is what stopped it
    assert meter.describe("steps") == "steps: 3 of 3"


@pytest.mark.parametrize("spend, advance, part", [(2, 0, "steps"), (0, 5.0, "wall_clock")])
def test_steps_and_wall_clock(spend: int, advance: float, part: str) -> None:
    clock = Clock()
    meter = BudgetMeter(AgentBudget(steps=2, wall_clock_s=5), clock=clock)
    for _ in range(spend):
        meter.spend({"prompt_tokens": 1})
    clock.now += advance
    assert meter.refusal() == part
    assert meter.summary()["steps"] == spend


def test_a_budget_is_positive() -> None:
    for field, value in (("steps", 0), ("tokens", 0), ("wall_clock_s", 0)):
        with pytest.raises(ValidationError, match=field):
            AgentBudget(**{field: value})
