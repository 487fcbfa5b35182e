"""The answer under scoring, in the generator's seat: the engine parses, builds and serves it as any answer."""

from __future__ import annotations

from runner.models.base import GenerationRequest, ModelBase, ModelResponse

__all__ = ["GivenAnswer"]


class GivenAnswer(ModelBase):
    """A model whose only answer is the text it was given (the caller's policy already generated it)."""

    name = "reward-answer"

    def __init__(self, text: str) -> None:
        self.text = text

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        return ModelResponse(text=self.text, usage={})
