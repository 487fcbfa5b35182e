"""A Model whose answers come from a script, in order (the fault injected: what the model answers); it keeps
every request it was sent, so a test can check what the model was shown."""

from __future__ import annotations

from runner.models.base import GenerationRequest, ModelBase, ModelResponse, RequestLimits


class ScriptedModel(ModelBase):
    """Implements Model."""

    def __init__(self, answers: list[str], *, name: str = "scripted") -> None:
        self.name = name
        self.answers = list(answers)
        self.requests: list[GenerationRequest] = []
        self.limits = RequestLimits()  # what its server would accept: none declared, unless a test sets some
        self.output_tokens = 0

    @property
    def request_limits(self) -> RequestLimits:
        return self.limits

    @property
    def max_output_tokens(self) -> int:
        return self.output_tokens

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text=self.answers.pop(0))

    async def aclose(self) -> None:
        return None
