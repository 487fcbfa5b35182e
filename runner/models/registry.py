"""Build a Model from its config. Registration only; every provider lives in its own module."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from runner.models.base import Model
from runner.models.cache import ResponseCache
from runner.turns.tasks import Task

__all__ = ["PROVIDERS", "ConfigError", "build_model"]

PROVIDERS = ("oracle", "null", "identity", "openai", "vllm")


from runner.errors import ConfigError


def build_model(
    settings: Mapping[str, Any] | BaseModel,
    *,
    tasks: Mapping[str, Task] | Iterable[Task] | None = None,
    cache: ResponseCache | None = None,
) -> Model:
    """`tasks` is needed by the oracle only; `cache` is used by endpoint models whose `cache` is true."""
    data = settings.model_dump() if isinstance(settings, BaseModel) else dict(settings)
    provider = data.get("provider")
    # Imported on use: a run loads only the client library of the provider it calls.
    if provider == "oracle":
        from runner.models.oracle import OracleModel

        if tasks is None:
            raise ConfigError("model provider 'oracle' needs the suite's tasks (build_model(..., tasks=...))")
        return _named(OracleModel(tasks), data)
    if provider == "null":
        from runner.models.oracle import NullModel

        return _named(NullModel(), data)
    if provider == "identity":
        from runner.models.oracle import IdentityModel

        return _named(IdentityModel(), data)
    if provider == "openai":
        from runner.models.openai_provider import OpenAIModel, OpenAIModelSettings

        try:
            validated = OpenAIModelSettings.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"model {data.get('name')!r}: invalid openai settings: {exc}") from exc
        return OpenAIModel(validated, cache=cache)
    if provider == "vllm":
        from runner.models.vllm_provider import VLLMModel, VLLMModelSettings

        try:
            validated_vllm = VLLMModelSettings.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"model {data.get('name')!r}: invalid vllm settings: {exc}") from exc
        return VLLMModel(validated_vllm, cache=cache)
    raise ConfigError(f"model.provider={provider!r} is not one of {', '.join(PROVIDERS)}")


def _named(model: Model, data: dict[str, Any]) -> Model:
    """A replay model under its config's `name` (e.g. `model.name=oracle-b`: a second "model" whose records and
    FlowEval sites are told apart from the first's); without one, the provider's own name."""
    if data.get("name"):
        model.name = str(data["name"])
    return model
