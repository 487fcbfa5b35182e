"""The built-in model providers. Each factory imports its client when a run builds the model, so a run loads
only the client library of the provider it calls, and validating a config only its settings model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from runner.kinds import register_kind

if TYPE_CHECKING:
    from pydantic import BaseModel

    from runner.models.base import Model
    from runner.models.cache import ResponseCache
    from runner.turns.tasks import Task

Tasks = Mapping[str, "Task"] | Iterable["Task"] | None
SettingsT = TypeVar("SettingsT", bound="BaseModel")


def _named(model: Model, data: Mapping[str, Any]) -> Model:
    """A replay model under its config's `name` (e.g. `model.name=oracle-b`: a second "model" whose records and
    FlowEval sites are told apart from the first's); without one, the provider's own name."""
    if data.get("name"):
        model.name = str(data["name"])
    return model


def _endpoint_settings(settings: type[SettingsT], data: Mapping[str, Any] | SettingsT, provider: str) -> SettingsT:
    """An endpoint provider's settings: as config validation parsed them, else parsed here from the section (a
    ConfigError naming the model and the provider)."""
    from pydantic import ValidationError

    from runner.errors import ConfigError

    if isinstance(data, settings):
        return data
    try:
        return settings.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError(f"model {data.get('name')!r}: invalid {provider} settings: {exc}") from exc


# A replay is sent the whole request, images included, so its evidence shows what a vision model is sent; it reads
# none of it. Its section takes no keys, so its kind declares the vision (runner/models/role.py).
REPLAY_VISION = True


@register_kind("model", "oracle", replays_reference=True, vision=REPLAY_VISION)
def oracle(data: Mapping[str, Any], *, tasks: Tasks = None, cache: ResponseCache | None = None) -> Model:
    from runner.errors import ConfigError
    from runner.models.oracle import OracleModel

    if tasks is None:
        raise ConfigError("model provider 'oracle' needs the suite's tasks (build_model(..., tasks=...))")
    return _named(OracleModel(tasks), data)


@register_kind("model", "null", vision=REPLAY_VISION)
def null(data: Mapping[str, Any], *, tasks: Tasks = None, cache: ResponseCache | None = None) -> Model:
    from runner.models.oracle import NullModel

    return _named(NullModel(), data)


@register_kind("model", "identity", vision=REPLAY_VISION)
def identity(data: Mapping[str, Any], *, tasks: Tasks = None, cache: ResponseCache | None = None) -> Model:
    from runner.models.oracle import IdentityModel

    return _named(IdentityModel(), data)


@register_kind("model", "openai", settings="runner.models.openai_provider:OpenAIModelSettings", traced=True,
               preflight="runner.models.preflight:check_openai_model")
def openai(data: Mapping[str, Any], *, tasks: Tasks = None, cache: ResponseCache | None = None) -> Model:
    from runner.models.openai_provider import OpenAIModel, OpenAIModelSettings

    return OpenAIModel(_endpoint_settings(OpenAIModelSettings, data, "openai"), cache=cache)


@register_kind("model", "vllm", settings="runner.models.vllm_provider:VLLMModelSettings", traced=True,
               vllm_served=True, preflight="runner.models.preflight:check_vllm_model")
def vllm(data: Mapping[str, Any], *, tasks: Tasks = None, cache: ResponseCache | None = None) -> Model:
    from runner.models.vllm_provider import VLLMModel, VLLMModelSettings

    return VLLMModel(_endpoint_settings(VLLMModelSettings, data, "vllm"), cache=cache)
