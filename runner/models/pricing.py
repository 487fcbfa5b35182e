"""What a hosted model's tokens cost, as its config states it (`price:`), for the cost bound of `run.plan=true`
(runner/run/plan.py). Prices change: each config that carries one says in a comment where and when it was read."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ModelPrice"]


class ModelPrice(BaseModel):
    """US dollars per million tokens, as the provider's price list gives them (standard tier, no batch or cache
    discount: a bound, never an estimate below it)."""

    model_config = ConfigDict(extra="forbid")

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)

    def cost(self, *, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000
