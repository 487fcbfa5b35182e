"""A hosted model's price (runner/models/pricing.py): what run.plan=true bounds a run's cost with."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from runner.models.openai_provider import OpenAIModelSettings
from runner.models.pricing import ModelPrice
from runner.compose import compose as compose_config


def test_a_price_is_dollars_per_million_tokens() -> None:
    price = ModelPrice(input_per_mtok=2.5, output_per_mtok=10)
    assert price.cost(input_tokens=2_000_000, output_tokens=500_000) == pytest.approx(5 + 5)
    with pytest.raises(ValidationError):
        ModelPrice(input_per_mtok=-1, output_per_mtok=10)
    with pytest.raises(ValidationError):
        ModelPrice(input_per_mtok=1, output_per_mtok=1, cached_per_mtok=0.1)


@pytest.mark.parametrize(("config", "prices"), [
    ("gpt-5.5", (5.0, 30.0)), ("gpt-4o", (2.5, 10.0)), ("claude-sonnet-4", (3.0, 15.0)),
    ("claude-haiku-4-5-20251001", (1.0, 5.0)), ("claude-opus-4.5", (5.0, 25.0)),
])
def test_the_shipped_prices_validate(config: str, prices: tuple[float, float]) -> None:
    settings = OpenAIModelSettings.model_validate(compose_config([f"model={config}"])["model"])
    assert settings.price is not None
    assert (settings.price.input_per_mtok, settings.price.output_per_mtok) == prices
