"""A model provider that answers with the last message it was sent, behind a configured prefix."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from runner.errors import section_settings
from runner.kinds import register_kind
from runner.models.base import GenerationRequest, ModelBase, ModelResponse
from runner.models.cache import ResponseCache
from runner.turns.tasks import Task


class EchoModelSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    provider: str
    prefix: str = ""
    temperature: float | None = None
    max_tokens: int | None = None


class EchoModel(ModelBase):
    def __init__(self, settings: EchoModelSettings) -> None:
        self.settings = settings
        self.name = settings.name

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        return ModelResponse(text=self.settings.prefix + str(request.messages[-1]["content"]))


@register_kind("model", "echo", settings=EchoModelSettings)
def echo(data: Mapping[str, Any], *, tasks: Mapping[str, Task] | Iterable[Task] | None = None,
         cache: ResponseCache | None = None) -> EchoModel:
    return EchoModel(section_settings(EchoModelSettings, dict(data), "model"))
