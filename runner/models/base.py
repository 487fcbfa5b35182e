"""The Model protocol: one chat request in, one raw text answer out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class GenerationRequest:
    """What the model under test sees: public messages only (OpenAI chat format, images as data URLs)."""

    task_id: str
    turn: int
    messages: list[dict[str, Any]]
    response_format: dict[str, Any] | None = None  # JSON schema request, where supported


@dataclass
class ModelResponse:
    text: str
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    cached: bool = False
    raw: Any = None


class ProviderError(RuntimeError):
    """No usable response after retries (bucket `provider_error`)."""


class Model(Protocol):
    name: str

    async def generate(self, request: GenerationRequest) -> ModelResponse: ...

    async def aclose(self) -> None: ...
