"""Build a Model from its config, by the provider registered under its name (runner/kinds.py; the built-in
ones in runner/models/providers.py, each in its own module)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from runner.errors import ConfigError
from runner.kinds import KINDS
from runner.models.base import Model
from runner.models.cache import ResponseCache
from runner.turns.tasks import Task

__all__ = ["ConfigError", "build_model"]


def build_model(
    settings: Mapping[str, Any] | BaseModel,
    *,
    tasks: Mapping[str, Task] | Iterable[Task] | None = None,
    cache: ResponseCache | None = None,
) -> Model:
    """`settings`: a model section (a mapping, the validated ModelConfig) or its provider's settings as config
    validation parsed them (a ModelRole's, an endpoint's), which the provider takes as they are instead of parsing
    the section again. `tasks` is needed by the oracle only; `cache` is used by endpoint models whose `cache` is
    true."""
    data = settings.model_dump() if isinstance(settings, BaseModel) else dict(settings)
    provider = KINDS.find("model", str(data.get("provider")))
    if provider is None:
        raise ConfigError(f"model.provider={data.get('provider')!r} is not one of {', '.join(KINDS.names('model'))}")
    parsed = provider.settings
    return provider.factory(settings if parsed is not None and isinstance(settings, parsed) else data,
                            tasks=tasks, cache=cache)
