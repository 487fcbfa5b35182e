"""A Model whose answers come from a script, in order (the fault injected: what the model answers); it keeps
every request it was sent, so a test can check what the model was shown."""

from __future__ import annotations

from runner.models.base import GenerationRequest, ModelResponse


class ScriptedModel:
    """Implements Model."""

    def __init__(self, answers: list[str], *, name: str = "scripted") -> None:
        self.name = name
        self.answers = list(answers)
        self.requests: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text=self.answers.pop(0))

    async def aclose(self) -> None:
        return None
